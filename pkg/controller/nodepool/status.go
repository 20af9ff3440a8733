package nodepool

import (
	"context"
	"fmt"
	"strconv"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// updateStatus writes the status mutate makes of a copy of np, unless it changes nothing. A conflict comes
// back as an error: the queue retries with the informer's newer copy.
func updateStatus(ctx context.Context, client versioned.Interface, np *v1alpha1.NodePool, mutate func(*v1alpha1.NodePool)) (*v1alpha1.NodePool, error) {
	updated := np.DeepCopy()
	mutate(updated)
	if apiequality.Semantic.DeepEqual(updated.Status, np.Status) {
		return np, nil
	}
	return client.HcpV1alpha1().NodePools(np.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: clusterstatus.FieldManager(ctx)})
}

// setCondition sets a condition of np for its current generation.
func setCondition(np *v1alpha1.NodePool, conditionType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&np.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: np.Generation,
	})
}

// reasonReported is the reason of Ready once HyperShift reported the pool's nodes ready: from then on
// Ready is what HyperShift reports.
const reasonReported = "NodePool" + v1alpha1.ConditionReady

// setWaiting sets Ready False with what the pool waits for, unless the pool's bundle was applied before:
// then Ready tells of its nodes, and Delivered of the new generation.
func setWaiting(np *v1alpha1.NodePool, reason, message string) {
	if r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady); r != nil &&
		(r.Reason == reasonReported || r.Reason == v1alpha1.NodePoolReasonProvisioning) {
		return
	}
	setCondition(np, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, message)
}

// applyReport writes into np what the agent of consumer reported of its bundle (reported is false while
// nothing came back yet). desired is the version the pool's nodes are to run.
func applyReport(np *v1alpha1.NodePool, st source.BundleStatus, reported bool, consumer, desired string) {
	switch {
	case !reported || st.Status == nil:
		message := fmt.Sprintf("waiting for the agent of %s to report generation %d", consumer, np.Generation)
		setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "Pending", message)
		setWaiting(np, v1alpha1.NodePoolReasonWaitingForDelivery, message)
		return
	case st.Generation < np.Generation:
		message := fmt.Sprintf("the agent of %s reports generation %d; generation %d is on its way", consumer, st.Generation, np.Generation)
		setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "Pending", message)
		setWaiting(np, v1alpha1.NodePoolReasonWaitingForDelivery, message)
	case !meta.IsStatusConditionTrue(st.Status.Conditions, protocol.ConditionApplied):
		message := "the management cluster refused the node pool's manifests: " + clusterstatus.Refusals(st.Status)
		setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "ApplyFailed", message)
		setWaiting(np, "ApplyFailed", message)
		np.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		return
	default:
		setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionTrue, "Applied",
			fmt.Sprintf("generation %d is applied on %s", st.Generation, consumer))
		np.Status.ObservedGeneration = st.Generation
	}

	values := clusterstatus.Feedback(st.Status, "NodePool")
	setReady(np, st, consumer, values)
	if n, err := strconv.ParseInt(values[render.FeedbackReplicas], 10, 32); err == nil && n >= 0 {
		np.Status.Replicas = int32(n)
	}
	if v := values[render.FeedbackVersion]; v != "" {
		np.Status.Version = v
	}

	updatingVersion := values[render.FeedbackUpdatingVersion] == string(metav1.ConditionTrue)
	updatingConfig := values[render.FeedbackUpdatingConfig] == string(metav1.ConditionTrue)
	ready := meta.IsStatusConditionTrue(np.Status.Conditions, v1alpha1.ConditionReady)
	done := st.Generation == np.Generation && ready && np.Status.Version == desired && !updatingVersion && !updatingConfig
	switch {
	case done:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "AsDesired",
			fmt.Sprintf("the nodes are ready at %s", desired))
	case updatingVersion:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "UpdatingVersion",
			fmt.Sprintf("the nodes move from %s to %s", np.Status.Version, desired))
	case updatingConfig:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "UpdatingConfig", "the nodes take the new configuration")
	default:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "WaitingForNodes",
			fmt.Sprintf("waiting for the nodes to be ready at %s", desired))
	}

	if np.Status.ProvisioningState == v1alpha1.ProvisioningStateDeleting {
		return
	}
	switch {
	case done:
		np.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	case np.Status.ProvisioningState == v1alpha1.ProvisioningStateAccepted || np.Status.ProvisioningState == "":
		np.Status.ProvisioningState = v1alpha1.ProvisioningStateProvisioning
	}
}

// setReady sets Ready from what HyperShift reported of an applied bundle: Provisioning until the nodes
// were first ready, then as HyperShift reports.
func setReady(np *v1alpha1.NodePool, st source.BundleStatus, consumer string, values map[string]string) {
	status, reported := conditionStatus(values[render.FeedbackReady])
	message := values[render.FeedbackReadyMessage]
	r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case reported && (status == metav1.ConditionTrue || r != nil && r.Reason == reasonReported):
		setCondition(np, v1alpha1.ConditionReady, status, reasonReported, message)
	case meta.IsStatusConditionTrue(st.Status.Conditions, protocol.ConditionApplied):
		if message == "" {
			message = fmt.Sprintf("generation %d is applied on %s; waiting for its nodes", st.Generation, consumer)
		}
		setCondition(np, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.NodePoolReasonProvisioning, message)
	}
}

// conditionStatus reads a condition status HyperShift reported; anything else is no report.
func conditionStatus(s string) (metav1.ConditionStatus, bool) {
	switch status := metav1.ConditionStatus(s); status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
		return status, true
	}
	return "", false
}
