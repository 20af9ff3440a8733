package hcpcluster

import (
	"encoding/json"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// applyReport writes into cluster what the agent of consumer reported of its bundle (reported is false
// while nothing came back yet), with the addresses the service settings o give the cluster. It returns
// when to look again without a new report: while the agent retries, when its time is up.
func applyReport(cluster *v1alpha1.HCPCluster, st source.BundleStatus, reported bool, consumer string, o render.Options) time.Duration {
	delivered := bundle.Outcome(st, reported, cluster.Generation, consumer, "the cluster's manifests")
	clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, delivered.Status, delivered.Reason, delivered.Message)
	switch {
	case delivered.Failed:
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		return 0
	case !delivered.Feedback:
		return delivered.RecheckAfter
	case delivered.Reason == "Applied":
		cluster.Status.ObservedGeneration = st.Generation
	}

	values := bundle.Feedback(st.Status, "HostedCluster")
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
	// HyperShift reports neither the console's address nor the OIDC issuer (clusters accepted before the
	// registry wrote them get them here).
	if a, err := render.ClusterAddresses(cluster, o); err == nil {
		cluster.Status.Console.URL, cluster.Status.IssuerURL = a.Console, a.Issuer
	}
	if host := values[render.FeedbackAPIHost]; host != "" {
		port := values[render.FeedbackAPIPort]
		if port == "" {
			port = "443"
		}
		cluster.Status.API.URL = "https://" + net.JoinHostPort(host, port)
	}
	// The load balancers serving the API's and the applications' names; their DNS records follow them.
	services := bundle.Feedback(st.Status, "Service")
	if address := services[render.FeedbackAPIAddress]; validation.IsIPv4Address(address) {
		cluster.Status.API.Address = address
	}
	if address := services[render.FeedbackAppsAddress]; validation.IsIPv4Address(address) {
		cluster.Status.Console.Address = address
	}

	// HyperShift has to have looked at the HostedCluster as applied: a change of the cluster's settings
	// leaves it Available, on its version, the moment it is applied.
	succeeded := st.Generation == cluster.Generation && bundle.Observed(values) &&
		meta.IsStatusConditionTrue(cluster.Status.Conditions, v1alpha1.ConditionAvailable) &&
		cluster.Status.Version.Actual != "" && cluster.Status.Version.Actual == cluster.Status.Version.Desired &&
		cluster.Status.API.URL != "" &&
		// A service that provisions Azure says the cluster's names resolve before it is Succeeded.
		!meta.IsStatusConditionFalse(cluster.Status.Conditions, v1alpha1.ConditionDNSReady)
	bundle.Progress(&cluster.Status.ProvisioningState, succeeded)
	return 0
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
