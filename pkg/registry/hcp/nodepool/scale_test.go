package nodepool

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	scalescheme "k8s.io/client-go/scale/scheme"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

// newScaleStore returns the store of nodepools on a real etcd, without the lifecycle hooks, and the
// scale subresource on it.
func newScaleStore(t *testing.T) (*genericregistry.Store, *ScaleREST) {
	t.Helper()
	og := registrytest.OptionsGetter{RESTOptions: registrytest.NewRESTOptions(t, "nodepools")}
	main, _, err := newREST(NewStrategy(registrytest.Scheme).WithoutLifecycle(), og, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(main.Store.DestroyFunc)
	return main.Store, NewScaleREST(main.Store)
}

func scaleTo(replicas int32) rest.UpdatedObjectInfo {
	return rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		s := old.(*scalescheme.Scale).DeepCopy()
		s.Spec.Replicas = replicas
		return s, nil
	})
}

func TestScale(t *testing.T) {
	store, scale := newScaleStore(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "test")
	created, err := store.Create(ctx, validPool(t), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := created.(*hcp.NodePool)

	obj, err := scale.Get(ctx, "foo", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*scalescheme.Scale)
	if got.Name != "foo" || got.Spec.Replicas != 3 || got.Status.Replicas != 0 || got.ResourceVersion != pool.ResourceVersion ||
		got.Status.Selector == nil || got.Status.Selector.MatchLabels[hcp.NodePoolUIDLabel] != string(pool.UID) {
		t.Errorf("scale %+v, want foo with spec.replicas 3, status.replicas 0 and a selector naming the pool's UID", got)
	}

	// Admission sees the Scale, as for any scale subresource.
	var admitted []int32
	admit := func(_ context.Context, obj, old runtime.Object) error {
		admitted = append(admitted, old.(*scalescheme.Scale).Spec.Replicas, obj.(*scalescheme.Scale).Spec.Replicas)
		return nil
	}
	obj, _, err = scale.Update(ctx, "foo", scaleTo(4), rest.ValidateAllObjectFunc, admit, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*scalescheme.Scale); got.Spec.Replicas != 4 {
		t.Errorf("scale after the update %+v, want spec.replicas 4", got)
	}
	if len(admitted) != 2 || admitted[0] != 3 || admitted[1] != 4 {
		t.Errorf("admission saw replicas %v, want 3 then 4", admitted)
	}
	stored, err := store.Get(ctx, "foo", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if np := stored.(*hcp.NodePool); ptr.Deref(np.Spec.Replicas, 0) != 4 || np.Generation != 2 {
		t.Errorf("pool after scaling: spec.replicas %v, generation %d; want 4 and a new generation, as for any spec change", np.Spec.Replicas, np.Generation)
	}

	// The pool's own validation holds.
	_, _, err = scale.Update(ctx, "foo", scaleTo(501), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") || !strings.Contains(err.Error(), "must be less than or equal to 200") {
		t.Errorf("scaling to 501: %v, want 422 Invalid on spec.replicas, at most 200 for a pool in no availability zone", err)
	}

	_, _, err = scale.Update(ctx, "missing", scaleTo(1), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("scaling a pool that does not exist: %v, want NotFound", err)
	}
}

func TestScaleOfAnAutoscaledPoolIsRefused(t *testing.T) {
	store, scale := newScaleStore(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "test")
	pool := validPool(t)
	pool.Spec.Replicas, pool.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 1, Max: 4}
	if _, err := store.Create(ctx, pool, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := scale.Get(ctx, "foo", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*scalescheme.Scale); got.Spec.Replicas != 0 {
		t.Errorf("scale of an autoscaled pool with no nodes yet %+v, want spec.replicas 0, what it has", got)
	}

	_, _, err = scale.Update(ctx, "foo", scaleTo(2), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	want := "spec.replicas: Forbidden: node pool foo autoscales between 1 and 4 nodes (spec.autoScaling); remove spec.autoScaling from the NodePool to scale it by hand"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("scaling an autoscaled pool: %v, want 422 Invalid saying %q", err, want)
	}
	stored, err := store.Get(ctx, "foo", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if np := stored.(*hcp.NodePool); np.Spec.Replicas != nil || np.Generation != 1 {
		t.Errorf("the refused scale changed the pool: spec.replicas %v, generation %d", np.Spec.Replicas, np.Generation)
	}
}
