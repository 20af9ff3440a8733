// Package externalauth stores ExternalAuths: how they are created, updated and validated, the
// one-per-cluster rule, which fields clients can select on, and how kubectl prints them.
package externalauth

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

// kind tells the shared strategies where an ExternalAuth's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.ExternalAuth]{
	NamespaceScoped:      true,
	ClearStatus:          func(obj *hcp.ExternalAuth) { obj.Status = hcp.ExternalAuthStatus{} },
	CopyStatus:           func(obj, old *hcp.ExternalAuth) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.ExternalAuth) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.ExternalAuth) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Validate:             validation.ValidateExternalAuth,
	ValidateUpdate:       validation.ValidateExternalAuthUpdate,
	ValidateStatusUpdate: validation.ValidateExternalAuthStatusUpdate,
	// The create returns at once, Accepted; the finalizer keeps a deleted external auth until the
	// HostedCluster applied on the management cluster no longer has its identity provider.
	Created: func(obj *hcp.ExternalAuth) {
		obj.Status.ProvisioningState = hcp.ProvisioningStateAccepted
		hcpregistry.AddFinalizer(obj, hcp.DeliveryFinalizer)
	},
	SpecUpdated: func(obj, old *hcp.ExternalAuth) {
		obj.Status.ProvisioningState = hcpregistry.StateAfterSpecChange(old.Status.ProvisioningState)
	},
	Deleting: func(obj *hcp.ExternalAuth) { obj.Status.ProvisioningState = hcp.ProvisioningStateDeleting },
}

// NewStrategy returns the strategy for creating and updating ExternalAuths.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.ExternalAuth] {
	return hcpregistry.NewStrategy(typer, kind)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s hcpregistry.Strategy[*hcp.ExternalAuth]) hcpregistry.StatusStrategy[*hcp.ExternalAuth] {
	return hcpregistry.NewStatusStrategy(s)
}

// GetAttrs returns the labels and selectable fields of an ExternalAuth.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.ExternalAuth)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select ExternalAuths on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.ExternalAuth) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.clusterName": obj.Spec.ClusterName,
	}, &obj.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
