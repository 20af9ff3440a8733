package clusterinspection

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// REST is the storage of clusterinspections. They are not in the hcp category: kubectl get hcp lists
// what users create, and users other than SREs may not read inspections.
type REST struct {
	*hcpregistry.REST
}

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return nil }

// NewREST returns the storage of clusterinspections and clusterinspections/status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme), optsGetter)
}

func newREST(s Strategy, optsGetter generic.RESTOptionsGetter) (*REST, *hcpregistry.StatusREST, error) {
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.ClusterInspection{} },
		NewListFunc:               func() runtime.Object { return &hcp.ClusterInspectionList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("clusterinspections"),
		SingularQualifiedResource: hcp.Resource("clusterinspection"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	rest, status, err := hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"inspection", "cinsp"},
		AttrFunc:       GetAttrs,
	}, optsGetter)
	if err != nil {
		return nil, nil, err
	}
	return &REST{rest}, status, nil
}
