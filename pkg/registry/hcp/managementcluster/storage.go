package managementcluster

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// uniqueConsumerName keeps one management cluster per Maestro consumer: two would receive each
// other's bundles and report each other's statuses. The consumer name is immutable.
var uniqueConsumerName = hcpregistry.UniqueValue[*hcp.ManagementCluster]{
	Space: "consumer-name", Path: field.NewPath("spec", "consumerName"),
	Rule: "a maestro-agent serves one management cluster only",
	Of:   func(mc *hcp.ManagementCluster) (string, string) { return mc.Spec.ConsumerName, mc.Spec.ConsumerName },
}

// NewREST returns the storage of managementclusters and managementclusters/status. Management
// clusters claim their consumer name in c; nil leaves the claims out, for tests of the store alone.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c *claims.Store) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	s := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.ManagementCluster{} },
		NewListFunc:               func() runtime.Object { return &hcp.ManagementClusterList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("managementclusters"),
		SingularQualifiedResource: hcp.Resource("managementcluster"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	var beginCreate hcpregistry.BeginCreate
	var claimExisting func(context.Context) error
	if c != nil {
		beginCreate, claimExisting = hcpregistry.ClaimUniqueValues(store, c, hcp.Kind("ManagementCluster"), uniqueConsumerName)
	}
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"mc"},
		AttrFunc:       GetAttrs,
		ClaimExisting:  claimExisting,
		BeginCreate:    beginCreate,
		Claims:         c,
	}, optsGetter)
}
