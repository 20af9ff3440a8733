package nodepool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// world is what the controller reads: a cluster, its management cluster and its pools.
type world struct {
	cluster *v1alpha1.HCPCluster
	mc      *v1alpha1.ManagementCluster
	pools   []*v1alpha1.NodePool
}

// deliveredCluster is a cluster placed on mc-1 (consumer-1) whose bundle the agent applied.
func deliveredCluster() world {
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.UID, cluster.Generation = types.UID("cluster-uid"), 1
	// As the server defaults it.
	cluster.Spec.Version.ChannelGroup = "stable"
	cluster.Finalizers = []string{v1alpha1.DeliveryFinalizer}
	cluster.Status = v1alpha1.HCPClusterStatus{
		ProvisioningState: v1alpha1.ProvisioningStateSucceeded, ClusterID: "5f0d2a8e-1111-4222-8333-944455556666",
		ManagementCluster: "mc-1", Version: v1alpha1.ClusterVersionStatus{Desired: "4.20.8"}, ObservedGeneration: 1,
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionDelivered, Status: metav1.ConditionTrue, Reason: "Applied"}},
	}
	mc := fixtures.ManagementCluster("mc-1")
	mc.Spec.ConsumerName = "consumer-1"
	np := fixtures.NodePool("ns", "dev", "workers")
	np.UID, np.Generation = types.UID("pool-uid"), 1
	np.Spec.Version.ChannelGroup = "stable"
	np.Finalizers = []string{v1alpha1.DeliveryFinalizer}
	np.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
	return world{cluster: cluster, mc: mc, pools: []*v1alpha1.NodePool{np}}
}

// testController is the node pool reconciler over informers a test fills by hand.
type testController struct {
	*bundle.Reconciler[*v1alpha1.NodePool]
	pools, clusters cache.Indexer
	informers       informers.SharedInformerFactory
}

