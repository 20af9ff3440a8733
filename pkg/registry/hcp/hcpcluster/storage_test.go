package hcpcluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func newTester(t *testing.T) *genericregistrytest.Tester {
	// The lifecycle hooks (Accepted, the finalizer, the cluster ID) are left out: kube's tester expects
	// deterministic creates and immediate deletes. strategy_test.go and test/integration cover them.
	return registrytest.NewTester(t, "hcpclusters", func(scheme *runtime.Scheme, og generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
		return newREST(NewStrategy(scheme, nil, nil).WithoutLifecycle(), og, nil, nil)
	})
}

func validCluster(t *testing.T) *hcp.HCPCluster {
	cluster := &hcp.HCPCluster{}
	registrytest.Internal(t, fixtures.HCPCluster("test", "foo"), cluster)
	return cluster
}

func TestCreate(t *testing.T) {
	invalid := validCluster(t)
	invalid.Spec.Network.HostPrefix = 30
	newTester(t).TestCreate(validCluster(t), invalid)
}

func TestUpdate(t *testing.T) {
	newTester(t).TestUpdate(validCluster(t),
		func(obj runtime.Object) runtime.Object {
			c := obj.(*hcp.HCPCluster)
			c.Spec.Version.ID = "4.21"
			return c
		},
		// Create-only fields refuse a change.
		func(obj runtime.Object) runtime.Object {
			c := obj.(*hcp.HCPCluster)
			c.Spec.Location = "westus"
			return c
		},
		func(obj runtime.Object) runtime.Object {
			c := obj.(*hcp.HCPCluster)
			c.Spec.Network.PodCIDR = "10.132.0.0/14"
			return c
		},
	)
}

func TestDelete(t *testing.T) {
	newTester(t).ReturnDeletedObject().TestDelete(validCluster(t))
}

func TestGet(t *testing.T) {
	newTester(t).TestGet(validCluster(t))
}

func TestList(t *testing.T) {
	newTester(t).TestList(validCluster(t))
}

func TestWatch(t *testing.T) {
	newTester(t).TestWatch(validCluster(t),
		[]labels.Set{{}},
		[]labels.Set{{"a": "c"}, {"foo": "bar"}},
		[]fields.Set{{"metadata.name": "foo"}, {"status.provisioningState": ""}},
		[]fields.Set{{"metadata.name": "bar"}, {"status.managementCluster": "mc-1"}},
	)
}
