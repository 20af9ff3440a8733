package externalauth

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// onePerCluster is the rule that a cluster has one identity provider: ARO HCP's, and HyperShift's,
// whose HostedCluster takes one OIDC provider. The cluster is claimed on create, so two creates
// racing through two servers cannot both win, and given back when the external auth is gone.
var onePerCluster = hcpregistry.UniqueValue[*hcp.ExternalAuth]{
	Space: "external-auth-of-cluster", Path: field.NewPath("spec", "clusterName"), Conflict: true,
	Rule: "a cluster can have one external auth only",
	Of: func(ea *hcp.ExternalAuth) (string, string) {
		return ea.Namespace + "/" + ea.Spec.ClusterName, ea.Spec.ClusterName
	},
}

// NewREST returns the storage of externalauths and externalauths/status. External auths claim
// their cluster in c: one per cluster. A create records the ARM operation it asks for with ops.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	return newREST(NewStrategy(scheme), optsGetter, c, ops)
}

// newREST leaves the one-per-cluster rule out when c is nil, for tests of the store alone.
func newREST(s hcpregistry.Strategy[*hcp.ExternalAuth], optsGetter generic.RESTOptionsGetter, c *claims.Store, ops hcpregistry.OperationRecorder) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &hcp.ExternalAuth{} },
		NewListFunc:               func() runtime.Object { return &hcp.ExternalAuthList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  hcp.Resource("externalauths"),
		SingularQualifiedResource: hcp.Resource("externalauth"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	var beginCreate hcpregistry.BeginCreate
	var claimExisting func(context.Context) error
	if c != nil {
		beginCreate, claimExisting = hcpregistry.ClaimUniqueValues(store, c, hcp.Kind("ExternalAuth"), onePerCluster)
	}
	return hcpregistry.NewStores(hcpregistry.StoreOptions{
		Store:          store,
		StatusStrategy: NewStatusStrategy(s),
		ShortNames:     []string{"ea"},
		AttrFunc:       GetAttrs,
		ClaimExisting:  claimExisting,
		BeginCreate:    beginCreate,
		Claims:         c,
		Operations:     ops,
	}, optsGetter)
}
