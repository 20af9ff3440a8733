package breakglasscredential

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// NewREST returns the storage of breakglasscredentials and breakglasscredentials/status. A cluster
// may have at most maxPerCluster unexpired credentials, counted under a lock in c; a nil c leaves
// the limit out, for tests of the store alone.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c *claims.Store, maxPerCluster int) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme), optsGetter, c, maxPerCluster)
}

func newREST(s hcpregistry.Strategy[*hcp.BreakglassCredential], optsGetter generic.RESTOptionsGetter, c *claims.Store, maxPerCluster int) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.BreakglassCredential{} },
		NewListFunc:               func() runtime.Object { return &hcp.BreakglassCredentialList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("breakglasscredentials"),
		SingularQualifiedResource: hcp.Resource("breakglasscredential"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	var beginCreate hcpregistry.BeginCreate
	if c != nil {
		beginCreate = limitPerCluster(store, c, maxPerCluster)
	}
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"bgc"},
		AttrFunc:       GetAttrs,
		BeginCreate:    beginCreate,
	}, optsGetter)
}
