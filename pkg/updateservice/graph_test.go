package updateservice

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

const wireGraph420 = `{
	"nodes": [
		{"version": "4.20.8", "payload": "quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64", "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.20,stable-4.20", "url": "https://access.redhat.com/errata/1"}},
		{"version": "4.20.9", "payload": "quay.io/openshift-release-dev/ocp-release:4.20.9-x86_64", "metadata": {}},
		{"version": "4.20.10", "payload": "quay.io/openshift-release-dev/ocp-release:4.20.10-x86_64"}
	],
	"edges": [[0, 2]],
	"conditionalEdges": [{
		"edges": [{"from": "4.20.8", "to": "4.20.9"}],
		"risks": [{"url": "https://issues.example/DNS-1", "name": "DNSBreaks", "message": "DNS may stop resolving.",
			"matchingRules": [{"type": "PromQL", "promql": {"promql": "vector(1)"}}]}]
	}]
}`

// The service's wire format reads in full, and its matching rules come back with their keys sorted,
// so that two channels' copies of a risk are equal bytes.
func TestParse(t *testing.T) {
	g, err := Parse([]byte(wireGraph420))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 3 || g.Nodes[0].Version != "4.20.8" || g.Nodes[0].Metadata["url"] != "https://access.redhat.com/errata/1" {
		t.Errorf("nodes %+v", g.Nodes)
	}
	if len(g.Edges) != 1 || g.Edges[0] != [2]int{0, 2} {
		t.Errorf("edges %v, want [[0 2]]", g.Edges)
	}
	if len(g.ConditionalEdges) != 1 || g.ConditionalEdges[0].Edges[0] != (ConditionalEdge{From: "4.20.8", To: "4.20.9"}) {
		t.Fatalf("conditional edges %+v", g.ConditionalEdges)
	}
	risk := g.ConditionalEdges[0].Risks[0]
	if risk.Name != "DNSBreaks" || risk.URL != "https://issues.example/DNS-1" || risk.Message != "DNS may stop resolving." ||
		string(risk.MatchingRules[0]) != `{"promql":{"promql":"vector(1)"},"type":"PromQL"}` {
		t.Errorf("risk %+v (rule %s)", risk, risk.MatchingRules[0])
	}
}

