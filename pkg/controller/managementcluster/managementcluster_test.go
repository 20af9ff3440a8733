package managementcluster

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// agents answers what a test says the source knows of each consumer.
type agents struct {
	mu       sync.Mutex
	states   map[string]source.ConsumerState
	handlers []source.ConsumerHandler
}

func (a *agents) Consumer(name string) source.ConsumerState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.states[name]
}

func (a *agents) AddConsumerHandler(h source.ConsumerHandler) { a.handlers = append(a.handlers, h) }

func TestStatusSaysWhetherTheAgentIsThereAndHowFullTheClusterIs(t *testing.T) {
	mc := fixtures.ManagementCluster("mc-1")
	mc.Spec.ConsumerName, mc.Spec.Capacity = "consumer-1", 3
	placed := func(name string) *v1alpha1.HCPCluster {
		c := fixtures.HCPCluster("ns", name)
		c.Status.ManagementCluster = "mc-1"
		return c
	}
	elsewhere := fixtures.HCPCluster("ns", "elsewhere")
	elsewhere.Status.ManagementCluster = "mc-2"
	client := fake.NewSimpleClientset(mc)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	connectedAt := time.Now().Add(-time.Hour).Truncate(time.Second)
	a := &agents{states: map[string]source.ConsumerState{}}
	c, err := New(client, hcp.ManagementClusters(), hcp.HCPClusters(), hcp.NodePools(), a)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []any{placed("a"), placed("b"), elsewhere} {
		if err := hcp.HCPClusters().Informer().GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, np := range []*v1alpha1.NodePool{fixtures.NodePool("ns", "a", "one"), fixtures.NodePool("ns", "a", "two"),
		fixtures.NodePool("ns", "b", "one"), fixtures.NodePool("ns", "elsewhere", "one")} {
		if err := hcp.NodePools().Informer().GetIndexer().Add(np); err != nil {
			t.Fatal(err)
		}
	}
	mcs := hcp.ManagementClusters().Informer().GetIndexer()
	if err := mcs.Add(mc); err != nil {
		t.Fatal(err)
	}
	sync := func() *v1alpha1.ManagementCluster {
		t.Helper()
		if _, err := c.sync(context.Background(), "mc-1"); err != nil {
			t.Fatal(err)
		}
		stored, err := client.HcpV1alpha1().ManagementClusters().Get(context.Background(), "mc-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := mcs.Update(stored); err != nil {
			t.Fatal(err)
		}
		return stored
	}

	got := sync()
	if s := got.Status; s.HostedClusters != 2 || s.NodePools != 3 || s.AvailableCapacity != 1 {
		t.Errorf("hosted %d, node pools %d, available %d; want 2, 3, 1", s.HostedClusters, s.NodePools, s.AvailableCapacity)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAgentConnected); cond == nil ||
		cond.Status != metav1.ConditionFalse || cond.Reason != "NeverConnected" {
		t.Errorf("AgentConnected %+v before the agent was heard from, want False, NeverConnected", cond)
	}

	a.states["consumer-1"] = source.ConsumerState{Connected: true, Since: connectedAt, LastSeen: time.Now(), LastResync: connectedAt}
	got = sync()
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAgentConnected)
	if cond == nil || cond.Status != metav1.ConditionTrue || !cond.LastTransitionTime.Time.Equal(connectedAt) {
		t.Errorf("AgentConnected %+v, want True since %v", cond, connectedAt)
	}
	if got.Status.LastResync == nil || !got.Status.LastResync.Time.Equal(connectedAt) || got.Status.LastSeen == nil {
		t.Errorf("lastResync %v lastSeen %v, want the agent's resync at %v and a last seen", got.Status.LastResync, got.Status.LastSeen, connectedAt)
	}

	// Still connected a few seconds later: nothing to write.
	before := got.ResourceVersion
	a.states["consumer-1"] = source.ConsumerState{Connected: true, Since: connectedAt, LastSeen: got.Status.LastSeen.Time.Add(time.Second), LastResync: connectedAt}
	if got = sync(); got.ResourceVersion != before {
		t.Errorf("status written again for an agent seen a second later; want one write a minute at most")
	}

	goneAt := time.Now()
	a.states["consumer-1"] = source.ConsumerState{Since: goneAt, LastSeen: goneAt.Add(-3 * time.Minute), LastResync: connectedAt}
	got = sync()
	cond = meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAgentConnected)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "Disconnected" || !strings.Contains(cond.Message, "consumer-1") {
		t.Errorf("AgentConnected %+v once the agent is gone, want False, Disconnected, naming the consumer", cond)
	}
}