// newTestController fills the informers and the fake clientset with the world; a nil cluster is one that
// is gone.
func newTestController(t *testing.T, publisher *controllertest.RecordingPublisher, w world) (*testController, *fake.Clientset) {
	t.Helper()
	objects := []runtime.Object{w.mc}
	if w.cluster != nil {
		objects = append(objects, w.cluster)
	}
	for _, np := range w.pools {
		objects = append(objects, np)
	}
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	r, err := New(client, hcp.NodePools(), hcp.HCPClusters(), hcp.ManagementClusters(), versioncatalog.Default(), publisher, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &testController{Reconciler: r, pools: hcp.NodePools().Informer().GetIndexer(), clusters: hcp.HCPClusters().Informer().GetIndexer(), informers: factory}
	if err := hcp.ManagementClusters().Informer().GetIndexer().Add(w.mc); err != nil {
		t.Fatal(err)
	}
	if w.cluster != nil {
		if err := c.clusters.Add(w.cluster); err != nil {
			t.Fatal(err)
		}
	}
	for _, np := range w.pools {
		if err := c.pools.Add(np); err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

func (c *testController) mustSync(t *testing.T, key string) {
	t.Helper()
	if _, err := c.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

func stored(t *testing.T, client *fake.Clientset, name string) *v1alpha1.NodePool {
	t.Helper()
	np, err := client.HcpV1alpha1().NodePools("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return np
}

// hyperShiftReplicas reads spec.replicas of the HyperShift NodePool in a bundle.
func hyperShiftReplicas(t *testing.T, b *protocol.ManifestBundle) int32 {
	t.Helper()
	var np struct {
		Kind string `json:"kind"`
		Spec struct {
			Replicas int32 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b.Manifests[len(b.Manifests)-1], &np); err != nil || np.Kind != "NodePool" {
		t.Fatalf("the bundle's last manifest is not a NodePool: %v %s", err, b.Manifests[len(b.Manifests)-1])
	}
	return np.Spec.Replicas
}

// A pool whose cluster cannot take it yet publishes nothing, and says in Ready what it waits for: the
// cluster's state and what its controllers said.
func TestPoolWaitsForItsClusterToBeDelivered(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*v1alpha1.HCPCluster, *v1alpha1.NodePool)
		want   string
	}{
		"not placed": {
			change: func(c *v1alpha1.HCPCluster, _ *v1alpha1.NodePool) {
				c.Status = v1alpha1.HCPClusterStatus{ProvisioningState: v1alpha1.ProvisioningStateAccepted, Conditions: []metav1.Condition{{
					Type: v1alpha1.ConditionPlaced, Status: metav1.ConditionFalse, Reason: "NoManagementCluster",
					Message: "no schedulable management cluster in eastus with free capacity and a connected agent; full: mc-1",
				}}}
			},
			want: "cluster dev is Accepted and not placed on a management cluster yet: no schedulable management cluster in eastus with free capacity and a connected agent; full: mc-1",
		},
		"placed, its bundle not applied yet": {
			change: func(c *v1alpha1.HCPCluster, _ *v1alpha1.NodePool) {
				c.Status.ProvisioningState, c.Status.ObservedGeneration = v1alpha1.ProvisioningStateProvisioning, 0
				c.Status.Conditions[0].Status, c.Status.Conditions[0].Reason = metav1.ConditionFalse, "Pending"
				c.Status.Conditions[0].Message = "waiting for the agent of consumer-1 to report generation 1"
			},
			want: "cluster dev is Provisioning; its HostedCluster is not applied on management cluster mc-1 yet: waiting for the agent of consumer-1 to report generation 1",
		},
		"placed, its version not resolved": {
			change: func(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool) {
				np.Spec.Version.ID = ""
				c.Status.ProvisioningState, c.Status.Version.Desired = v1alpha1.ProvisioningStateAccepted, ""
				c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionVersionResolved,
					Status: metav1.ConditionFalse, Reason: "NotInCatalog", Message: "the version catalog offers no 4.20 release in channel group stable"})
			},
			want: "cluster dev is Accepted; its version 4.20 is not resolved yet: the version catalog offers no 4.20 release in channel group stable",
		},
		"being deleted": {
			change: func(c *v1alpha1.HCPCluster, _ *v1alpha1.NodePool) { c.DeletionTimestamp = ptr.To(metav1.Now()) },
			want:   "cluster dev is being deleted",
		},
	} {
		t.Run(name, func(t *testing.T) {
			publisher := controllertest.NewRecordingPublisher()
			w := deliveredCluster()
			tc.change(w.cluster, w.pools[0])
			c, client := newTestController(t, publisher, w)
			c.mustSync(t, "ns/dev.workers")
			if len(publisher.Applied) != 0 {
				t.Errorf("published %v for a pool whose cluster is %s", publisher.Applied, name)
			}
			np := stored(t, client, "dev.workers")
			if np.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted || len(np.Status.Conditions) != 1 {
				t.Errorf("status %+v, want Accepted and only Ready while the cluster is %s", np.Status, name)
			}
			r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady)
			if r == nil || r.Status != metav1.ConditionFalse || r.Reason != v1alpha1.NodePoolReasonClusterNotReady || r.Message != tc.want || r.ObservedGeneration != 1 {
				t.Errorf("Ready %+v, want False, ClusterNotReady, %q", r, tc.want)
			}
		})
	}
}

// A later generation of the cluster on its way does not hold back its pools: the namespace they go into is there.
func TestPoolOfAClusterBeingUpdatedIsPublished(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	w := deliveredCluster()
	w.cluster.Generation = 2
	w.cluster.Status.Conditions[0].Status, w.cluster.Status.Conditions[0].Reason = metav1.ConditionFalse, "Pending"
	c, _ := newTestController(t, publisher, w)
	c.mustSync(t, "ns/dev.workers")
	if got := publisher.Applied["consumer-1/pool-uid"]; got != 1 {
		t.Errorf("published %v, want generation 1 of pool-uid to consumer-1", publisher.Applied)
	}
}

func TestSyncPublishesEachGenerationOfThePool(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	w := deliveredCluster()
	c, client := newTestController(t, publisher, w)

	c.mustSync(t, "ns/dev.workers")
	if got := publisher.Applied["consumer-1/pool-uid"]; got != 1 {
		t.Fatalf("published %v, want generation 1 of pool-uid to consumer-1", publisher.Applied)
	}
	if n := hyperShiftReplicas(t, publisher.Bundles["pool-uid"]); n != 3 {
		t.Errorf("the HyperShift NodePool asks for %d replicas, want 3", n)
	}
	np := stored(t, client, "dev.workers")
	if d := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionDelivered); d == nil || d.Reason != "Pending" {
		t.Errorf("Delivered %+v, want Pending until the agent reports", d)
	}
	if r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Reason != v1alpha1.NodePoolReasonWaitingForDelivery ||
		r.Message != "waiting for the agent of consumer-1 to report generation 1" {
		t.Errorf("Ready %+v, want WaitingForDelivery, naming the agent and the generation", r)
	}

	// Scaled: the same bundle at the pool's next generation.
	scaled := w.pools[0].DeepCopy()
	scaled.Generation, scaled.Spec.Replicas = 2, ptr.To[int32](5)
	if err := c.pools.Update(scaled); err != nil {
		t.Fatal(err)
	}
	c.mustSync(t, "ns/dev.workers")
	if got := publisher.Applied["consumer-1/pool-uid"]; got != 2 {
		t.Fatalf("published %v, want generation 2 of pool-uid", publisher.Applied)
	}
	if n := hyperShiftReplicas(t, publisher.Bundles["pool-uid"]); n != 5 {
		t.Errorf("after scaling, the HyperShift NodePool asks for %d replicas, want 5", n)
	}
}

