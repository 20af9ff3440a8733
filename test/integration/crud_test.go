package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func TestHCPClusterCreateGetUpdateDelete(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clusters := client().HcpV1alpha1().HCPClusters(ns)

	in := fixtures.HCPCluster(ns, "dev")
	in.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded // clients cannot set status on create
	created, err := clusters.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 || created.UID == "" || created.ResourceVersion == "" {
		t.Errorf("created object has generation %d, uid %q, resourceVersion %q", created.Generation, created.UID, created.ResourceVersion)
	}
	// The create returns at once, Accepted, with the cluster's ID and the finalizer that keeps it until
	// its control plane is gone from its management cluster.
	if created.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted {
		t.Errorf("create stored provisioningState %q, want Accepted whatever the client sent", created.Status.ProvisioningState)
	}
	if _, err := uuid.Parse(created.Status.ClusterID); err != nil || !slices.Contains(created.Finalizers, v1alpha1.DeliveryFinalizer) {
		t.Errorf("created cluster has clusterID %q and finalizers %v; want a UUID and %s", created.Status.ClusterID, created.Finalizers, v1alpha1.DeliveryFinalizer)
	}
	// ARM's defaults are filled in.
	net := created.Spec.Network
	if net.NetworkType != "OVNKubernetes" || net.PodCIDR != "10.128.0.0/14" || net.ServiceCIDR != "172.30.0.0/16" ||
		net.MachineCIDR != "10.0.0.0/16" || net.HostPrefix != 23 || created.Spec.Version.ChannelGroup != "stable" ||
		created.Spec.API.Visibility != "Public" || created.Spec.Platform.OutboundType != "LoadBalancer" {
		t.Errorf("defaults not applied: network %+v, version %+v, api %+v", net, created.Spec.Version, created.Spec.API)
	}

	got, err := clusters.Get(ctx, "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != created.UID {
		t.Errorf("get returned uid %s, created %s", got.UID, created.UID)
	}

	labelled, err := updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Labels = map[string]string{"team": "sre"} })
	if err != nil {
		t.Fatalf("update labels: %v", err)
	}
	if labelled.Generation != 1 {
		t.Errorf("a label change moved generation to %d", labelled.Generation)
	}

	upgraded, err := updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Spec.Version.ID = "4.21" })
	if err != nil {
		t.Fatalf("update version: %v", err)
	}
	if upgraded.Generation != 2 || upgraded.Spec.Version.ID != "4.21" {
		t.Errorf("after a spec change: generation %d, version %q; want 2, 4.21", upgraded.Generation, upgraded.Spec.Version.ID)
	}

	if err := clusters.Delete(ctx, "dev", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitClusterGone(t, ns, "dev")
}

func TestStatusIsWrittenOnlyThroughStatus(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	if _, err := clusters.Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// /status takes the status and ignores a spec change.
	afterStatus, err := updateClusterStatus(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) {
		c.Status.ProvisioningState = v1alpha1.ProvisioningStateProvisioning
		c.Status.ManagementCluster = "mc-1"
		c.Spec.Version.ID = "4.21"
	})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if afterStatus.Status.ProvisioningState != v1alpha1.ProvisioningStateProvisioning || afterStatus.Status.ManagementCluster != "mc-1" {
		t.Errorf("status not written: %+v", afterStatus.Status)
	}
	if afterStatus.Spec.Version.ID != "4.20" || afterStatus.Generation != 1 {
		t.Errorf("a status update changed spec: version %q generation %d", afterStatus.Spec.Version.ID, afterStatus.Generation)
	}

	// The main resource takes the spec and ignores a status change.
	afterSpec, err := updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) {
		c.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		c.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](10)
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if afterSpec.Status.ProvisioningState != v1alpha1.ProvisioningStateProvisioning {
		t.Errorf("an update of the main resource changed status to %q", afterSpec.Status.ProvisioningState)
	}
	if afterSpec.Spec.Autoscaling.MaxNodesTotal == nil || *afterSpec.Spec.Autoscaling.MaxNodesTotal != 10 {
		t.Errorf("spec change lost: %+v", afterSpec.Spec.Autoscaling)
	}

	// A status that breaks the rules is refused.
	if _, err := updateClusterStatus(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Status.ProvisioningState = "Done" }); !apierrors.IsInvalid(err) {
		t.Errorf("status with provisioningState Done: %v, want Invalid", err)
	}
}

func TestWatchSeesCreateUpdateDelete(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	pools := client().HcpV1alpha1().NodePools(ns)
	createCluster(t, ns, "dev")
	w, err := pools.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	pool, err := pools.Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As a cluster's: Accepted at once, and kept on delete until nothing of it is left on a management cluster.
	if pool.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted || !slices.Contains(pool.Finalizers, v1alpha1.DeliveryFinalizer) {
		t.Errorf("created pool is %q with finalizers %v; want Accepted with %s", pool.Status.ProvisioningState, pool.Finalizers, v1alpha1.DeliveryFinalizer)
	}
	// The nodepool controller writes the pool's status meanwhile: retry on a conflict.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pool, err := pools.Get(ctx, pool.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pool.Spec.Replicas = ptr.To[int32](5)
		_, err = pools.Update(ctx, pool, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := pools.Delete(ctx, pool.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	next := func(want watch.EventType) watch.Event {
		select {
		case ev := <-w.ResultChan():
			return ev
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s event within 30s", want)
		}
		return watch.Event{}
	}
	for _, want := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		ev := next(want)
		// The node pool controller writes the pool's status before the update: it waits for its cluster.
		// The delete first marks the pool Deleting; the controller then lets it go at once, as nothing of
		// it was delivered.
		for ev.Type == watch.Modified && (want == watch.Deleted || *ev.Object.(*v1alpha1.NodePool).Spec.Replicas != 5) {
			ev = next(want)
		}
		p, ok := ev.Object.(*v1alpha1.NodePool)
		if ev.Type != want || !ok || p.Name != pool.Name {
			t.Fatalf("event %s %T, want %s of %s", ev.Type, ev.Object, want, pool.Name)
		}
		if want == watch.Modified && *p.Spec.Replicas != 5 {
			t.Errorf("modified event carries replicas %d, want 5", *p.Spec.Replicas)
		}
	}
}

func TestManagementClustersAreClusterScoped(t *testing.T) {
	ctx := context.Background()
	mcs := client().HcpV1alpha1().ManagementClusters()
	name := namespace(t)
	created, err := mcs.Create(ctx, fixtures.ManagementCluster(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mcs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if created.Namespace != "" || created.Spec.Schedulable == nil || !*created.Spec.Schedulable {
		t.Errorf("created namespace %q schedulable %v; want none and true by default", created.Namespace, created.Spec.Schedulable)
	}
	list, err := mcs.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list by name: %v items, err %v", len(list.Items), err)
	}
}

// TestForegroundDeleteFinishes: standalone mode has no garbage collector, so a delete that asks
// for foreground or orphan propagation must not leave the object behind with a finalizer; the
// delivery controller removes its own once nothing of the cluster is left to delete.
func TestForegroundDeleteFinishes(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan} {
		createCluster(t, ns, "dev")
		if err := clusters.Delete(ctx, "dev", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatalf("delete with %s: %v", policy, err)
		}
		waitClusterGone(t, ns, "dev")
	}
}
