package managementcluster

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// NewREST returns the storage of managementclusters and managementclusters/status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	s := NewStrategy(scheme)
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store: &genericregistry.Store{
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
		},
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"mc"},
		AttrFunc:       GetAttrs,
	}, optsGetter)
}