// A pool the renderer refuses is Failed, with what to change.
func TestUndeliverablePoolFails(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	w := deliveredCluster()
	w.pools[0].Spec.Replicas, w.pools[0].Spec.AutoScaling = nil, &v1alpha1.NodePoolAutoScaling{Min: 0, Max: 4}
	np, d := syncFailed(t, publisher, w, "RenderFailed", "spec.autoScaling.min")
	if r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Reason != "RenderFailed" || r.Message != d.Message {
		t.Errorf("Ready %+v, want RenderFailed with Delivered's message", r)
	}
}

func TestDeletedPoolWaitsForTheAgent(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	w := deliveredCluster()
	w.pools[0].DeletionTimestamp = ptr.To(metav1.Now())
	c, client := newTestController(t, publisher, w)

	c.mustSync(t, "ns/dev.workers")
	if !publisher.Deleted.Has("consumer-1/pool-uid") {
		t.Fatalf("no delete published: %v", publisher.Deleted)
	}
	if np := stored(t, client, "dev.workers"); len(np.Finalizers) != 1 {
		t.Fatalf("finalizers %v before the agent reported the delete, want the delivery finalizer kept", np.Finalizers)
	}
	// The cluster's own delete report is not the pool's.
	publisher.Report(source.BundleStatus{Consumer: "consumer-1", ResourceID: "cluster-uid", Deleted: true})
	c.mustSync(t, "ns/dev.workers")
	if np := stored(t, client, "dev.workers"); len(np.Finalizers) != 1 {
		t.Fatalf("finalizers %v after the cluster's bundle was deleted, want the pool's own delete awaited", np.Finalizers)
	}
	publisher.Report(source.BundleStatus{Consumer: "consumer-1", ResourceID: "pool-uid", Deleted: true})
	c.mustSync(t, "ns/dev.workers")
	if np := stored(t, client, "dev.workers"); len(np.Finalizers) != 0 {
		t.Errorf("finalizers %v after the agent reported the delete, want none", np.Finalizers)
	}
}

func TestDeletedPoolGoesAtOnceWithNothingToWaitFor(t *testing.T) {
	t.Run("its cluster was never placed", func(t *testing.T) {
		publisher := controllertest.NewRecordingPublisher()
		w := deliveredCluster()
		w.cluster.Status = v1alpha1.HCPClusterStatus{ProvisioningState: v1alpha1.ProvisioningStateDeleting}
		w.pools[0].DeletionTimestamp = ptr.To(metav1.Now())
		c, client := newTestController(t, publisher, w)
		c.mustSync(t, "ns/dev.workers")
		if np := stored(t, client, "dev.workers"); len(np.Finalizers) != 0 || publisher.Deleted.Len() != 0 {
			t.Errorf("finalizers %v, deletes %v; want the pool let go with nothing published", np.Finalizers, publisher.Deleted)
		}
	})

	t.Run("its cluster is gone", func(t *testing.T) {
		publisher := controllertest.NewRecordingPublisher()
		w := deliveredCluster()
		c, client := newTestController(t, publisher, w)
		c.mustSync(t, "ns/dev.workers")

		// The cluster's delete removed its namespace, and the pool's objects with it.
		if err := c.clusters.Delete(w.cluster); err != nil {
			t.Fatal(err)
		}
		deleting := w.pools[0].DeepCopy()
		deleting.DeletionTimestamp = ptr.To(metav1.Now())
		if err := c.pools.Update(deleting); err != nil {
			t.Fatal(err)
		}
		c.mustSync(t, "ns/dev.workers")
		if np := stored(t, client, "dev.workers"); len(np.Finalizers) != 0 {
			t.Errorf("finalizers %v, want the pool of a deleted cluster let go at once", np.Finalizers)
		}
		if !publisher.Deleted.Has("consumer-1/pool-uid") {
			t.Errorf("deletes %v: the agent's record of the bundle is never deleted", publisher.Deleted)
		}
	})
}

