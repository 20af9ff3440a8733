package updateservice_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/updateservice"
	updateservicedouble "github.com/aro-hcp/hcp-apiserver/test/updateservice"
)

// get asks the double for a channel's graph the way the update service's clients do, with extra headers.
func get(t *testing.T, s *updateservicedouble.Server, query string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+updateservicedouble.GraphPath+"?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// The double serves the update service's wire format: edges as node indexes, conditional edges by
// version, each node's channels, and payloads for the requested arch. The poller's own parser reads it.
func TestServesTheWireFormat(t *testing.T) {
	s := updateservicedouble.Start(t)
	s.AddNode("stable-4.20", "4.20.8", "4.20.9", "4.20.10")
	s.AddEdge("stable-4.20", "4.20.8", "4.20.10")
	s.AddConditionalEdge("stable-4.20", "4.20.8", "4.20.9", updateservicedouble.Risk{
		Name: "DNSBreaks", Message: "DNS may stop resolving.", URL: "https://issues.example/DNS-1",
		MatchingRules: []json.RawMessage{json.RawMessage(`{"type":"PromQL","promql":{"promql":"vector(1)"}}`)},
	})
	s.AddNode("fast-4.20", "4.20.10")

	resp, body := get(t, s, "channel=stable-4.20&arch=arm64")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("answered %s with Content-Type %q, want 200 application/json", resp.Status, resp.Header.Get("Content-Type"))
	}
	var wire struct {
		Nodes []struct {
			Version, Payload string
			Metadata         map[string]string
		}
		Edges            [][]int
		ConditionalEdges []struct {
			Edges []struct{ From, To string }
			Risks []struct {
				Name, Message, URL string
				MatchingRules      []map[string]any
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &wire); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(wire.Nodes) != 3 || wire.Nodes[2].Version != "4.20.10" ||
		wire.Nodes[2].Payload != "quay.io/openshift-release-dev/ocp-release:4.20.10-aarch64" {
		t.Errorf("nodes %+v, want 4.20.8, 4.20.9, 4.20.10 with aarch64 payloads", wire.Nodes)
	}
	if got := wire.Nodes[2].Metadata[updateservicedouble.ChannelsMetadataKey]; got != "fast-4.20,stable-4.20" {
		t.Errorf("4.20.10 lists channels %q, want fast-4.20,stable-4.20 (every channel that has it)", got)
	}
	if got := wire.Nodes[0].Metadata[updateservicedouble.ChannelsMetadataKey]; got != "stable-4.20" {
		t.Errorf("4.20.8 lists channels %q, want stable-4.20", got)
	}
	if len(wire.Edges) != 1 || wire.Edges[0][0] != 0 || wire.Edges[0][1] != 2 {
		t.Errorf("edges %v, want [[0 2]] (4.20.8 -> 4.20.10 by index)", wire.Edges)
	}
	if len(wire.ConditionalEdges) != 1 || wire.ConditionalEdges[0].Edges[0].From != "4.20.8" || wire.ConditionalEdges[0].Edges[0].To != "4.20.9" ||
		wire.ConditionalEdges[0].Risks[0].Name != "DNSBreaks" || wire.ConditionalEdges[0].Risks[0].MatchingRules[0]["type"] != "PromQL" {
		t.Errorf("conditional edges %+v, want 4.20.8 -> 4.20.9 with risk DNSBreaks and its PromQL rule", wire.ConditionalEdges)
	}
	if _, err := updateservice.Parse([]byte(body)); err != nil {
		t.Errorf("the poller's parser refuses the double's graph: %v", err)
	}

	_, body = get(t, s, "channel=candidate-4.30&arch=amd64")
	if body != `{"nodes":[],"edges":[],"conditionalEdges":[]}` {
		t.Errorf("a channel never set serves %s, want the empty graph", body)
	}

	s.RemoveNode("stable-4.20", "4.20.10")
	_, body = get(t, s, "channel=stable-4.20&arch=amd64")
	if strings.Contains(body, "4.20.10") || strings.Contains(body, `"edges":[[`) {
		t.Errorf("after removing 4.20.10 the graph still has it or its edge: %s", body)
	}
}

// A client that sends the validators it was given gets 304 until the channel changes; a change moves
// both the ETag and Last-Modified, even within the same second.
func TestConditionalRequests(t *testing.T) {
	s := updateservicedouble.Start(t)
	s.AddNode("stable-4.20", "4.20.8")
	first, _ := get(t, s, "channel=stable-4.20&arch=amd64")
	etag, modified := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
	if etag == "" || modified == "" {
		t.Fatalf("no validators: ETag %q, Last-Modified %q", etag, modified)
	}
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{name: "the same ETag", header: []string{"If-None-Match", etag}, want: http.StatusNotModified},
		{name: "another ETag", header: []string{"If-None-Match", `"other"`}, want: http.StatusOK},
		{name: "not modified since", header: []string{"If-Modified-Since", modified}, want: http.StatusNotModified},
		{name: "If-None-Match wins over If-Modified-Since", header: []string{"If-None-Match", `"other"`, "If-Modified-Since", modified}, want: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if resp, _ := get(t, s, "channel=stable-4.20&arch=amd64", tc.header...); resp.StatusCode != tc.want {
				t.Errorf("answered %s, want %d", resp.Status, tc.want)
			}
		})
	}
	if got := s.NotModified("stable-4.20"); got != 2 {
		t.Errorf("NotModified = %d, want 2", got)
	}

	s.AddNode("stable-4.20", "4.20.9")
	resp, body := get(t, s, "channel=stable-4.20&arch=amd64", "If-None-Match", etag, "If-Modified-Since", modified)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "4.20.9") {
		t.Fatalf("after a change answered %s %s, want 200 with 4.20.9", resp.Status, body)
	}
	if resp.Header.Get("ETag") == etag || resp.Header.Get("Last-Modified") == modified {
		t.Errorf("after a change the validators stayed: ETag %s, Last-Modified %s", etag, modified)
	}
	if resp, _ := get(t, s, "channel=stable-4.20&arch=amd64", "If-Modified-Since", modified); resp.StatusCode != http.StatusOK {
		t.Errorf("If-Modified-Since before the change answered %s, want 200", resp.Status)
	}
}

