// Package armsubscription stores ARMSubscriptions, the subscriptions ARM registered with the service:
// how they are created, updated and validated, and how kubectl prints them.
package armsubscription

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// kind tells the shared strategies where an ARMSubscription's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.ARMSubscription]{
	NamespaceScoped:      false,
	ClearStatus:          func(obj *hcp.ARMSubscription) { obj.Status = hcp.ARMSubscriptionStatus{} },
	CopyStatus:           func(obj, old *hcp.ARMSubscription) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.ARMSubscription) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.ARMSubscription) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Validate:             validation.ValidateARMSubscription,
	ValidateUpdate:       validation.ValidateARMSubscriptionUpdate,
	ValidateStatusUpdate: validation.ValidateARMSubscriptionStatusUpdate,
}

// NewStrategy returns the strategy for creating and updating ARMSubscriptions.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.ARMSubscription] {
	return hcpregistry.NewStrategy(typer, kind)
}

// GetAttrs returns the labels and selectable fields of an ARMSubscription.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.ARMSubscription)
	return labels.Set(obj.Labels), generic.AddObjectMetaFieldsSet(fields.Set{}, &obj.ObjectMeta, false), nil
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