// The source may delete what it does not hold only once it was offered every pool's bundle.
func TestRunOffersEveryBundleBeforeTheSourceIsSynced(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	w := deliveredCluster()
	deleting := fixtures.NodePool("ns", "dev", "old")
	deleting.UID, deleting.Generation = types.UID("old-uid"), 1
	deleting.Finalizers, deleting.DeletionTimestamp = []string{v1alpha1.DeliveryFinalizer}, ptr.To(metav1.Now())
	w.pools = append(w.pools, deleting)
	c, _ := newTestController(t, publisher, w)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.informers.Start(ctx.Done())
	go c.Run(ctx, 1)
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		publisher.Lock()
		defer publisher.Unlock()
		return publisher.Offered != nil, nil
	})
	if err != nil {
		t.Fatal("the source was never told it is synced")
	}
	publisher.Lock()
	defer publisher.Unlock()
	if publisher.Offered["consumer-1/pool-uid"] != 1 || !publisher.Deleted.Has("consumer-1/old-uid") {
		t.Errorf("when synced, the source held %v and deletes %v; want pool-uid applied and old-uid deleted", publisher.Offered, publisher.Deleted)
	}
}

// nodePoolStatus is what the agent reports of a HyperShift NodePool.
func nodePoolStatus(generation int64, applied bool, ready string, replicas int64, version, updatingVersion string) source.BundleStatus {
	appliedStatus := metav1.ConditionTrue
	if !applied {
		appliedStatus = metav1.ConditionFalse
	}
	value := func(name, s string) protocol.FeedbackValue {
		return protocol.FeedbackValue{Name: name, Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To(s)}}
	}
	values := []protocol.FeedbackValue{
		value(render.FeedbackUpdatingVersion, updatingVersion), value(render.FeedbackUpdatingConfig, "False"),
		{Name: render.FeedbackReplicas, Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: &replicas}},
	}
	if ready != "" {
		values = append(values, value(render.FeedbackReady, ready), value(render.FeedbackReadyMessage, "as reported"))
	}
	if version != "" {
		values = append(values, value(render.FeedbackVersion, version))
	}
	return source.BundleStatus{Generation: generation, Status: &protocol.ManifestBundleStatus{
		Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: appliedStatus}},
		ResourceStatus: []protocol.ManifestCondition{{
			ResourceMeta:   protocol.ManifestResourceMeta{Kind: "NodePool", Name: "dev-workers"},
			StatusFeedback: protocol.StatusFeedbackResult{Values: values},
			Conditions:     []metav1.Condition{{Type: protocol.ConditionApplied, Status: appliedStatus, Message: "the CRD says no"}},
		}},
	}}
}

// refusedWith gives a report's refused NodePool the management cluster's words.
func refusedWith(st source.BundleStatus, message string) source.BundleStatus {
	st.Status.ResourceStatus[0].Conditions[0].Message = "Failed to apply manifest: " + message
	return st
}

// seenBy adds to a report the NodePool's generation on the management cluster and the one HyperShift set
// its conditions on.
func seenBy(st source.BundleStatus, generation, observed int64) source.BundleStatus {
	controllertest.SeenBy(&st.Status.ResourceStatus[0], generation, observed)
	return st
}

