package hcpcluster

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// NewREST returns the storage of hcpclusters and hcpclusters/status. Clusters claim their
// infrastructure in c, so that no two clusters use the same subnet, network security group or
// managed resource group, and have their version resolved in catalog as they are stored. A create records
// the ARM operation it asks for with ops.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder, catalog *versioncatalog.Catalog, service *clusterfacts.Settings) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme, catalog, service), optsGetter, c, ops)
}

// newREST leaves out the claims when c is nil, for tests of the store alone.
func newREST(s hcpregistry.Strategy[*hcp.HCPCluster], optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.HCPCluster{} },
		NewListFunc:               func() runtime.Object { return &hcp.HCPClusterList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("hcpclusters"),
		SingularQualifiedResource: hcp.Resource("hcpcluster"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	var beginCreate hcpregistry.BeginCreate
	var claimExisting func(context.Context) error
	if c != nil {
		beginCreate, claimExisting = hcpregistry.ClaimUniqueValues(store, c, hcp.Kind("HCPCluster"), uniqueInfrastructure...)
	}
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"hcpc"},
		AttrFunc:       GetAttrs,
		ClaimExisting:  claimExisting,
		BeginCreate:    beginCreate,
		Claims:         c,
		Operations:     ops,
	}, optsGetter)
}
