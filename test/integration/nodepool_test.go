package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	scaleclient "k8s.io/client-go/scale"
	"k8s.io/client-go/util/retry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// A pool of a cluster that no management cluster takes says so in its Ready condition, with the
// cluster's state and the reason placement gave.
func TestNodePoolSaysWhyItWaits(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	createCluster(t, ns, "dev")
	if _, err := client().HcpV1alpha1().NodePools(ns).Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForClusterNotReady(t, ns, "dev.workers")
}

// waitForClusterNotReady waits until the pool's Ready condition says that its cluster, dev, is not placed,
// with placement's reason, and returns the pool.
func waitForClusterNotReady(t *testing.T, ns, name string) *v1alpha1.NodePool {
	t.Helper()
	want := "cluster dev is Accepted and not placed on a management cluster yet: no schedulable management cluster in " +
		fixtures.HCPCluster(ns, "dev").Spec.Location + " with free capacity and a connected agent"
	var np *v1alpha1.NodePool
	var ready *metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if np, err = client().HcpV1alpha1().NodePools(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		ready = meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && strings.HasPrefix(ready.Message, want), nil
	})
	if err != nil || ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.NodePoolReasonClusterNotReady {
		t.Fatalf("Ready %+v (%v), want False, ClusterNotReady, %q", ready, err, want)
	}
	return np
}

// nodepools/scale serves autoscaling/v1 Scale to the typed client and to client-go's scale client, the
// one the HorizontalPodAutoscaler uses, and a write through it is a spec update of the pool.
func TestNodePoolScale(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	createCluster(t, ns, "dev")
	pools := client().HcpV1alpha1().NodePools(ns)
	pool, err := pools.Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	scale, err := pools.GetScale(ctx, "dev.workers", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selector := v1alpha1.NodePoolUIDLabel + "=" + string(pool.UID)
	if scale.Spec.Replicas != 3 || scale.Status.Replicas != 0 || scale.Status.Selector != selector || scale.Kind != "Scale" && scale.Kind != "" {
		t.Errorf("scale %+v, want spec.replicas 3, status.replicas 0, selector %s", scale, selector)
	}
	// The controllers write the pool's status meanwhile: a conflict is retried, as a client does.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := pools.GetScale(ctx, "dev.workers", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 4
		scale, err = pools.UpdateScale(ctx, "dev.workers", scale, metav1.UpdateOptions{FieldManager: "scaler"})
		if err == nil && scale.Spec.Replicas != 4 {
			t.Errorf("the update answered %+v, want spec.replicas 4", scale)
		}
		return err
	})
	if err != nil {
		t.Fatalf("scaling to 4: %v", err)
	}
	if pool, err = pools.Get(ctx, "dev.workers", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if *pool.Spec.Replicas != 4 || pool.Generation != 2 || !managedBy(pool.ManagedFields, "scaler", metav1.ManagedFieldsOperationUpdate) {
		t.Errorf("pool after scaling: spec.replicas %d, generation %d, managed fields %+v; want 4, 2, and spec.replicas owned by the scaler",
			*pool.Spec.Replicas, pool.Generation, pool.ManagedFields)
	}

	// The client-go scale client finds the subresource through discovery, as the autoscaler does.
	discovery := memory.NewMemCacheClient(client().Discovery())
	scales, err := scaleclient.NewForConfig(server.Config, restmapper.NewDeferredDiscoveryRESTMapper(discovery),
		dynamic.LegacyAPIPathResolverFunc, scaleclient.NewDiscoveryScaleKindResolver(discovery))
	if err != nil {
		t.Fatal(err)
	}
	nodepools := v1alpha1.SchemeGroupVersion.WithResource("nodepools").GroupResource()
	got, err := scales.Scales(ns).Get(ctx, nodepools, "dev.workers", metav1.GetOptions{})
	if err != nil || got.Spec.Replicas != 4 || got.Status.Selector != selector {
		t.Fatalf("the scale client read %+v, %v; want 4 replicas and selector %s", got, err, selector)
	}
	if _, err := scales.Scales(ns).Patch(ctx, v1alpha1.SchemeGroupVersion.WithResource("nodepools"), "dev.workers",
		types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching the scale: %v", err)
	}
	if pool, err = pools.Get(ctx, "dev.workers", metav1.GetOptions{}); err != nil || *pool.Spec.Replicas != 5 {
		t.Errorf("pool after patching its scale: %v, %v; want spec.replicas 5", pool.Spec.Replicas, err)
	}

	// The pool's validation holds, with the field path of the Scale.
	got.Spec.Replicas, got.ResourceVersion = 501, ""
	_, err = scales.Scales(ns).Update(ctx, nodepools, got, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || causes(t, err)["spec.replicas"] == "" {
		t.Errorf("scaling to 501: %v, want 422 Invalid on spec.replicas", err)
	}

	// An autoscaled pool is sized by its autoscaler.
	auto := fixtures.NodePool(ns, "dev", "gpu")
	auto.Spec.Replicas, auto.Spec.AutoScaling = nil, &v1alpha1.NodePoolAutoScaling{Min: 1, Max: 4}
	if _, err := pools.Create(ctx, auto, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scale, err = pools.GetScale(ctx, "dev.gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas, scale.ResourceVersion = 2, ""
	_, err = pools.UpdateScale(ctx, "dev.gpu", scale, metav1.UpdateOptions{})
	want := "node pool dev.gpu autoscales between 1 and 4 nodes (spec.autoScaling); remove spec.autoScaling from the NodePool to scale it by hand"
	if !apierrors.IsInvalid(err) || causes(t, err)["spec.replicas"] != "Forbidden: "+want {
		t.Errorf("scaling an autoscaled pool: %v, want 422 Invalid on spec.replicas saying %q", err, want)
	}
}