func TestApplyReport(t *testing.T) {
	for _, tc := range []struct {
		name        string
		generation  int64
		state       v1alpha1.ProvisioningState
		desired     string
		report      *source.BundleStatus
		wantState   v1alpha1.ProvisioningState
		before      *metav1.Condition // Ready before the report
		delivered   string            // reason of Delivered
		ready       metav1.ConditionStatus
		readyReason string
		readyMsg    string
		progressing string // reason of Progressing
		replicas    int32
		asks        int32 // spec.replicas, when not the fixture's 3
	}{
		{name: "nothing reported yet", generation: 1, state: v1alpha1.ProvisioningStateAccepted, desired: "4.20.8",
			wantState: v1alpha1.ProvisioningStateAccepted, delivered: "Pending",
			ready: metav1.ConditionFalse, readyReason: "WaitingForDelivery", readyMsg: "waiting for the agent of consumer-1 to report generation 1"},
		{name: "applied, nothing of the nodes reported yet", generation: 1, state: v1alpha1.ProvisioningStateAccepted, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "", 0, "", "False")),
			wantState: v1alpha1.ProvisioningStateProvisioning, delivered: "Applied", progressing: "WaitingForNodes",
			ready: metav1.ConditionFalse, readyReason: "Provisioning", readyMsg: "generation 1 is applied on consumer-1; waiting for its nodes"},
		{name: "applied, machines booting", generation: 1, state: v1alpha1.ProvisioningStateAccepted, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "False", 0, "", "False")),
			wantState: v1alpha1.ProvisioningStateProvisioning, delivered: "Applied", progressing: "WaitingForNodes",
			ready: metav1.ConditionFalse, readyReason: "Provisioning", readyMsg: "as reported"},
		{name: "ready at the desired version", generation: 1, state: v1alpha1.ProvisioningStateProvisioning, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "True", 3, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", progressing: "AsDesired", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "no longer ready", generation: 1, state: v1alpha1.ProvisioningStateSucceeded, desired: "4.20.8",
			before:    &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "NodePoolReady"},
			report:    ptr.To(nodePoolStatus(1, true, "False", 2, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", progressing: "WaitingForNodes", replicas: 2,
			ready: metav1.ConditionFalse, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "ready, its report not resent yet after a restart", generation: 1, state: v1alpha1.ProvisioningStateSucceeded, desired: "4.20.8",
			before:    &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "NodePoolReady", Message: "as reported"},
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Pending",
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "refused by the management cluster", generation: 1, state: v1alpha1.ProvisioningStateProvisioning, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, false, "", 0, "", "")),
			wantState: v1alpha1.ProvisioningStateFailed, delivered: "ApplyFailed",
			ready: metav1.ConditionFalse, readyReason: "ApplyFailed", readyMsg: "the CRD says no"},
		{name: "a scale the management cluster's API was too busy to take, retried", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8",
			before:    &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "NodePoolReady", Message: "as reported"},
			report:    ptr.To(refusedWith(nodePoolStatus(2, false, "True", 3, "4.20.8", "False"), "the server is currently unable to handle the request")),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: bundle.ReasonApplyRetrying,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "a scale not reported yet", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "True", 3, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Pending", progressing: "WaitingForNodes", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "scaled, the new nodes not there yet", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8", asks: 5,
			report:    ptr.To(nodePoolStatus(2, true, "True", 3, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Applied", progressing: "Scaling", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "scaled, the new nodes there", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8", asks: 5,
			report:    ptr.To(nodePoolStatus(2, true, "True", 5, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", progressing: "AsDesired", replicas: 5,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "a new configuration HyperShift has not looked at yet", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8",
			report:    ptr.To(seenBy(nodePoolStatus(2, true, "True", 3, "4.20.8", "False"), 5, 4)),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Applied", progressing: "WaitingForHyperShift", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "a new configuration HyperShift has nothing to roll out for", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8",
			report:    ptr.To(seenBy(nodePoolStatus(2, true, "True", 3, "4.20.8", "False"), 5, 5)),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", progressing: "AsDesired", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "an upgrade under way", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.9",
			report:    ptr.To(nodePoolStatus(2, true, "True", 3, "4.20.8", "True")),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Applied", progressing: "UpdatingVersion", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
		{name: "an upgrade done", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.9",
			report:    ptr.To(nodePoolStatus(2, true, "True", 3, "4.20.9", "False")),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", progressing: "AsDesired", replicas: 3,
			ready: metav1.ConditionTrue, readyReason: "NodePoolReady", readyMsg: "as reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := deliveredCluster().pools[0]
			np.Generation = tc.generation
			np.Status.ProvisioningState = tc.state
			if tc.asks != 0 {
				np.Spec.Replicas = ptr.To(tc.asks)
			}
			if tc.before != nil {
				np.Status.Conditions = []metav1.Condition{*tc.before}
			}
			var st source.BundleStatus
			if tc.report != nil {
				st = *tc.report
			}
			applyReport(np, st, tc.report != nil, "consumer-1", tc.desired)
			if np.Status.ProvisioningState != tc.wantState {
				t.Errorf("provisioningState %s, want %s", np.Status.ProvisioningState, tc.wantState)
			}
			d := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionDelivered)
			if d == nil || d.Reason != tc.delivered {
				t.Fatalf("Delivered %+v, want reason %s", d, tc.delivered)
			}
			if tc.delivered == "ApplyFailed" && !strings.Contains(d.Message, "the CRD says no") {
				t.Errorf("Delivered message %q does not carry the management cluster's refusal", d.Message)
			}
			if r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Status != tc.ready ||
				r.Reason != tc.readyReason || !strings.Contains(r.Message, tc.readyMsg) {
				t.Errorf("Ready %+v, want %s, %s, %q", r, tc.ready, tc.readyReason, tc.readyMsg)
			}
			if p := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionProgressing); tc.progressing == "" && p != nil ||
				tc.progressing != "" && (p == nil || p.Reason != tc.progressing) {
				t.Errorf("Progressing %+v, want reason %q", p, tc.progressing)
			}
			if np.Status.Replicas != tc.replicas {
				t.Errorf("replicas %d, want %d", np.Status.Replicas, tc.replicas)
			}
		})
	}
}

