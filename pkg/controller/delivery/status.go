package delivery

import (
	"encoding/json"
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// applyReport writes into cluster what the agent of consumer reported of its bundle (reported is false
// while nothing came back yet).
func applyReport(cluster *v1alpha1.HCPCluster, st source.BundleStatus, reported bool, consumer string) {
	switch {
	case !reported || st.Status == nil:
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "Pending",
			fmt.Sprintf("waiting for the agent of %s to report generation %d", consumer, cluster.Generation))
		return
	case st.Generation < cluster.Generation:
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "Pending",
			fmt.Sprintf("the agent of %s reports generation %d; generation %d is on its way", consumer, st.Generation, cluster.Generation))
	case !meta.IsStatusConditionTrue(st.Status.Conditions, protocol.ConditionApplied):
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "ApplyFailed",
			"the management cluster refused the cluster's manifests: "+clusterstatus.Refusals(st.Status))
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		return
	default:
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionTrue, "Applied",
			fmt.Sprintf("generation %d is applied on %s", st.Generation, consumer))
		cluster.Status.ObservedGeneration = st.Generation
	}

	values := clusterstatus.Feedback(st.Status, "HostedCluster")
	for _, c := range []struct{ condition, status, message string }{
		{v1alpha1.ConditionAvailable, render.FeedbackAvailable, render.FeedbackAvailableMessage},
		{v1alpha1.ConditionProgressing, render.FeedbackProgressing, render.FeedbackProgressingMessage},
		{v1alpha1.ConditionDegraded, render.FeedbackDegraded, render.FeedbackDegradedMessage},
	} {
		if status := values[c.status]; status != "" {
			message := values[c.message]
			clusterstatus.SetCondition(cluster, c.condition, metav1.ConditionStatus(status), "HostedCluster"+c.condition, message)
		}
	}
	history := versionHistory(values[render.FeedbackControlPlaneVersionHistory])
	if len(history) == 0 {
		history = versionHistory(values[render.FeedbackVersionHistory])
	}
	if len(history) > 0 {
		cluster.Status.Version.History = history
		cluster.Status.Version.Actual = ""
		for _, h := range history {
			if h.State == "Completed" {
				cluster.Status.Version.Actual = h.Version
				break
			}
		}
	}
	if host := values[render.FeedbackAPIHost]; host != "" {
		port := values[render.FeedbackAPIPort]
		if port == "" {
			port = "443"
		}
		cluster.Status.API.URL = "https://" + net.JoinHostPort(host, port)
	}

	if cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateDeleting {
		return
	}
	succeeded := st.Generation == cluster.Generation &&
		meta.IsStatusConditionTrue(cluster.Status.Conditions, v1alpha1.ConditionAvailable) &&
		cluster.Status.Version.Actual != "" && cluster.Status.Version.Actual == cluster.Status.Version.Desired &&
		cluster.Status.API.URL != ""
	switch {
	case succeeded:
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	case cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateAccepted || cluster.Status.ProvisioningState == "":
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateProvisioning
	}
}

// versionHistory decodes a HyperShift version history, newest first.
func versionHistory(raw string) []v1alpha1.VersionHistoryEntry {
	if raw == "" {
		return nil
	}
	var entries []struct {
		Version        string       `json:"version"`
		State          string       `json:"state"`
		StartedTime    *metav1.Time `json:"startedTime"`
		CompletionTime *metav1.Time `json:"completionTime"`
	}
	if err := json.Unmarshal([]byte(raw), &entries); err != nil {
		return nil
	}
	history := make([]v1alpha1.VersionHistoryEntry, 0, len(entries))
	for _, e := range entries {
		history = append(history, v1alpha1.VersionHistoryEntry{Version: e.Version, State: e.State, StartedTime: e.StartedTime, CompletionTime: e.CompletionTime})
	}
	return history
}
