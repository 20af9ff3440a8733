package openshiftversion

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

const graph = `{"nodes":[
	{"version":"4.20.1","payload":"img:4.20.1","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
	{"version":"4.20.2","payload":"img:4.20.2","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
	{"version":"4.21.0","payload":"img:4.21.0","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.21"}}
],"edges":[[0,1]],
"conditionalEdges":[{"edges":[{"from":"4.20.2","to":"4.21.0"}],"risks":[{"name":"Risky","message":"m","url":"https://example.com"}]}]}`

func parse(t *testing.T, g string) *versioncatalog.Catalog {
	t.Helper()
	c, err := versioncatalog.Parse(strings.NewReader(g))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestVersions(t *testing.T) {
	eol20 := time.Date(2027, 4, 21, 0, 0, 0, 0, time.UTC)
	catalog := parse(t, graph).WithLifecycleWhereKnown(&versioncatalog.Lifecycle{EndOfLife: map[string]time.Time{"4.20": eol20}})
	got, next := Versions(catalog, eol20.Add(-time.Hour))
	if len(got) != 3 || !next.Equal(eol20) {
		t.Fatalf("%d versions, next end of life %v; want 3 and %v", len(got), next, eol20)
	}
	v := got["fast-4.20.2"].Spec
	if v.Version != "4.20.2" || v.ChannelGroup != "fast" || v.ReleaseImage != "img:4.20.2" || !v.Enabled || !v.Default ||
		!v.EndOfLifeTimestamp.Equal(&metav1.Time{Time: eol20}) || len(v.Upgrades) != 1 || v.Upgrades[0].Version != "4.21.0" || v.Upgrades[0].Risks[0].Name != "Risky" {
		t.Errorf("fast-4.20.2 = %+v", v)
	}
	if v := got["fast-4.20.1"].Spec; v.Default || len(v.Upgrades) != 1 || len(v.Upgrades[0].Risks) != 0 {
		t.Errorf("fast-4.20.1 = %+v; want not the default, one edge without risk", v)
	}
	if v := got["fast-4.21.0"].Spec; v.EndOfLifeTimestamp != nil || !v.Enabled {
		t.Errorf("fast-4.21.0, whose end of life is unknown, = %+v; want enabled without an end of life", v)
	}
	after, next := Versions(catalog, eol20)
	if after["fast-4.20.1"].Spec.Enabled || !after["fast-4.21.0"].Spec.Enabled || !next.IsZero() {
		t.Errorf("at 4.20's end of life: 4.20.1 enabled %v, 4.21.0 enabled %v, next %v; want 4.20 disabled, nothing ahead",
			after["fast-4.20.1"].Spec.Enabled, after["fast-4.21.0"].Spec.Enabled, next)
	}
}

// The objects follow the catalog: created, updated and deleted when it is replaced.
func TestSyncFollowsTheCatalog(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	catalog := versioncatalog.NewLive(parse(t, graph))
	c, err := New(client, f.Hcp().V1alpha1().OpenShiftVersions(), catalog)
	if err != nil {
		t.Fatal(err)
	}
	store := f.Hcp().V1alpha1().OpenShiftVersions().Informer().GetStore()
	syncAndList := func() map[string]v1alpha1.OpenShiftVersionSpec {
		t.Helper()
		if _, err := c.sync(ctx, key); err != nil {
			t.Fatal(err)
		}
		list, err := client.HcpV1alpha1().OpenShiftVersions().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]v1alpha1.OpenShiftVersionSpec{}
		store.Replace(nil, "")
		for i := range list.Items {
			out[list.Items[i].Name] = list.Items[i].Spec
			if err := store.Add(&list.Items[i]); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	if got := syncAndList(); len(got) != 3 {
		t.Fatalf("after the first sync: %v", got)
	}
	catalog.Replace(parse(t, strings.Replace(graph, `"img:4.20.2"`, `"img:4.20.2-rebuilt"`, 1)+""))
	catalog.Replace(parse(t, `{"nodes":[
		{"version":"4.20.2","payload":"img:4.20.2-rebuilt","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}}]}`))
	got := syncAndList()
	if len(got) != 1 || got["fast-4.20.2"].ReleaseImage != "img:4.20.2-rebuilt" || len(got["fast-4.20.2"].Upgrades) != 0 {
		t.Errorf("after the catalog changed: %v; want fast-4.20.2 alone, with its new image and no edge", got)
	}
}
