package nodepool

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// NewREST returns the storage of nodepools and nodepools/status. The last node pool of a Succeeded
// cluster (read from clusters) cannot be deleted; deletes hold a lock in c while they count.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder, clusters rest.Getter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme), optsGetter, c, ops, clusters)
}

// newREST leaves the last-pool rule out when c is nil, for tests of the store alone.
func newREST(s hcpregistry.Strategy[*hcp.NodePool], optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder, clusters rest.Getter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.NodePool{} },
		NewListFunc:               func() runtime.Object { return &hcp.NodePoolList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("nodepools"),
		SingularQualifiedResource: hcp.Resource("nodepool"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	var guardDelete hcpregistry.DeleteGuard
	if c != nil {
		guardDelete = keepLastPool(store, clusters, c)
	}
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"np"},
		AttrFunc:       GetAttrs,
		GuardDelete:    guardDelete,
		Claims:         c,
		Operations:     ops,
	}, optsGetter)
}
