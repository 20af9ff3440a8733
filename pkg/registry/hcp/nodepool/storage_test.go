package nodepool

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
	// The lifecycle hooks (Accepted, the finalizer) are left out: kube's tester expects deterministic
	// creates and immediate deletes. strategy_test.go and test/integration cover them.
	return registrytest.NewTester(t, "nodepools", func(scheme *runtime.Scheme, og generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
		return newREST(NewStrategy(scheme).WithoutLifecycle(), og, nil, nil, nil)
	})
}

func validPool(t *testing.T) *hcp.NodePool {
	pool := &hcp.NodePool{}
	registrytest.Internal(t, fixtures.NodePool("test", "dev", "workers"), pool)
	pool.Name = "foo"
	return pool
}

func TestCreate(t *testing.T) {
	both := validPool(t)
	both.Spec.AutoScaling = &hcp.NodePoolAutoScaling{Min: 1, Max: 3}
	newTester(t).TestCreate(validPool(t), both)
}

func TestUpdate(t *testing.T) {
	newTester(t).TestUpdate(validPool(t),
		func(obj runtime.Object) runtime.Object {
			p := obj.(*hcp.NodePool)
			p.Spec.Replicas = ptr.To[int32](5)
			return p
		},
		func(obj runtime.Object) runtime.Object {
			p := obj.(*hcp.NodePool)
			p.Spec.ClusterName = "other"
			return p
		},
		func(obj runtime.Object) runtime.Object {
			p := obj.(*hcp.NodePool)
			p.Spec.Platform.VMSize = "Standard_D4s_v3"
			return p
		},
	)
}

func TestDelete(t *testing.T) { newTester(t).ReturnDeletedObject().TestDelete(validPool(t)) }

func TestGet(t *testing.T) { newTester(t).TestGet(validPool(t)) }

func TestList(t *testing.T) { newTester(t).TestList(validPool(t)) }

func TestWatch(t *testing.T) {
	newTester(t).TestWatch(validPool(t),
		[]labels.Set{{}},
		[]labels.Set{{"foo": "bar"}},
		[]fields.Set{{"metadata.name": "foo"}, {"spec.clusterName": "dev"}},
		[]fields.Set{{"metadata.name": "bar"}, {"spec.clusterName": "other"}},
	)
}
