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
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
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

// newTestController fills the listers and the fake clientset with the world by hand; a nil cluster is one
// that is gone.
func newTestController(t *testing.T, publisher *controllertest.RecordingPublisher, w world) (*Controller, *fake.Clientset) {
	t.Helper()
	objects := []runtime.Object{w.mc}
	clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if w.cluster != nil {
		objects = append(objects, w.cluster)
		if err := clusters.Add(w.cluster); err != nil {
			t.Fatal(err)
		}
	}
	mcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := mcs.Add(w.mc); err != nil {
		t.Fatal(err)
	}
	pools := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, clusterstatus.ByUID: clusterstatus.IndexByUID, byCluster: indexByCluster,
	})
	for _, np := range w.pools {
		objects = append(objects, np)
		if err := pools.Add(np); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewClientset(objects...)
	c := &Controller{
		client: client, pools: listers.NewNodePoolLister(pools), indexer: pools, clusters: listers.NewHCPClusterLister(clusters),
		mcs: listers.NewManagementClusterLister(mcs), catalog: versioncatalog.Default(), publisher: publisher,
		consumers: map[string]string{},
	}
	c.queue = clusterstatus.NewQueue("nodepool", c.sync)
	c.reports = clusterstatus.NewReports(pools, c.queue)
	return c, client
}

func (c *Controller) mustSync(t *testing.T, key string) {
	t.Helper()
	if _, err := c.sync(context.Background(), key); err != nil {
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

func TestPoolWaitsForItsClusterToBeDelivered(t *testing.T) {
	for name, change := range map[string]func(*v1alpha1.HCPCluster){
		"not placed": func(c *v1alpha1.HCPCluster) {
			c.Status = v1alpha1.HCPClusterStatus{ProvisioningState: v1alpha1.ProvisioningStateAccepted}
		},
		"placed, its bundle not applied yet": func(c *v1alpha1.HCPCluster) {
			c.Status.ObservedGeneration = 0
			c.Status.Conditions[0].Status, c.Status.Conditions[0].Reason = metav1.ConditionFalse, "Pending"
		},
		"being deleted": func(c *v1alpha1.HCPCluster) { c.DeletionTimestamp = ptr.To(metav1.Now()) },
	} {
		t.Run(name, func(t *testing.T) {
			publisher := controllertest.NewRecordingPublisher()
			w := deliveredCluster()
			change(w.cluster)
			c, client := newTestController(t, publisher, w)
			c.mustSync(t, "ns/dev.workers")
			if len(publisher.Applied) != 0 {
				t.Errorf("published %v for a pool whose cluster is %s", publisher.Applied, name)
			}
			if np := stored(t, client, "dev.workers"); np.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted || len(np.Status.Conditions) != 0 {
				t.Errorf("status %+v, want Accepted and nothing else while the cluster is %s", np.Status, name)
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

	// Scaled: the same bundle at the pool's next generation.
	scaled := w.pools[0].DeepCopy()
	scaled.Generation, scaled.Spec.Replicas = 2, ptr.To[int32](5)
	if err := c.indexer.Update(scaled); err != nil {
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
	c, client := newTestController(t, publisher, w)
	c.mustSync(t, "ns/dev.workers")
	if len(publisher.Applied) != 0 {
		t.Errorf("published %v", publisher.Applied)
	}
	np := stored(t, client, "dev.workers")
	d := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionDelivered)
	if np.Status.ProvisioningState != v1alpha1.ProvisioningStateFailed || d == nil || d.Reason != "RenderFailed" || !strings.Contains(d.Message, "spec.autoScaling.min") {
		t.Errorf("provisioningState %s, Delivered %+v; want Failed, RenderFailed naming spec.autoScaling.min", np.Status.ProvisioningState, d)
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
	c.reports.OnStatus(source.BundleStatus{Consumer: "consumer-1", ResourceID: "cluster-uid", Deleted: true})
	c.mustSync(t, "ns/dev.workers")
	if np := stored(t, client, "dev.workers"); len(np.Finalizers) != 1 {
		t.Fatalf("finalizers %v after the cluster's bundle was deleted, want the pool's own delete awaited", np.Finalizers)
	}
	c.reports.OnStatus(source.BundleStatus{Consumer: "consumer-1", ResourceID: "pool-uid", Deleted: true})
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
		c, _ := newTestController(t, publisher, w)
		c.mustSync(t, "ns/dev.workers")

		// The cluster's delete removed its namespace, and the pool's objects with it.
		w.cluster, w.pools[0] = nil, w.pools[0].DeepCopy()
		w.pools[0].DeletionTimestamp = ptr.To(metav1.Now())
		gone, client := newTestController(t, publisher, w)
		gone.consumers = c.consumers
		gone.mustSync(t, "ns/dev.workers")
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
		value(render.FeedbackReady, ready), value(render.FeedbackReadyMessage, "as reported"),
		value(render.FeedbackUpdatingVersion, updatingVersion), value(render.FeedbackUpdatingConfig, "False"),
		{Name: render.FeedbackReplicas, Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: &replicas}},
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

func TestApplyReport(t *testing.T) {
	for _, tc := range []struct {
		name        string
		generation  int64
		state       v1alpha1.ProvisioningState
		desired     string
		report      *source.BundleStatus
		wantState   v1alpha1.ProvisioningState
		delivered   string // reason of Delivered
		ready       metav1.ConditionStatus
		progressing string // reason of Progressing
		replicas    int32
	}{
		{name: "nothing reported yet", generation: 1, state: v1alpha1.ProvisioningStateAccepted, desired: "4.20.8",
			wantState: v1alpha1.ProvisioningStateAccepted, delivered: "Pending"},
		{name: "applied, machines booting", generation: 1, state: v1alpha1.ProvisioningStateAccepted, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "False", 0, "", "False")),
			wantState: v1alpha1.ProvisioningStateProvisioning, delivered: "Applied", ready: metav1.ConditionFalse, progressing: "WaitingForNodes"},
		{name: "ready at the desired version", generation: 1, state: v1alpha1.ProvisioningStateProvisioning, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "True", 3, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", ready: metav1.ConditionTrue, progressing: "AsDesired", replicas: 3},
		{name: "refused by the management cluster", generation: 1, state: v1alpha1.ProvisioningStateProvisioning, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, false, "", 0, "", "")),
			wantState: v1alpha1.ProvisioningStateFailed, delivered: "ApplyFailed"},
		{name: "a scale not reported yet", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.8",
			report:    ptr.To(nodePoolStatus(1, true, "True", 3, "4.20.8", "False")),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Pending", ready: metav1.ConditionTrue, progressing: "WaitingForNodes", replicas: 3},
		{name: "an upgrade under way", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.9",
			report:    ptr.To(nodePoolStatus(2, true, "True", 3, "4.20.8", "True")),
			wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Applied", ready: metav1.ConditionTrue, progressing: "UpdatingVersion", replicas: 3},
		{name: "an upgrade done", generation: 2, state: v1alpha1.ProvisioningStateUpdating, desired: "4.20.9",
			report:    ptr.To(nodePoolStatus(2, true, "True", 3, "4.20.9", "False")),
			wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied", ready: metav1.ConditionTrue, progressing: "AsDesired", replicas: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := deliveredCluster().pools[0]
			np.Generation = tc.generation
			np.Status.ProvisioningState = tc.state
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
			if r := meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady); tc.ready == "" && r != nil ||
				tc.ready != "" && (r == nil || r.Status != tc.ready || r.Message != "as reported") {
				t.Errorf("Ready %+v, want %q with HyperShift's message", r, tc.ready)
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