// A pool that names its version moves along the update graph as its control plane does: one edge without
// risk at a time, never ahead of the control plane, not while it updates, not when its cluster opted out;
// a user's new version replaces where the graph took it.
func TestPoolMovesAlongTheGraph(t *testing.T) {
	catalog, err := versioncatalog.Parse(strings.NewReader(`{"nodes":[
		{"version":"4.20.1","payload":"img:4.20.1","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
		{"version":"4.20.2","payload":"img:4.20.2","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
		{"version":"4.20.3","payload":"img:4.20.3","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}}
	],"edges":[[0,1],[1,2]]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := &adapter{catalog: catalog}
	cluster := func(actual string, policy v1alpha1.UpgradePolicy) *v1alpha1.HCPCluster {
		c := fixtures.HCPCluster("ns", "dev")
		c.Spec.Version = v1alpha1.VersionProfile{ID: "4.20", ChannelGroup: "fast", UpgradePolicy: policy}
		c.Status.Version.Actual = actual
		return c
	}
	pool := func(state v1alpha1.ProvisioningState, running string) *v1alpha1.NodePool {
		np := fixtures.NodePool("ns", "dev", "workers")
		np.Spec.Version = v1alpha1.VersionProfile{ID: "4.20.1", ChannelGroup: "fast"}
		np.Status.ProvisioningState, np.Status.Version, np.Status.DesiredVersion = state, running, "4.20.1"
		return np
	}
	for _, tc := range []struct {
		name    string
		cluster *v1alpha1.HCPCluster
		pool    *v1alpha1.NodePool
		want    string
	}{
		{"one edge, behind the control plane", cluster("4.20.3", ""), pool(v1alpha1.ProvisioningStateSucceeded, "4.20.1"), "4.20.2"},
		{"never ahead of the control plane", cluster("4.20.1", ""), pool(v1alpha1.ProvisioningStateSucceeded, "4.20.1"), "4.20.1"},
		{"not while its nodes update", cluster("4.20.3", ""), pool(v1alpha1.ProvisioningStateSucceeded, "4.20.0"), "4.20.1"},
		{"not when failed", cluster("4.20.3", ""), pool(v1alpha1.ProvisioningStateFailed, "4.20.1"), "4.20.1"},
		{"not when the cluster opted out", cluster("4.20.3", v1alpha1.UpgradePolicyManual), pool(v1alpha1.ProvisioningStateSucceeded, "4.20.1"), "4.20.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.moveAlongGraph(tc.pool, tc.cluster)
			if tc.pool.Status.DesiredVersion != tc.want {
				t.Errorf("desired %s, want %s", tc.pool.Status.DesiredVersion, tc.want)
			}
		})
	}

	// What is delivered is where the graph took the pool, until the user names a newer patch or minor.
	moved := pool(v1alpha1.ProvisioningStateSucceeded, "4.20.2")
	moved.Status.DesiredVersion = "4.20.2"
	if image, v, ok := a.release(cluster("4.20.3", ""), moved); !ok || v != "4.20.2" || image != "img:4.20.2" {
		t.Errorf("release of a moved pool = %s %s %v; want 4.20.2", image, v, ok)
	}
	moved.Spec.Version.ID = "4.20.3"
	if _, v, _ := a.release(cluster("4.20.3", ""), moved); v != "4.20.3" {
		t.Errorf("after the user named 4.20.3, the pool gets %s", v)
	}
}

// A release pulled from the catalog after the nodes were sent it (the one the pool names, or the one the
// graph or their cluster moved them to) does not move them down to what spec.version.id says, nor fail
// the pool: it waits, saying so, and what was
// delivered stays on the management cluster.
func TestPoolOnAPulledReleaseKeepsWhatWasDelivered(t *testing.T) {
	for name, change := range map[string]func(*v1alpha1.HCPCluster, *v1alpha1.NodePool){
		"moved along the graph": func(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool) {
			c.Status.Version.Actual = "4.20.99"
			np.Status.DesiredVersion, np.Status.Version = "4.20.99", "4.20.99"
		},
		"following its cluster": func(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool) {
			c.Status.Version.Desired, c.Status.Version.Actual = "4.20.99", "4.20.99"
			np.Spec.Version.ID = ""
		},
		"pinned to it": func(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool) {
			c.Status.Version.Desired, c.Status.Version.Actual = "4.20.99", "4.20.99"
			np.Spec.Version.ID = "4.20.99"
			np.Status.DesiredVersion, np.Status.Version = "4.20.99", "4.20.99"
		},
	} {
		t.Run(name, func(t *testing.T) {
			publisher := controllertest.NewRecordingPublisher()
			w := deliveredCluster()
			w.pools[0].Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
			change(w.cluster, w.pools[0])
			c, client := newTestController(t, publisher, w)
			c.mustSync(t, "ns/dev.workers")
			if len(publisher.Applied) != 0 || !publisher.Kept.Has("consumer-1/pool-uid") {
				t.Errorf("applied %v, kept %v; want nothing applied and pool-uid kept on consumer-1", publisher.Applied, publisher.Kept)
			}
			np := stored(t, client, "dev.workers")
			d := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionDelivered)
			if np.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded || d == nil || d.Reason != "VersionNotInCatalog" ||
				!strings.Contains(d.Message, "no longer offers 4.20.99") {
				t.Errorf("provisioningState %s, Delivered %+v; want still Succeeded, VersionNotInCatalog naming 4.20.99", np.Status.ProvisioningState, d)
			}
		})
	}
}

// A pool asking for a release the catalog does not offer, which its nodes were never sent, is Failed: only
// the user can pick another.
func TestPoolAskingForAReleaseNotOfferedFails(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	w := deliveredCluster()
	w.pools[0].Spec.Version.ID = "4.20.99"
	w.pools[0].Status.DesiredVersion = "4.20.8"
	syncFailed(t, publisher, w, "VersionNotInCatalog", "pick another spec.version.id")
}

// syncFailed syncs the world's pool and checks that it is Failed, nothing published, its Delivered
// condition giving reason and a message that says what.
func syncFailed(t *testing.T, publisher *controllertest.RecordingPublisher, w world, reason, what string) (*v1alpha1.NodePool, *metav1.Condition) {
	t.Helper()
	c, client := newTestController(t, publisher, w)
	c.mustSync(t, "ns/dev.workers")
	if len(publisher.Applied) != 0 {
		t.Errorf("published %v, want nothing", publisher.Applied)
	}
	np := stored(t, client, "dev.workers")
	d := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionDelivered)
	if np.Status.ProvisioningState != v1alpha1.ProvisioningStateFailed || d == nil || d.Reason != reason || !strings.Contains(d.Message, what) {
		t.Fatalf("provisioningState %s, Delivered %+v; want Failed, %s saying %q", np.Status.ProvisioningState, d, reason, what)
	}
	return np, d
}
