package versioncatalog

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultCatalog(t *testing.T) {
	c := Default()
	if got := c.Minors("stable"); !slices.Equal(got, []string{"4.20", "4.21"}) {
		t.Errorf("stable minors %v", got)
	}
	if got := c.Minors("candidate"); !slices.Contains(got, "4.22") {
		t.Errorf("candidate minors %v lack 4.22", got)
	}
	if _, ok := c.Find("stable", "4.20.8"); !ok {
		t.Error("4.20.8 is not in stable")
	}
	if _, ok := c.Find("stable", "4.21.4"); ok {
		t.Error("4.21.4 is in stable; the default graph has it only in fast and candidate")
	}
}

func TestResolve(t *testing.T) {
	c, err := Parse(strings.NewReader(`{"nodes":[
		{"version":"4.20.1","payload":"img:4.20.1","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.20,fast-4.20"}},
		{"version":"4.20.3","payload":"img:4.20.3","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.20,fast-4.20"}},
		{"version":"4.20.2","payload":"img:4.20.2","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.20,fast-4.20"}},
		{"version":"4.21.0","payload":"img:4.21.0","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.21"}}
	],"edges":[[0,1]]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ group, minor, want string }{
		{"stable", "4.20", "4.20.2"}, // second newest
		{"fast", "4.20", "4.20.3"},   // newest
		{"stable", "4.21", "4.21.0"}, // only one patch
	} {
		r, ok := c.Resolve(tc.group, tc.minor)
		if !ok || r.Version.String() != tc.want || r.Payload != "img:"+tc.want {
			t.Errorf("Resolve(%s, %s) = %v %v, want %s", tc.group, tc.minor, r.Version, ok, tc.want)
		}
	}
	for _, minor := range []string{"4.19", "4.2", "4", "4.20.1", ""} {
		if r, ok := c.Resolve("stable", minor); ok {
			t.Errorf("Resolve(stable, %q) = %v: a minor the catalog does not have", minor, r.Version)
		}
	}
	// What a cluster holds is kept when it is a release of its minor that its group offers, and never left
	// for an older one.
	for _, tc := range []struct{ group, minor, current, want, reason string }{
		{"stable", "4.20", "4.20.3", "4.20.3", "Resolved"},     // newer than stable's pick, and offered
		{"stable", "4.20", "4.20.9", "4.20.9", "NotInCatalog"}, // not offered (pulled, say), newer than the pick
		{"stable", "4.20", "4.20.0", "4.20.2", "Resolved"},     // not offered, older than the pick: moves on
		{"fast", "4.20", "4.20.9", "4.20.9", "NotInCatalog"},   // not offered, newer than fast's newest
		{"stable", "4.21", "4.20.3", "4.21.0", "Resolved"},     // another minor
		{"stable", "4.20", "4.20", "4.20.2", "Resolved"},       // not a full version
		{"stable", "4.21", "4.21.0", "4.21.0", "Resolved"},     // stable's only patch
		{"stable", "4.2", "4.20.3", "4.20.3", "NotInCatalog"},  // 4.2 is not 4.20
	} {
		if r := c.ResolveCluster(tc.group, tc.minor, tc.current); r.Desired != tc.want || r.Reason != tc.reason {
			t.Errorf("ResolveCluster(%s, %s, %s) = %+v; want %s (%s)", tc.group, tc.minor, tc.current, r, tc.want, tc.reason)
		}
	}
}

func TestParseRefusesBadGraphs(t *testing.T) {
	for _, bad := range []string{`not json`, `{"nodes":[{"version":"four","payload":"x"}]}`} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// A graph served over HTTP the way the OpenShift update service serves it replaces the compiled-in one.
func TestLoadFromAnUpdateService(t *testing.T) {
	graph := `{"nodes":[
		{"version":"4.30.1","payload":"quay.io/openshift-release-dev/ocp-release:4.30.1-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.30,fast-4.30"}},
		{"version":"4.30.2","payload":"quay.io/openshift-release-dev/ocp-release:4.30.2-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.30,fast-4.30"}}],
		"edges":[[0,1]]}`
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/upgrades_info/graph" {
			http.NotFound(w, r)
			return
		}
		accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, graph)
	}))
	defer srv.Close()

	c, err := Load(context.Background(), srv.URL+"/api/upgrades_info/graph")
	if err != nil {
		t.Fatal(err)
	}
	if accept != "application/json" {
		t.Errorf("asked with Accept %q, want application/json", accept)
	}
	if r, ok := c.Resolve("stable", "4.30"); !ok || r.Version.String() != "4.30.1" || !strings.HasSuffix(r.Payload, "4.30.1-x86_64") {
		t.Errorf("stable 4.30 resolves to %+v, %v; want 4.30.1 (the second-newest) from the served graph", r, ok)
	}
	if _, ok := c.Resolve("stable", "4.20"); ok {
		t.Error("the compiled-in releases are still offered: the served graph must replace them")
	}

	if _, err := Load(context.Background(), srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a graph URL that answers 404: %v, want an error saying so", err)
	}
}

// Every minor of a catalog has an end of life, or the catalog is refused with the minors that lack one.
func TestLifecycle(t *testing.T) {
	c := Default()
	for _, v := range []string{"4.20", "4.20.3", "4.22.0"} {
		if eol, ok := c.EndOfLife(v); !ok || eol.IsZero() {
			t.Errorf("no end of life for %s in the compiled-in catalog", v)
		}
	}
	if _, ok := c.EndOfLife("4.99"); ok {
		t.Error("an end of life for 4.99, which no life cycle names")
	}
	_, err := c.WithLifecycle(&Lifecycle{EndOfLife: map[string]time.Time{"4.20": time.Now()}})
	if err == nil || !strings.Contains(err.Error(), "4.21, 4.22") {
		t.Errorf("a life cycle without 4.21 and 4.22: %v, want an error naming them", err)
	}
}

// upgradeGraph: fast has 4.20.1 to 4.20.4; 4.20.1 -> 4.20.2 -> 4.20.3 unconditionally, 4.20.1 -> 4.20.4 with
// a risk, 4.20.3 -> 4.21.0 across minors.
const upgradeGraph = `{"nodes":[
	{"version":"4.20.1","payload":"img:4.20.1","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20,stable-4.20"}},
	{"version":"4.20.2","payload":"img:4.20.2","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20,stable-4.20"}},
	{"version":"4.20.3","payload":"img:4.20.3","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20,stable-4.20"}},
	{"version":"4.20.4","payload":"img:4.20.4","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.20"}},
	{"version":"4.21.0","payload":"img:4.21.0","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.21"}}
],"edges":[[0,1],[1,2],[2,4]],
"conditionalEdges":[{"edges":[{"from":"4.20.1","to":"4.20.4"}],"risks":[{"name":"EtcdDefrag","message":"etcd may stall","url":"https://example.com/risk"}]}]}`

func TestUpgradesAndNextPatch(t *testing.T) {
	c, err := Parse(strings.NewReader(upgradeGraph))
	if err != nil {
		t.Fatal(err)
	}
	ups := c.Upgrades("fast", "4.20.1")
	if len(ups) != 2 || ups[0].To != "4.20.2" || len(ups[0].Risks) != 0 || ups[1].To != "4.20.4" || ups[1].Risks[0].Name != "EtcdDefrag" {
		t.Errorf("Upgrades(fast, 4.20.1) = %+v; want 4.20.2, and 4.20.4 with its risk", ups)
	}
	if ups := c.Upgrades("stable", "4.20.1"); len(ups) != 1 || ups[0].To != "4.20.2" {
		t.Errorf("Upgrades(stable, 4.20.1) = %+v; want 4.20.2 only (4.20.4 is not in stable)", ups)
	}
	for _, tc := range []struct {
		group, current, next, goal string
	}{
		// fast: the newest reachable without risk is 4.20.3 (4.20.4 only over the risky edge).
		{"fast", "4.20.1", "4.20.2", "4.20.3"},
		{"fast", "4.20.2", "4.20.3", "4.20.3"},
		{"fast", "4.20.3", "", ""},
		// stable stops at its second-newest patch, 4.20.2.
		{"stable", "4.20.1", "4.20.2", "4.20.2"},
		{"stable", "4.20.2", "", ""},
	} {
		up, ok := c.NextPatch(tc.group, tc.current)
		if tc.next == "" {
			if ok {
				t.Errorf("NextPatch(%s, %s) = %v -> %v; want none", tc.group, tc.current, up.Next.Version, up.Goal.Version)
			}
			continue
		}
		if !ok || up.Next.Version.String() != tc.next || up.Goal.Version.String() != tc.goal || up.Next.Payload != "img:"+tc.next {
			t.Errorf("NextPatch(%s, %s) = %v, %v, %v; want %s toward %s", tc.group, tc.current, up.Next.Version, up.Goal.Version, ok, tc.next, tc.goal)
		}
	}
	// A cluster on a known patch stays on it: only its controller moves it, along edges.
	if r := c.ResolveCluster("fast", "4.20", "4.20.1"); r.Desired != "4.20.1" || !r.Resolved {
		t.Errorf("ResolveCluster(fast, 4.20, 4.20.1) = %+v; want 4.20.1 kept", r)
	}
	if r := c.ResolveCluster("fast", "4.20", ""); r.Desired != "4.20.4" {
		t.Errorf("a new fast cluster resolves to %s; want the newest, 4.20.4", r.Desired)
	}
}

func TestParseRefusesBadEdges(t *testing.T) {
	for _, bad := range []string{
		`{"nodes":[{"version":"4.20.1","payload":"x"}],"edges":[[0,1]]}`,
		`{"nodes":[{"version":"4.20.1","payload":"x"}],"conditionalEdges":[{"edges":[{"from":"4.20.1","to":"4.20.9"}],"risks":[{"name":"R"}]}]}`,
		`{"nodes":[{"version":"4.20.1","payload":"x"},{"version":"4.20.2","payload":"y"}],"conditionalEdges":[{"edges":[{"from":"4.20.1","to":"4.20.2"}]}]}`,
	} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("parsed %s", bad)
		}
	}
}

func TestLiveCatalogFollowsReplace(t *testing.T) {
	first, err := Parse(strings.NewReader(upgradeGraph))
	if err != nil {
		t.Fatal(err)
	}
	c := NewLive(first)
	replaced := 0
	c.OnReplace(func() { replaced++ })
	if _, ok := c.Find("fast", "4.21.0"); !ok {
		t.Fatal("the live catalog does not serve its first graph")
	}
	c.Replace(Default())
	if _, ok := c.Find("fast", "4.21.4"); !ok || replaced != 1 {
		t.Errorf("after Replace: 4.21.4 found %v, listeners told %d times; want the new graph, once", ok, replaced)
	}
	if r, _ := c.Find("fast", "4.20.4"); r.Payload == "img:4.20.4" {
		t.Error("after Replace the old graph still answers")
	}
	// A listener removed hears of no later Replace.
	other := 0
	remove := c.OnReplace(func() { other++ })
	c.Replace(first)
	remove()
	c.Replace(Default())
	if replaced != 3 || other != 1 {
		t.Errorf("listeners told %d and %d times; want 3, and 1 for the one removed after the second Replace", replaced, other)
	}
}
