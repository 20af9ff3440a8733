// Package nodepool stores NodePools: how they are created, updated and
// validated, which fields clients can select on, and how kubectl prints them.
package nodepool

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

// kind tells the shared strategies where a NodePool's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.NodePool]{
	NamespaceScoped:      true,
	ClearStatus:          func(obj *hcp.NodePool) { obj.Status = hcp.NodePoolStatus{} },
	CopyStatus:           func(obj, old *hcp.NodePool) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.NodePool) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.NodePool) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Validate:             validation.ValidateNodePool,
	ValidateUpdate:       validation.ValidateNodePoolUpdate,
	ValidateStatusUpdate: validation.ValidateNodePoolStatusUpdate,
	// As for clusters: the create returns at once, Accepted, and the finalizer keeps a deleted pool
	// until its HyperShift NodePool is gone from the management cluster.
	Created: func(obj *hcp.NodePool) {
		obj.Status.ProvisioningState = hcp.ProvisioningStateAccepted
		hcpregistry.AddFinalizer(obj, hcp.DeliveryFinalizer)
	},
	SpecUpdated: func(obj, old *hcp.NodePool) {
		obj.Status.ProvisioningState = hcpregistry.StateAfterSpecChange(old.Status.ProvisioningState)
	},
	Deleting: func(obj *hcp.NodePool) { obj.Status.ProvisioningState = hcp.ProvisioningStateDeleting },
}

// NewStrategy returns the strategy for creating and updating NodePools.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.NodePool] {
	return hcpregistry.NewStrategy(typer, kind)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s hcpregistry.Strategy[*hcp.NodePool]) hcpregistry.StatusStrategy[*hcp.NodePool] {
	return hcpregistry.NewStatusStrategy(s)
}

// GetAttrs returns the labels and selectable fields of a NodePool.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.NodePool)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select NodePools on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.NodePool) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.clusterName": obj.Spec.ClusterName,
	}, &obj.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
