package clusterinspection

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func newTester(t *testing.T) *genericregistrytest.Tester {
	// The finalizer is left out: kube's tester expects immediate deletes.
	return registrytest.NewTester(t, "clusterinspections", func(scheme *runtime.Scheme, og generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error) {
		rest, status, err := newREST(NewStrategy(scheme).WithoutLifecycle(), og)
		if err != nil {
			return nil, nil, err
		}
		return rest.REST, status, nil
	})
}

func validInspection(t *testing.T) *hcp.ClusterInspection {
	ci := &hcp.ClusterInspection{}
	registrytest.Internal(t, fixtures.ClusterInspection("test", "dev", "foo", v1alpha1.InspectionViewEvents), ci)
	return ci
}

func TestCreate(t *testing.T) {
	noReason := validInspection(t)
	noReason.Spec.Reason = ""
	newTester(t).TestCreate(validInspection(t), noReason)
}

func TestUpdate(t *testing.T) {
	newTester(t).TestUpdate(validInspection(t),
		func(obj runtime.Object) runtime.Object {
			ci := obj.(*hcp.ClusterInspection)
			ci.Labels = map[string]string{"incident": "inc-1"}
			return ci
		},
		// What was asked, and why, cannot change.
		func(obj runtime.Object) runtime.Object {
			ci := obj.(*hcp.ClusterInspection)
			ci.Spec.Reason = "another reason"
			return ci
		},
	)
}

func TestDelete(t *testing.T) { newTester(t).ReturnDeletedObject().TestDelete(validInspection(t)) }

func TestGet(t *testing.T) { newTester(t).TestGet(validInspection(t)) }

func TestList(t *testing.T) { newTester(t).TestList(validInspection(t)) }

func TestWatch(t *testing.T) {
	newTester(t).TestWatch(validInspection(t),
		[]labels.Set{{}},
		[]labels.Set{{"foo": "bar"}},
		[]fields.Set{{"metadata.name": "foo"}, {"spec.clusterName": "dev"}},
		[]fields.Set{{"metadata.name": "bar"}, {"spec.clusterName": "other"}},
	)
}
