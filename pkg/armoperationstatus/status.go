// Package armoperationstatus renders an ARMOperation as ARM's operation status document, the body of
// the hcpOperationStatuses endpoint and of the notification ARM is sent when the operation ends.
package armoperationstatus

import (
	"time"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// Document is ARM's operation status (the OpenAPI documents' OperationStatusResult).
type Document struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	StartTime string `json:"startTime,omitempty"`
	EndTime   string `json:"endTime,omitempty"`
	Error     *Error `json:"error,omitempty"`
}

// Error is the error of a Failed or Canceled operation, in ARM's CloudError shape.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Target  string `json:"target,omitempty"`
}

// Of renders op, whose status ID is under the subscription and location as the caller spells them.
func Of(op *v1alpha1.ARMOperation, subscriptionID, location string) Document {
	state := State(op)
	d := Document{
		ID:        "/subscriptions/" + subscriptionID + "/providers/Microsoft.RedHatOpenShift/locations/" + location + "/hcpOperationStatuses/" + op.Name,
		Name:      op.Name,
		Status:    string(state),
		StartTime: op.CreationTimestamp.UTC().Format(time.RFC3339Nano),
	}
	if state.Final() && op.Status.EndTime != nil {
		d.EndTime = op.Status.EndTime.UTC().Format(time.RFC3339Nano)
	}
	if e := op.Status.Error; e != nil {
		d.Error = &Error{Code: e.Code, Message: e.Message, Target: e.Target}
	}
	return d
}

// State is the operation's state, or the state it starts in before its controller first reports on it.
func State(op *v1alpha1.ARMOperation) v1alpha1.ARMOperationState {
	if op.Status.State != "" {
		return op.Status.State
	}
	if op.Spec.Request == v1alpha1.ARMOperationDelete {
		return v1alpha1.ARMOperationDeleting
	}
	return v1alpha1.ARMOperationAccepted
}
