// Package managementcluster stores ManagementClusters: how they are created,
// updated and validated, and how kubectl prints them.
package managementcluster

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

// kind tells the shared strategies where a ManagementCluster's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.ManagementCluster]{
	NamespaceScoped:      false,
	ClearStatus:          func(obj *hcp.ManagementCluster) { obj.Status = hcp.ManagementClusterStatus{} },
	CopyStatus:           func(obj, old *hcp.ManagementCluster) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.ManagementCluster) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.ManagementCluster) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Validate:             validation.ValidateManagementCluster,
	ValidateUpdate:       validation.ValidateManagementClusterUpdate,
	ValidateStatusUpdate: validation.ValidateManagementClusterStatusUpdate,
}

// NewStrategy returns the strategy for creating and updating ManagementClusters.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.ManagementCluster] {
	return hcpregistry.NewStrategy(typer, kind)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s hcpregistry.Strategy[*hcp.ManagementCluster]) hcpregistry.StatusStrategy[*hcp.ManagementCluster] {
	return hcpregistry.NewStatusStrategy(s)
}

// GetAttrs returns the labels and selectable fields of a ManagementCluster.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.ManagementCluster)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select ManagementClusters on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.ManagementCluster) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{}, &obj.ObjectMeta, false)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
