package nodepool

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/conditions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// setCondition sets a condition of np for its current generation.
func setCondition(np *v1alpha1.NodePool, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&np.Status.Conditions, np.Generation, conditionType, status, reason, message)
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
// nothing came back yet). desired is the version the pool's nodes are to run. It returns when to look again
// without a new report: while the agent retries, when its time is up.
func applyReport(np *v1alpha1.NodePool, st source.BundleStatus, reported bool, consumer, desired string) time.Duration {
	delivered := bundle.Outcome(st, reported, np.Generation, consumer, "the node pool's manifests")
	setCondition(np, v1alpha1.ConditionDelivered, delivered.Status, delivered.Reason, delivered.Message)
	switch {
	case delivered.Failed:
		setWaiting(np, "ApplyFailed", delivered.Message)
		np.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		return 0
	case !delivered.Feedback:
		setWaiting(np, v1alpha1.NodePoolReasonWaitingForDelivery, delivered.Message)
		return delivered.RecheckAfter
	case delivered.Reason == "Pending":
		setWaiting(np, v1alpha1.NodePoolReasonWaitingForDelivery, delivered.Message)
	default:
		np.Status.ObservedGeneration = st.Generation
	}

	values := bundle.Feedback(st.Status, "NodePool")
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
	// A pool of a fixed size is done once it has as many nodes as it asks for: HyperShift's Ready stays
	// True while a pool scales.
	scaling := np.Spec.AutoScaling == nil && np.Spec.Replicas != nil && np.Status.Replicas != *np.Spec.Replicas
	// HyperShift has to have looked at the NodePool as applied: a change of its labels, taints or
	// configuration leaves it Ready, not yet updating, the moment it is applied.
	observed := bundle.Observed(values)
	done := st.Generation == np.Generation && observed && ready && np.Status.Version == desired && !updatingVersion && !updatingConfig && !scaling
	switch {
	case done:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "AsDesired",
			fmt.Sprintf("the nodes are ready at %s", desired))
	case updatingVersion:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "UpdatingVersion",
			fmt.Sprintf("the nodes move from %s to %s", np.Status.Version, desired))
	case updatingConfig:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "UpdatingConfig", "the nodes take the new configuration")
	case !observed && st.Generation == np.Generation:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "WaitingForHyperShift",
			fmt.Sprintf("generation %d is applied; HyperShift has not looked at it yet", st.Generation))
	case scaling && ready && st.Generation == np.Generation:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "Scaling",
			fmt.Sprintf("the pool has %d nodes and asks for %d", np.Status.Replicas, *np.Spec.Replicas))
	default:
		setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "WaitingForNodes",
			fmt.Sprintf("waiting for the nodes to be ready at %s", desired))
	}

	bundle.Progress(&np.Status.ProvisioningState, done)
	return 0
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
