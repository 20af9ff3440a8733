package breakglasscredential

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// NewREST returns the storage of breakglasscredentials and breakglasscredentials/status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	s := NewStrategy(scheme)
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store: &genericregistry.Store{
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
		},
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"bgc"},
		AttrFunc:       GetAttrs,
	}, optsGetter)
}
