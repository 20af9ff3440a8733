package placement

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// controllerWith fills the cluster index by hand: placed maps a management cluster to how many clusters
// it hosts. connected lists the consumers with an agent.
func controllerWith(t *testing.T, placed map[string]int, connected ...string) *Controller {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byManagementCluster: func(obj any) ([]string, error) {
		return []string{obj.(*v1alpha1.HCPCluster).Status.ManagementCluster}, nil
	}})
	for mc, n := range placed {
		for i := range n {
			c := fixtures.HCPCluster("ns", mc+"-"+string(rune('a'+i)))
			c.Status.ManagementCluster = mc
			if err := indexer.Add(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	agents := sets.New(connected...)
	return &Controller{indexer: indexer, connected: agents.Has, assumed: map[string]sets.Set[string]{}}
}

func managementCluster(name, location string, capacity int32, schedulable bool) *v1alpha1.ManagementCluster {
	mc := fixtures.ManagementCluster(name)
	mc.Spec.ConsumerName, mc.Spec.Location, mc.Spec.Capacity, mc.Spec.Schedulable = name, location, capacity, ptr.To(schedulable)
	return mc
}

func TestChoose(t *testing.T) {
	cluster := fixtures.HCPCluster("ns", "new")
	cluster.Spec.Location = "eastus"
	mcs := []*v1alpha1.ManagementCluster{
		managementCluster("west", "westus", 10, true),
		managementCluster("busy", "eastus", 10, true),
		managementCluster("quiet", "eastus", 10, true),
		managementCluster("full", "eastus", 2, true),
		managementCluster("closed", "eastus", 10, false),
		managementCluster("dark", "eastus", 10, true),
	}
	placed := map[string]int{"busy": 5, "quiet": 1, "full": 2}

	c := controllerWith(t, placed, "west", "busy", "quiet", "full", "closed")
	if got, why := c.choose(cluster, mcs); got == nil || got.Name != "quiet" {
		t.Fatalf("chose %v (%s), want the least loaded fit, quiet", got, why)
	}

	c = controllerWith(t, placed, "west", "full", "closed")
	got, why := c.choose(cluster, mcs)
	if got != nil {
		t.Fatalf("chose %s, want none: busy and quiet have no agent", got.Name)
	}
	for _, want := range []string{"eastus", "full: full", "without a connected agent: busy, dark, quiet", "unschedulable: closed"} {
		if !strings.Contains(why, want) {
			t.Errorf("reason %q does not say %q", why, want)
		}
	}
}

// A placement just written counts before the informer shows it, so the last seat is not given twice.
func TestAssumedPlacementsCount(t *testing.T) {
	c := controllerWith(t, map[string]int{"only": 1}, "only")
	c.assumed["only"] = sets.New("ns/just-placed")
	cluster := fixtures.HCPCluster("ns", "next")
	cluster.Spec.Location = "eastus"
	if got, _ := c.choose(cluster, []*v1alpha1.ManagementCluster{managementCluster("only", "eastus", 2, true)}); got != nil {
		t.Fatalf("chose %s, whose 2 seats are taken (one by a placement the informer has not shown yet)", got.Name)
	}
}

// A cluster stored as the registry stores a new one, unplaced, costs no status write while nothing can
// take it; one that says anything else is written once.
func TestUnplacedClusterIsNotWrittenAgain(t *testing.T) {
	asStored := fixtures.HCPCluster("ns", "new")
	meta.SetStatusCondition(&asStored.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionPlaced, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonNoManagementCluster, Message: clusterfacts.UnplacedMessage(asStored.Spec.Location)})
	bare := fixtures.HCPCluster("ns", "old")
	client := fake.NewSimpleClientset(asStored, bare) //nolint:staticcheck // NewClientset needs the kinds' apply schema, which the generated fake lacks
	factory := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	c, err := New(client, factory.HCPClusters(), factory.ManagementClusters(), func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range []*v1alpha1.HCPCluster{asStored, bare} {
		if err := factory.HCPClusters().Informer().GetIndexer().Add(cluster); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	for _, key := range []string{"ns/new", "ns/old"} {
		if _, err := c.sync(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	var written []string
	for _, a := range client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok {
			written = append(written, u.GetObject().(*v1alpha1.HCPCluster).Name)
		}
	}
	if !slices.Equal(written, []string{"old"}) {
		t.Errorf("status writes of %v, want only the cluster stored without Placed", written)
	}
}
