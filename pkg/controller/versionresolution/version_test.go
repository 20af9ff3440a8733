package versionresolution

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func TestResolve(t *testing.T) {
	catalog := versioncatalog.Default()
	for _, tc := range []struct {
		name, group, minor, before string
		want                       string
		resolved                   bool
	}{
		{name: "stable takes the second-newest patch", group: "stable", minor: "4.20", want: "4.20.8", resolved: true},
		{name: "fast takes the newest", group: "fast", minor: "4.20", want: "4.20.9", resolved: true},
		{name: "never moves down within the minor", group: "stable", minor: "4.20", before: "4.20.9", want: "4.20.9", resolved: true},
		{name: "an upgrade moves to the new minor", group: "stable", minor: "4.21", before: "4.20.8", want: "4.21.2", resolved: true},
		{name: "a minor the catalog lacks", group: "stable", minor: "4.19", before: "", want: "", resolved: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := fixtures.HCPCluster("ns", "c")
			cluster.Generation = 3
			cluster.Spec.Version = v1alpha1.VersionProfile{ID: tc.minor, ChannelGroup: tc.group}
			cluster.Status.Version.Desired = tc.before
			Resolve(cluster, catalog)
			if tc.resolved && cluster.Status.Version.Desired != tc.want {
				t.Errorf("desired %q, want %q", cluster.Status.Version.Desired, tc.want)
			}
			c := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
			want := metav1.ConditionFalse
			if tc.resolved {
				want = metav1.ConditionTrue
			}
			if c == nil || c.Status != want || c.ObservedGeneration != 3 || c.Message == "" {
				t.Fatalf("VersionResolved %+v, want %s for generation 3 with a message", c, want)
			}
			if image, ok := ReleaseImage(cluster, catalog); tc.resolved && (!ok || image == "") {
				t.Errorf("no release image for %s", cluster.Status.Version.Desired)
			}
		})
	}
}

// graphWithEdges: fast offers 4.20.1 to 4.20.3 with 4.20.1 -> 4.20.2 -> 4.20.3, and 4.20.1 -> 4.20.3 only
// with a risk.
const graphWithEdges = `{"nodes":[
	{"version":"4.20.1","payload":"img:4.20.1","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
	{"version":"4.20.2","payload":"img:4.20.2","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
	{"version":"4.20.3","payload":"img:4.20.3","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}}
],"edges":[[0,1],[1,2]],
"conditionalEdges":[{"edges":[{"from":"4.20.1","to":"4.20.3"}],"risks":[{"name":"Risky","message":"m"}]}]}`

func TestUpgradeAlongTheGraph(t *testing.T) {
	catalog, err := versioncatalog.Parse(strings.NewReader(graphWithEdges))
	if err != nil {
		t.Fatal(err)
	}
	running := func(mutate func(*v1alpha1.HCPCluster)) *v1alpha1.HCPCluster {
		cluster := fixtures.HCPCluster("ns", "c")
		cluster.Generation = 2
		cluster.Spec.Version = v1alpha1.VersionProfile{ID: "4.20", ChannelGroup: "fast"}
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
		cluster.Status.Version.Desired, cluster.Status.Version.Actual = "4.20.1", "4.20.1"
		cluster.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionVersionResolved, Status: metav1.ConditionTrue, ObservedGeneration: 2, Reason: "Resolved"}}
		if mutate != nil {
			mutate(cluster)
		}
		return cluster
	}
	for _, tc := range []struct {
		name    string
		cluster *v1alpha1.HCPCluster
		want    string // desired afterwards
		reason  string // of VersionResolved afterwards
	}{
		// One edge at a time, and not the risky one straight to 4.20.3.
		{name: "moves one edge without risk", cluster: running(nil), want: "4.20.2", reason: ReasonUpgradeAlongGraph},
		{name: "the next edge once there", cluster: running(func(c *v1alpha1.HCPCluster) {
			c.Status.Version.Desired, c.Status.Version.Actual = "4.20.2", "4.20.2"
		}), want: "4.20.3", reason: ReasonUpgradeAlongGraph},
		{name: "stays at the newest", cluster: running(func(c *v1alpha1.HCPCluster) {
			c.Status.Version.Desired, c.Status.Version.Actual = "4.20.3", "4.20.3"
		}), want: "4.20.3", reason: "Resolved"},
		{name: "not while an upgrade runs", cluster: running(func(c *v1alpha1.HCPCluster) { c.Status.Version.Actual = "4.20.0" }), want: "4.20.1", reason: "Resolved"},
		{name: "not while updating", cluster: running(func(c *v1alpha1.HCPCluster) {
			c.Status.ProvisioningState = v1alpha1.ProvisioningStateUpdating
		}), want: "4.20.1", reason: "Resolved"},
		{name: "not when failed", cluster: running(func(c *v1alpha1.HCPCluster) {
			c.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		}), want: "4.20.1", reason: "Resolved"},
		{name: "not before the generation is resolved", cluster: running(func(c *v1alpha1.HCPCluster) { c.Generation = 3 }), want: "4.20.1", reason: "Resolved"},
		{name: "opted out", cluster: running(func(c *v1alpha1.HCPCluster) {
			c.Spec.Version.UpgradePolicy = v1alpha1.UpgradePolicyManual
		}), want: "4.20.1", reason: ReasonUpgradeAvailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Upgrade(tc.cluster, catalog)
			c := meta.FindStatusCondition(tc.cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
			if tc.cluster.Status.Version.Desired != tc.want || c.Reason != tc.reason || c.Status != metav1.ConditionTrue {
				t.Errorf("desired %s, VersionResolved %+v; want %s, True with reason %s", tc.cluster.Status.Version.Desired, c, tc.want, tc.reason)
			}
		})
	}
}