// Garbage is an error, never part of a graph.
func TestParseRefusesGarbage(t *testing.T) {
	node := func(v string) string {
		return `{"version":"` + v + `","payload":"quay.io/openshift-release-dev/ocp-release:` + v + `-x86_64"}`
	}
	risk := `[{"name":"R","message":"m","url":"u","matchingRules":[{"type":"Always"}]}]`
	for _, tc := range []struct{ name, body, want string }{
		{name: "not JSON", body: `<html>maintenance</html>`, want: "not an update graph"},
		{name: "truncated", body: `{"nodes":[` + node("4.20.8"), want: "not an update graph"},
		{name: "trailing data", body: `{"nodes":[]} {"nodes":[]}`, want: "not an update graph"},
		{name: "no nodes list", body: `{"edges":[]}`, want: "no nodes list"},
		{name: "an array", body: `[]`, want: "not an update graph"},
		{name: "null", body: `null`, want: "no nodes list"},
		{name: "nodes not a list", body: `{"nodes":"x"}`, want: "not an update graph"},
		{name: "version not semver", body: `{"nodes":[{"version":"4.20","payload":"p"}]}`, want: `version "4.20"`},
		{name: "no payload", body: `{"nodes":[{"version":"4.20.8"}]}`, want: "no payload"},
		{name: "version twice", body: `{"nodes":[` + node("4.20.8") + `,` + node("4.20.8") + `]}`, want: "twice"},
		{name: "edge out of range", body: `{"nodes":[` + node("4.20.8") + `],"edges":[[0,1]]}`, want: "names no node"},
		{name: "negative edge", body: `{"nodes":[` + node("4.20.8") + `],"edges":[[-1,0]]}`, want: "names no node"},
		{name: "edge of one index", body: `{"nodes":[` + node("4.20.8") + `],"edges":[[0]]}`, want: "not [from, to]"},
		{name: "edge of three indexes", body: `{"nodes":[` + node("4.20.8") + `],"edges":[[0,0,0]]}`, want: "not [from, to]"},
		{name: "conditional edge to no node", body: `{"nodes":[` + node("4.20.8") + `],"conditionalEdges":[{"edges":[{"from":"4.20.8","to":"4.20.9"}],"risks":` + risk + `}]}`, want: "names no node"},
		{name: "conditional edge without risk", body: `{"nodes":[` + node("4.20.8") + `,` + node("4.20.9") + `],"conditionalEdges":[{"edges":[{"from":"4.20.8","to":"4.20.9"}],"risks":[]}]}`, want: "no risk"},
		{name: "risk without name", body: `{"nodes":[` + node("4.20.8") + `,` + node("4.20.9") + `],"conditionalEdges":[{"edges":[{"from":"4.20.8","to":"4.20.9"}],"risks":[{"message":"m"}]}]}`, want: "no name"},
		{name: "too deep", body: `{"nodes":[],"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, want: "deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Parse([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %+v, %v; want an error containing %q", g, err, tc.want)
			}
			if g != nil {
				t.Errorf("Parse returned part of a graph: %+v", g)
			}
		})
	}
}

func mustParse(t *testing.T, body string) *Graph {
	t.Helper()
	g, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Two channels merge into one graph, sorted by version, each node listing the polled channels that
// have it; shared edges and risks are there once; the bytes do not depend on the map's order; and the
// version catalog puts each release in the channel groups of its channels.
func TestMerge(t *testing.T) {
	stable := mustParse(t, wireGraph420)
	fast := mustParse(t, `{"nodes":[
		{"version":"4.21.0","payload":"quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64","metadata":{}},
		{"version":"4.20.10","payload":"quay.io/openshift-release-dev/ocp-release:4.20.10-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"candidate-4.21,fast-4.21"}},
		{"version":"4.20.8","payload":"quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64"},
		{"version":"4.20.9","payload":"quay.io/openshift-release-dev/ocp-release:4.20.9-x86_64"}],
		"edges":[[2,1],[1,0]],
		"conditionalEdges":[{"edges":[{"from":"4.20.8","to":"4.20.9"},{"from":"4.20.9","to":"4.21.0"}],
			"risks":[{"url":"https://issues.example/DNS-1","name":"DNSBreaks","message":"DNS may stop resolving.","matchingRules":[{"promql":{"promql":"vector(1)"},"type":"PromQL"}]}]}]}`)

	merged, err := Merge(map[string]*Graph{"stable-4.20": stable, "fast-4.21": fast})
	if err != nil {
		t.Fatal(err)
	}
	data, err := merged.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"nodes":[` +
		`{"version":"4.20.8","payload":"quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.21,stable-4.20","url":"https://access.redhat.com/errata/1"}},` +
		`{"version":"4.20.9","payload":"quay.io/openshift-release-dev/ocp-release:4.20.9-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.21,stable-4.20"}},` +
		`{"version":"4.20.10","payload":"quay.io/openshift-release-dev/ocp-release:4.20.10-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.21,stable-4.20"}},` +
		`{"version":"4.21.0","payload":"quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.21"}}],` +
		`"edges":[[0,2],[2,3]],` +
		`"conditionalEdges":[{"edges":[{"from":"4.20.8","to":"4.20.9"},{"from":"4.20.9","to":"4.21.0"}],` +
		`"risks":[{"url":"https://issues.example/DNS-1","name":"DNSBreaks","message":"DNS may stop resolving.","matchingRules":[{"promql":{"promql":"vector(1)"},"type":"PromQL"}]}]}]}`
	if string(data) != want {
		t.Errorf("merged graph\n%s\nwant\n%s", data, want)
	}
	for range 20 {
		again, _ := Merge(map[string]*Graph{"fast-4.21": fast, "stable-4.20": stable})
		if b, _ := again.Marshal(); !bytes.Equal(b, data) {
			t.Fatalf("merging the same graphs again gave other bytes:\n%s", b)
		}
	}

	catalog, err := versioncatalog.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the version catalog refuses the merged graph: %v", err)
	}
	if got := strings.Join(catalog.Versions("fast"), " "); got != "4.20.8 4.20.9 4.20.10 4.21.0" {
		t.Errorf("channel group fast offers %s", got)
	}
	if got := strings.Join(catalog.Versions("stable"), " "); got != "4.20.8 4.20.9 4.20.10" {
		t.Errorf("channel group stable offers %s", got)
	}
	if got := catalog.Versions("candidate"); len(got) != 0 {
		t.Errorf("channel group candidate offers %v: a channel the service named but the server did not poll counts", got)
	}
}

// One release with two payloads is an upstream mistake the merge does not paper over.
func TestMergeRefusesTwoPayloads(t *testing.T) {
	a := mustParse(t, `{"nodes":[{"version":"4.20.8","payload":"quay.io/a:4.20.8"}]}`)
	b := mustParse(t, `{"nodes":[{"version":"4.20.8","payload":"quay.io/b:4.20.8"}]}`)
	if _, err := Merge(map[string]*Graph{"stable-4.20": a, "fast-4.20": b}); err == nil || !strings.Contains(err.Error(), "4.20.8") {
		t.Errorf("Merge = %v, want an error naming 4.20.8", err)
	}
}

// The part of a merged graph each channel contributed merges back into the same graph, so a stored
// graph can stand in for every channel's graph after a restart.
func TestChannelGraphsMergeBack(t *testing.T) {
	stable := mustParse(t, wireGraph420)
	fast := mustParse(t, `{"nodes":[{"version":"4.20.10","payload":"quay.io/openshift-release-dev/ocp-release:4.20.10-x86_64"},
		{"version":"4.21.0","payload":"quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"}],"edges":[[0,1]]}`)
	merged, err := Merge(map[string]*Graph{"stable-4.20": stable, "fast-4.21": fast})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := merged.Marshal()
	again, err := Merge(map[string]*Graph{"stable-4.20": channelGraph(merged, "stable-4.20"), "fast-4.21": channelGraph(merged, "fast-4.21")})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := again.Marshal(); !bytes.Equal(got, want) {
		t.Errorf("merged back\n%s\nwant\n%s", got, want)
	}
	if g := channelGraph(merged, "fast-4.21"); len(g.Nodes) != 2 || len(g.Edges) != 1 || len(g.ConditionalEdges) != 0 {
		t.Errorf("fast-4.21's part %+v, want 4.20.10 and 4.21.0 and their edge", g)
	}
}
