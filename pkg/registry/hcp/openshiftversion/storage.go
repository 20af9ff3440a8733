package openshiftversion

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// REST is the storage of openshiftversions. They are not in the hcp category: kubectl get hcp lists
// what users create, not the service's catalog.
type REST struct {
	*hcpregistry.REST
}

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return nil }

// NewREST returns the storage of openshiftversions. A version has no status, so no /status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	s := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.OpenShiftVersion{} },
		NewListFunc:               func() runtime.Object { return &hcp.OpenShiftVersionList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("openshiftversions"),
		SingularQualifiedResource: hcp.Resource("openshiftversion"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	rest, _, err := hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: hcpregistry.NewStatusStrategy(s),
		ShortNames:     []string{"ocpv"},
		AttrFunc:       GetAttrs,
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	return &REST{REST: rest}, nil
}
