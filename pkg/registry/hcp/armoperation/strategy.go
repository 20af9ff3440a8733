// Package armoperation stores ARMOperations, the ARM frontend's asynchronous operations: how they are
// created, updated and validated, and how kubectl prints them.
package armoperation

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// kind tells the shared strategies where an ARMOperation's spec and status are and how they are checked.
// A new operation is Accepted, or Deleting for a delete, as ARM's operations start.
var kind = hcpregistry.Kind[*hcp.ARMOperation]{
	NamespaceScoped:      false,
	ClearStatus:          func(obj *hcp.ARMOperation) { obj.Status = hcp.ARMOperationStatus{} },
	CopyStatus:           func(obj, old *hcp.ARMOperation) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.ARMOperation) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.ARMOperation) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Created:              setInitialState,
	Validate:             validation.ValidateARMOperation,
	ValidateUpdate:       validation.ValidateARMOperationUpdate,
	ValidateStatusUpdate: validation.ValidateARMOperationStatusUpdate,
}

func setInitialState(op *hcp.ARMOperation) {
	op.Status.State = hcp.ARMOperationAccepted
	if op.Spec.Request == hcp.ARMOperationDelete {
		op.Status.State = hcp.ARMOperationDeleting
	}
	now := metav1.Now()
	op.Status.LastTransitionTime = &now
}

// NewStrategy returns the strategy for creating and updating ARMOperations.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.ARMOperation] {
	return hcpregistry.NewStrategy(typer, kind)
}

// GetAttrs returns the labels and selectable fields of an ARMOperation.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.ARMOperation)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select ARMOperations on: status.state finds the operations
// still running; the scheme's field label conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.ARMOperation) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"status.state": string(obj.Status.State)}, &obj.ObjectMeta, false)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
