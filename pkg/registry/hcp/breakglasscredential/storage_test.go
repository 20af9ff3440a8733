package breakglasscredential

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func newTester(t *testing.T) *genericregistrytest.Tester {
	// The limit per cluster needs claims in etcd; pkg/registry/claims and test/integration test it. The
	// finalizer is left out: kube's tester expects immediate deletes.
	return registrytest.NewTester(t, "breakglasscredentials", func(scheme *runtime.Scheme, og generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
		return newREST(NewStrategy(scheme).WithoutLifecycle(), og, nil, nil, 0, nil)
	})
}

func validCredential(t *testing.T) *hcp.BreakglassCredential {
	c := &hcp.BreakglassCredential{}
	registrytest.Internal(t, fixtures.BreakglassCredential("test", "dev", "foo"), c)
	return c
}

func TestCreate(t *testing.T) {
	tooLong := validCredential(t)
	tooLong.Spec.ExpirationSeconds = ptr.To[int64](2 * 86400)
	newTester(t).TestCreate(validCredential(t), tooLong)
}

func TestUpdate(t *testing.T) {
	newTester(t).TestUpdate(validCredential(t),
		func(obj runtime.Object) runtime.Object {
			c := obj.(*hcp.BreakglassCredential)
			c.Labels = map[string]string{"ticket": "inc-1"}
			return c
		},
		// A credential request cannot change once made.
		func(obj runtime.Object) runtime.Object {
			c := obj.(*hcp.BreakglassCredential)
			c.Spec.ExpirationSeconds = ptr.To[int64](600)
			return c
		},
	)
}

func TestDelete(t *testing.T) { newTester(t).ReturnDeletedObject().TestDelete(validCredential(t)) }

func TestGet(t *testing.T) { newTester(t).TestGet(validCredential(t)) }

func TestList(t *testing.T) { newTester(t).TestList(validCredential(t)) }

func TestWatch(t *testing.T) {
	newTester(t).TestWatch(validCredential(t),
		[]labels.Set{{}},
		[]labels.Set{{"foo": "bar"}},
		[]fields.Set{{"metadata.name": "foo"}, {"spec.clusterName": "dev"}},
		[]fields.Set{{"metadata.name": "bar"}, {"spec.clusterName": "other"}},
	)
}
