package breakglasscredential

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// NewREST returns the storage of breakglasscredentials and breakglasscredentials/status. A cluster
// may have at most maxPerCluster unexpired credentials, counted under a lock in c; a nil c leaves
// the limit out, for tests of the store alone. A credential created without a certificate signing
// request gets a key made by the server, kept in keys.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder, maxPerCluster int, keys *Keys) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	s := NewStrategy(scheme)
	if keys != nil {
		withKeys := kind
		withKeys.Created = func(obj *hcp.BreakglassCredential) {
			kind.Created(obj)
			keys.makeCSR(obj)
		}
		s = hcpregistry.NewStrategy(scheme, withKeys)
	}
	return newREST(s, optsGetter, c, ops, maxPerCluster, keys)
}

func newREST(s hcpregistry.Strategy[*hcp.BreakglassCredential], optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder, maxPerCluster int, keys *Keys) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
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
	var begin []hcpregistry.BeginCreate
	if c != nil {
		begin = append(begin, limitPerCluster(store, c, maxPerCluster))
	}
	if keys != nil {
		begin = append(begin, keys.keep)
		store.AfterDelete = func(obj runtime.Object, _ *metav1.DeleteOptions) {
			keys.forget(context.Background(), obj.(*hcp.BreakglassCredential))
		}
	}
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"bgc"},
		AttrFunc:       GetAttrs,
		BeginCreate:    chain(begin...),
		Claims:         c,
		Operations:     ops,
	}, optsGetter)
}

// chain begins each of begin in turn; a refusal finishes those already begun.
func chain(begin ...hcpregistry.BeginCreate) hcpregistry.BeginCreate {
	if len(begin) == 0 {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object, dryRun []string) (genericregistry.FinishFunc, error) {
		var finishes []genericregistry.FinishFunc
		finish := func(ctx context.Context, success bool) {
			for i := len(finishes) - 1; i >= 0; i-- {
				finishes[i](ctx, success)
			}
		}
		for _, b := range begin {
			f, err := b(ctx, obj, dryRun)
			if err != nil {
				finish(ctx, false)
				return nil, err
			}
			finishes = append(finishes, f)
		}
		return finish, nil
	}
}
