package managementcluster

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
	// Kube's tester creates several objects from one fixture, which a claimed consumer name would refuse;
	// test/integration tests the claims.
	return registrytest.NewTester(t, "managementclusters", func(scheme *runtime.Scheme, og generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
		return NewREST(scheme, og, nil)
	}).ClusterScope()
}

func validManagementCluster(t *testing.T) *hcp.ManagementCluster {
	m := &hcp.ManagementCluster{}
	registrytest.Internal(t, fixtures.ManagementCluster("foo"), m)
	return m
}

func TestCreate(t *testing.T) {
	noCapacity := validManagementCluster(t)
	noCapacity.Spec.Capacity = 0
	newTester(t).TestCreate(validManagementCluster(t), noCapacity)
}

func TestUpdate(t *testing.T) {
	newTester(t).TestUpdate(validManagementCluster(t),
		func(obj runtime.Object) runtime.Object {
			m := obj.(*hcp.ManagementCluster)
			m.Spec.Schedulable = ptr.To(false)
			return m
		},
		func(obj runtime.Object) runtime.Object {
			m := obj.(*hcp.ManagementCluster)
			m.Spec.ConsumerName = "renamed"
			return m
		},
	)
}

func TestDelete(t *testing.T) {
	newTester(t).ReturnDeletedObject().TestDelete(validManagementCluster(t))
}

func TestGet(t *testing.T) { newTester(t).TestGet(validManagementCluster(t)) }

func TestList(t *testing.T) { newTester(t).TestList(validManagementCluster(t)) }

func TestWatch(t *testing.T) {
	newTester(t).TestWatch(validManagementCluster(t),
		[]labels.Set{{}},
		[]labels.Set{{"foo": "bar"}},
		[]fields.Set{{"metadata.name": "foo"}},
		[]fields.Set{{"metadata.name": "bar"}},
	)
}
