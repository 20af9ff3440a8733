package armoperation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// progress is where an operation stands, as its target shows it.
type progress struct {
	state v1alpha1.ARMOperationState
	err   *v1alpha1.ARMOperationError
}

// The error codes of ended operations, as ARM's backend gives them.
const (
	// codeCanceled: the frontend cancels the operations of a resource that is deleted.
	codeCanceled = "Canceled"
	// codeInternalServerError: the backend's code for a resource that failed, the create deadline included.
	codeInternalServerError = "InternalServerError"
)

// maxMessage bounds an error message built from conditions, which may each be long.
const maxMessage = 1024

// reasonDeadlineExceeded is the reason of Progressing when an HCPCluster did not become available
// within its create deadline (pkg/controller/hcpcluster).
const reasonDeadlineExceeded = "DeadlineExceeded"

func inState(state v1alpha1.ARMOperationState) progress { return progress{state: state} }

func canceled(format string, args ...any) progress {
	return progress{state: v1alpha1.ARMOperationCanceled, err: &v1alpha1.ARMOperationError{Code: codeCanceled, Message: fmt.Sprintf(format, args...)}}
}

func failed(message string) progress {
	return progress{state: v1alpha1.ARMOperationFailed, err: &v1alpha1.ARMOperationError{Code: codeInternalServerError, Message: message}}
}

// resourceStatus is what HCPClusters and NodePools share of what creates, updates and deletes follow.
type resourceStatus struct {
	*metav1.ObjectMeta
	provisioningState  v1alpha1.ProvisioningState
	observedGeneration int64
	conditions         []metav1.Condition
}

// ofResource says where a create, update or delete of an HCPCluster or NodePool stands; obj is nil once
// the object the operation wrote is gone. kind names the object in messages.
func ofResource(op *v1alpha1.ARMOperation, kind string, obj *resourceStatus) (progress, bool) {
	name := op.Spec.Target.Name
	var waiting v1alpha1.ARMOperationState
	switch op.Spec.Request {
	case v1alpha1.ARMOperationDelete:
		return ofDelete(obj == nil), true
	case v1alpha1.ARMOperationCreate:
		waiting = v1alpha1.ARMOperationAccepted
	case v1alpha1.ARMOperationUpdate:
		waiting = v1alpha1.ARMOperationUpdating
	default:
		return progress{}, false
	}
	switch {
	case obj == nil:
		return canceled("the %s %s was deleted", kind, name), true
	case obj.DeletionTimestamp != nil:
		return canceled("the %s %s is being deleted", kind, name), true
	case obj.provisioningState == v1alpha1.ProvisioningStateFailed:
		// A spec change turns Failed into Updating in the same write, so Failed is about the operation's
		// generation or a later one, even when observedGeneration lags: a manifest that fails to render
		// and a create past its deadline leave it behind.
		return failed(failure(kind, name, obj.conditions)), true
	case obj.observedGeneration < op.Spec.Target.Generation:
		return inState(waiting), true
	}
	switch obj.provisioningState {
	case v1alpha1.ProvisioningStateSucceeded:
		return inState(v1alpha1.ARMOperationSucceeded), true
	case v1alpha1.ProvisioningStateAwaitingSecret:
		// The external auth is delivered; what is left is the customer's: creating the client secret in
		// the hosted cluster, which ARM cannot wait for.
		return inState(v1alpha1.ARMOperationSucceeded), true
	case v1alpha1.ProvisioningStateCanceled:
		return canceled("the %s %s was canceled", kind, name), true
	case v1alpha1.ProvisioningStateAccepted:
		return inState(v1alpha1.ARMOperationAccepted), true
	case v1alpha1.ProvisioningStateProvisioning:
		return inState(v1alpha1.ARMOperationProvisioning), true
	case v1alpha1.ProvisioningStateUpdating:
		return inState(v1alpha1.ARMOperationUpdating), true
	}
	return inState(waiting), true
}

// ofDelete: a delete succeeds once no object of the UID it deleted is left.
func ofDelete(gone bool) progress {
	if gone {
		return inState(v1alpha1.ARMOperationSucceeded)
	}
	return inState(v1alpha1.ARMOperationDeleting)
}

