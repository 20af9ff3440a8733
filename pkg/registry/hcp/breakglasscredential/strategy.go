// Package breakglasscredential stores BreakglassCredentials: how they are
// created and validated, which fields clients can select on, and how kubectl prints them.
package breakglasscredential

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

// kind tells the shared strategies where a BreakglassCredential's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.BreakglassCredential]{
	NamespaceScoped: true,
	ClearStatus:     func(obj *hcp.BreakglassCredential) { obj.Status = hcp.BreakglassCredentialStatus{} },
	CopyStatus:      func(obj, old *hcp.BreakglassCredential) { obj.Status = old.Status },
	CopySpec:        func(obj, old *hcp.BreakglassCredential) { obj.Spec = old.Spec },
	SpecChanged: func(obj, old *hcp.BreakglassCredential) bool {
		return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec)
	},
	// The certificate signing request goes to a management cluster, whose CSR and approval must be
	// deleted with the credential.
	Created:              func(obj *hcp.BreakglassCredential) { hcpregistry.AddFinalizer(obj, hcp.DeliveryFinalizer) },
	Validate:             validation.ValidateBreakglassCredential,
	ValidateUpdate:       validation.ValidateBreakglassCredentialUpdate,
	ValidateStatusUpdate: validation.ValidateBreakglassCredentialStatusUpdate,
}

// NewStrategy returns the strategy for creating and updating BreakglassCredentials.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.BreakglassCredential] {
	return hcpregistry.NewStrategy(typer, kind)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s hcpregistry.Strategy[*hcp.BreakglassCredential]) hcpregistry.StatusStrategy[*hcp.BreakglassCredential] {
	return hcpregistry.NewStatusStrategy(s)
}

// GetAttrs returns the labels and selectable fields of a BreakglassCredential.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.BreakglassCredential)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select BreakglassCredentials on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.BreakglassCredential) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.clusterName": obj.Spec.ClusterName,
	}, &obj.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