// A release pulled from the update graph leaves the clusters that run it where they are: the catalog's pick
// is older, and a downgrade is not the service's to send. Their bundle is not rendered again until the
// catalog offers their release, or a newer one, again.
func TestPulledReleaseIsNotADowngrade(t *testing.T) {
	graph := func(versions ...string) *versioncatalog.Catalog {
		var nodes []string
		for _, v := range versions {
			nodes = append(nodes, `{"version":"`+v+`","payload":"img:`+v+`","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.20"}}`)
		}
		c, err := versioncatalog.Parse(strings.NewReader(`{"nodes":[` + strings.Join(nodes, ",") + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	catalog := versioncatalog.NewLive(graph("4.20.7", "4.20.8", "4.20.9"))
	cluster := fixtures.HCPCluster("ns", "c")
	cluster.Generation = 2
	cluster.Spec.Version = v1alpha1.VersionProfile{ID: "4.20", ChannelGroup: "stable"}
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	cluster.Status.Version.Desired, cluster.Status.Version.Actual = "4.20.9", "4.20.9"
	resolve := func() *metav1.Condition {
		Resolve(cluster, catalog)
		Upgrade(cluster, catalog)
		return meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
	}
	if c := resolve(); cluster.Status.Version.Desired != "4.20.9" || c.Status != metav1.ConditionTrue {
		t.Fatalf("on an offered release: desired %s, VersionResolved %+v; want 4.20.9 kept, True", cluster.Status.Version.Desired, c)
	}

	catalog.Replace(graph("4.20.7", "4.20.8")) // 4.20.9 pulled: stable would pick 4.20.7
	c := resolve()
	if cluster.Status.Version.Desired != "4.20.9" || c.Status != metav1.ConditionFalse || c.Reason != "NotInCatalog" ||
		!strings.Contains(c.Message, "no longer offers 4.20.9") || !strings.Contains(c.Message, "4.20.7") {
		t.Fatalf("4.20.9 pulled: desired %s, VersionResolved %+v; want 4.20.9 kept, False NotInCatalog naming both releases", cluster.Status.Version.Desired, c)
	}
	if image, ok := ReleaseImage(cluster, catalog); ok {
		t.Errorf("a release image %s for a release the catalog no longer offers", image)
	}

	catalog.Replace(graph("4.20.8", "4.20.9", "4.20.10")) // back, with a newer one
	if c := resolve(); cluster.Status.Version.Desired != "4.20.9" || c.Status != metav1.ConditionTrue {
		t.Fatalf("4.20.9 offered again: desired %s, VersionResolved %+v; want 4.20.9, True", cluster.Status.Version.Desired, c)
	}
	if image, ok := ReleaseImage(cluster, catalog); !ok || image != "img:4.20.9" {
		t.Errorf("release image %q, %v; want img:4.20.9", image, ok)
	}
}