// Requests the real service would not answer get 400 and are listed; they count for no channel.
func TestRejectsBadRequests(t *testing.T) {
	s := updateservicedouble.Start(t)
	for _, tc := range []struct {
		name, method, accept, query string
	}{
		{name: "POST", method: http.MethodPost, accept: "application/json", query: "channel=stable-4.20&arch=amd64"},
		{name: "no Accept", method: http.MethodGet, query: "channel=stable-4.20&arch=amd64"},
		{name: "Accept text/html", method: http.MethodGet, accept: "text/html", query: "channel=stable-4.20&arch=amd64"},
		{name: "no channel", method: http.MethodGet, accept: "application/json", query: "arch=amd64"},
		{name: "no arch", method: http.MethodGet, accept: "application/json", query: "channel=stable-4.20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, s.URL+updateservicedouble.GraphPath+"?"+tc.query, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("answered %s, want 400", resp.Status)
			}
		})
	}
	if got := len(s.Rejected()); got != 5 {
		t.Errorf("Rejected lists %d requests, want 5: %q", got, s.Rejected())
	}
	if got := s.Requests("stable-4.20"); got != 0 {
		t.Errorf("rejected requests counted for the channel: %d", got)
	}
	if resp, _ := get(t, s, "channel=stable-4.20&arch=amd64", "Accept", "text/html, application/json;q=0.9"); resp.StatusCode != http.StatusOK {
		t.Errorf("an Accept list with application/json answered %s, want 200", resp.Status)
	}
}

// Faults switch on and off, for every channel or the ones named, and every request is counted.
func TestFaults(t *testing.T) {
	s := updateservicedouble.Start(t)
	s.AddNode("stable-4.20", "4.20.8")
	s.AddNode("fast-4.20", "4.20.8")
	status := func(channel string) (int, error) {
		resp, body := get(t, s, "channel="+channel+"&arch=amd64")
		_, err := updateservice.Parse([]byte(body))
		return resp.StatusCode, err
	}

	s.Down()
	if code, _ := status("stable-4.20"); code != http.StatusServiceUnavailable {
		t.Errorf("Down: answered %d, want 503", code)
	}
	s.Garbage("fast-4.20")
	if code, err := status("fast-4.20"); code != http.StatusOK || err == nil {
		t.Errorf("Garbage on fast-4.20: answered %d and a body that parses (%v), want 200 with no graph", code, err)
	}
	if code, _ := status("stable-4.20"); code != http.StatusServiceUnavailable {
		t.Errorf("the other channels stay down: answered %d, want 503", code)
	}
	s.Up("stable-4.20")
	if code, err := status("stable-4.20"); code != http.StatusOK || err != nil {
		t.Errorf("Up on stable-4.20: answered %d, %v; want a graph", code, err)
	}
	s.Up()
	if code, err := status("fast-4.20"); code != http.StatusOK || err != nil {
		t.Errorf("Up: answered %d, %v; want a graph", code, err)
	}
	if got := s.Requests("stable-4.20"); got != 3 {
		t.Errorf("Requests(stable-4.20) = %d, want 3", got)
	}
	if got := s.Requests("fast-4.20"); got != 2 {
		t.Errorf("Requests(fast-4.20) = %d, want 2", got)
	}
}

// Set refuses an edge to a version the graph lacks: the test is wrong, not the service.
func TestSetPanicsOnAnEdgeToNoNode(t *testing.T) {
	s := updateservicedouble.NewServer()
	defer func() {
		if recover() == nil {
			t.Error("Set took an edge to a version the graph does not have")
		}
	}()
	s.Set("stable-4.20", updateservicedouble.Graph{
		Nodes: []updateservicedouble.Node{{Version: "4.20.8"}},
		Edges: []updateservicedouble.Edge{{From: "4.20.8", To: "4.20.9"}},
	})
}
