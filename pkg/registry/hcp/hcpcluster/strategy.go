// Package hcpcluster stores HCPClusters: how they are created, updated and
// validated, which fields clients can select on, and how kubectl prints them.
package hcpcluster

import (
	"github.com/google/uuid"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// kind tells the shared strategies where a HCPCluster's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.HCPCluster]{
	NamespaceScoped:      true,
	ClearStatus:          func(obj *hcp.HCPCluster) { obj.Status = hcp.HCPClusterStatus{} },
	CopyStatus:           func(obj, old *hcp.HCPCluster) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.HCPCluster) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.HCPCluster) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Validate:             validation.ValidateHCPCluster,
	ValidateUpdate:       validation.ValidateHCPClusterUpdate,
	ValidateStatusUpdate: validation.ValidateHCPClusterStatusUpdate,
	// The create returns at once, Accepted; the controllers deliver the cluster, and the finalizer keeps
	// a deleted cluster until its control plane is gone from the management cluster.
	Created: func(obj *hcp.HCPCluster) {
		obj.Status.ProvisioningState = hcp.ProvisioningStateAccepted
		obj.Status.ClusterID = uuid.NewString()
		hcpregistry.AddFinalizer(obj, hcp.DeliveryFinalizer)
	},
	SpecUpdated: func(obj, old *hcp.HCPCluster) {
		obj.Status.ProvisioningState = hcpregistry.StateAfterSpecChange(old.Status.ProvisioningState)
	},
	Deleting: func(obj *hcp.HCPCluster) { obj.Status.ProvisioningState = hcp.ProvisioningStateDeleting },
}

// NewStrategy returns the strategy for creating and updating HCPClusters.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.HCPCluster] {
	return hcpregistry.NewStrategy(typer, kind)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s hcpregistry.Strategy[*hcp.HCPCluster]) hcpregistry.StatusStrategy[*hcp.HCPCluster] {
	return hcpregistry.NewStatusStrategy(s)
}

// GetAttrs returns the labels and selectable fields of a HCPCluster.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.HCPCluster)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select HCPClusters on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.HCPCluster) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"status.managementCluster": obj.Status.ManagementCluster,
		"status.provisioningState": string(obj.Status.ProvisioningState),
	}, &obj.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
