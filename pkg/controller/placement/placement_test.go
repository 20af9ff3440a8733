package placement

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
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