// failureConditions are the conditions that can tell why a cluster or node pool failed, with the status
// that tells it, the most direct cause first.
var failureConditions = []struct {
	conditionType string
	status        metav1.ConditionStatus
}{
	{v1alpha1.ConditionProgressing, metav1.ConditionFalse}, // with reasonDeadlineExceeded only
	// The Azure side refuses a cluster before delivery, whose condition then only says it waits.
	{v1alpha1.ConditionAzureIdentitiesValid, metav1.ConditionFalse},
	{v1alpha1.ConditionManagedResourceGroupReady, metav1.ConditionFalse},
	{v1alpha1.ConditionDNSReady, metav1.ConditionFalse},
	{v1alpha1.ConditionDelivered, metav1.ConditionFalse},
	{v1alpha1.ConditionDegraded, metav1.ConditionTrue},
	{v1alpha1.ConditionPlaced, metav1.ConditionFalse},
	{v1alpha1.ConditionVersionResolved, metav1.ConditionFalse},
	{v1alpha1.ConditionAvailable, metav1.ConditionFalse},
	{v1alpha1.ConditionReady, metav1.ConditionFalse},
}

// failure is the message of a failed cluster or node pool: what its failing conditions say.
func failure(kind, name string, conditions []metav1.Condition) string {
	var parts []string
	seen := map[string]bool{}
	for _, f := range failureConditions {
		cond := meta.FindStatusCondition(conditions, f.conditionType)
		if cond == nil || cond.Status != f.status || cond.Message == "" || seen[cond.Message] ||
			(f.conditionType == v1alpha1.ConditionProgressing && cond.Reason != reasonDeadlineExceeded) {
			continue
		}
		seen[cond.Message] = true
		parts = append(parts, fmt.Sprintf("%s %s: %s", cond.Type, cond.Reason, cond.Message))
	}
	message := fmt.Sprintf("the %s %s failed", kind, name)
	if len(parts) > 0 {
		message += ": " + strings.Join(parts, "; ")
	}
	if len(message) > maxMessage {
		message = message[:maxMessage-3] + "..."
	}
	return message
}

// ofCredential says where a credential request (or a delete) of a BreakglassCredential stands; c is nil
// once the credential the operation wrote is gone.
func ofCredential(op *v1alpha1.ARMOperation, c *v1alpha1.BreakglassCredential) progress {
	name := op.Spec.Target.Name
	if op.Spec.Request == v1alpha1.ARMOperationDelete {
		return ofDelete(c == nil)
	}
	switch {
	case c == nil:
		return canceled("the break-glass credential %s was deleted", name)
	case c.DeletionTimestamp != nil:
		return canceled("the break-glass credential %s is being deleted", name)
	}
	switch c.Status.Phase {
	case v1alpha1.BreakglassCredentialPhaseIssued:
		return inState(v1alpha1.ARMOperationSucceeded)
	case v1alpha1.BreakglassCredentialPhaseFailed, v1alpha1.BreakglassCredentialPhaseExpired, v1alpha1.BreakglassCredentialPhaseRevoked:
		message := fmt.Sprintf("the break-glass credential %s is %s", name, c.Status.Phase)
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionIssued); cond != nil && cond.Message != "" {
			message += ": " + cond.Message
		}
		return failed(message)
	}
	return inState(v1alpha1.ARMOperationProvisioning)
}

// ofRevocation says where a revocation of a cluster's credentials stands; cluster is nil once the
// cluster is gone. The revocation is done when RevokingCredentials turned False after the operation was
// made: hcpclusters/revokecredentials turns it True before the operation is written, and the revocation
// turns it False when it ends. Times are in seconds, so a revocation that ends in the second the
// operation was made counts as after it.
func ofRevocation(op *v1alpha1.ARMOperation, cluster *v1alpha1.HCPCluster) progress {
	name := op.Spec.Target.Name
	switch {
	case cluster == nil:
		return canceled("the cluster %s was deleted", name)
	case cluster.DeletionTimestamp != nil:
		return canceled("the cluster %s is being deleted", name)
	}
	cond := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.LastTransitionTime.Before(&op.CreationTimestamp) {
		// ARM reports a revocation in progress as Deleting.
		return inState(v1alpha1.ARMOperationDeleting)
	}
	if cond.Reason == v1alpha1.CredentialsRevoked {
		return inState(v1alpha1.ARMOperationSucceeded)
	}
	return failed(fmt.Sprintf("the credentials of cluster %s were not revoked: %s", name, cond.Message))
}
