package hcpcluster

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// NewREST returns the storage of hcpclusters and hcpclusters/status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme), optsGetter)
}

func newREST(s hcpregistry.Strategy[*hcp.HCPCluster], optsGetter generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store: &genericregistry.Store{
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
		},
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"hcpc"},
		AttrFunc:       GetAttrs,
	}, optsGetter)
}
