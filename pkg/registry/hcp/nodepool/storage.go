package nodepool

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// NewREST returns the storage of nodepools and nodepools/status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme), optsGetter)
}

func newREST(s hcpregistry.Strategy[*hcp.NodePool], optsGetter generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store: &genericregistry.Store{
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
		},
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"np"},
		AttrFunc:       GetAttrs,
	}, optsGetter)
}
