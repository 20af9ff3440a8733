package versioncatalog

import (
	"slices"
	"strings"
	"testing"
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
	if _, ok := c.Resolve("stable", "4.19"); ok {
		t.Error("resolved a minor the catalog does not have")
	}
}

func TestParseRefusesBadGraphs(t *testing.T) {
	for _, bad := range []string{`not json`, `{"nodes":[{"version":"four","payload":"x"}]}`} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}
