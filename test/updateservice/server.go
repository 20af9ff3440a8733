package updateservice

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// GraphPath is where the service serves graphs.
const GraphPath = "/api/upgrades_info/v1/graph"

// ChannelsMetadataKey is the node metadata that lists a release's channels.
const ChannelsMetadataKey = "io.openshift.upgrades.graph.release.channels"

// Graph is a channel's update graph, by version; the server turns it into the wire format.
type Graph struct {
	Nodes            []Node
	Edges            []Edge
	ConditionalEdges []ConditionalEdge
}

// Node is a release. An empty Payload is filled in for the requested arch.
type Node struct {
	Version  string
	Payload  string
	Metadata map[string]string
}

// Edge is an unconditional update.
type Edge struct {
	From, To string
}

// ConditionalEdge is an update with known risks.
type ConditionalEdge struct {
	From, To string
	Risks    []Risk
}

// Risk is a known issue of a conditional edge, with matching rules in the wire format
// ({"type":"Always"} or {"type":"PromQL","promql":{"promql":"..."}}).
type Risk struct {
	URL           string            `json:"url"`
	Name          string            `json:"name"`
	Message       string            `json:"message"`
	MatchingRules []json.RawMessage `json:"matchingRules"`
}

// fault is how the server answers instead of serving a graph.
type fault int

const (
	noFault fault = iota
	// unavailable answers 503 Service Unavailable.
	unavailable
	// notAGraph answers 200 with a body that is no graph.
	notAGraph
)

// Server is the update service double. Its zero value is not usable: make it with NewServer or Start.
type Server struct {
	// URL is where Start serves it; empty for a server made by NewServer.
	URL string

	mu           sync.Mutex
	graphs       map[string]*Graph
	lastModified map[string]time.Time
	allFault     fault
	faults       map[string]fault
	requests     map[string]int
	notModified  map[string]int
	rejected     []string
	now          func() time.Time
}

// NewServer returns a server with no graphs and no faults, to serve with any http.Server.
func NewServer() *Server {
	return &Server{
		graphs:       map[string]*Graph{},
		lastModified: map[string]time.Time{},
		faults:       map[string]fault{},
		requests:     map[string]int{},
		notModified:  map[string]int{},
		now:          time.Now,
	}
}

// Start serves a new server on a local port until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := NewServer()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Set replaces a channel's graph. It panics when an edge names a version the graph does not have:
// that is a mistake in the test, and faults are served with Garbage.
func (s *Server) Set(channel string, g Graph) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g = clone(g)
	versions := map[string]bool{}
	for _, n := range g.Nodes {
		versions[n.Version] = true
	}
	for _, e := range g.Edges {
		if !versions[e.From] || !versions[e.To] {
			panic(fmt.Sprintf("updateservice: channel %s: edge %s -> %s names a version the graph does not have", channel, e.From, e.To))
		}
	}
	for _, e := range g.ConditionalEdges {
		if !versions[e.From] || !versions[e.To] {
			panic(fmt.Sprintf("updateservice: channel %s: conditional edge %s -> %s names a version the graph does not have", channel, e.From, e.To))
		}
	}
	s.graphs[channel] = &g
	s.touch()
}

// Graph returns a copy of a channel's graph.
func (s *Server) Graph(channel string) Graph {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.graphs[channel]; g != nil {
		return clone(*g)
	}
	return Graph{}
}

// AddNode adds releases to a channel, with payloads for the requested arch.
func (s *Server) AddNode(channel string, versions ...string) {
	g := s.Graph(channel)
	for _, v := range versions {
		g.Nodes = append(g.Nodes, Node{Version: v})
	}
	s.Set(channel, g)
}

// RemoveNode removes a release from a channel, with its edges, as when a release is pulled.
func (s *Server) RemoveNode(channel, version string) {
	g := s.Graph(channel)
	g.Nodes = slices.DeleteFunc(g.Nodes, func(n Node) bool { return n.Version == version })
	g.Edges = slices.DeleteFunc(g.Edges, func(e Edge) bool { return e.From == version || e.To == version })
	g.ConditionalEdges = slices.DeleteFunc(g.ConditionalEdges, func(e ConditionalEdge) bool { return e.From == version || e.To == version })
	s.Set(channel, g)
}

// AddEdge adds an unconditional update to a channel, between releases it has.
func (s *Server) AddEdge(channel, from, to string) {
	g := s.Graph(channel)
	g.Edges = append(g.Edges, Edge{From: from, To: to})
	s.Set(channel, g)
}

// AddConditionalEdge adds an update with risks to a channel, between releases it has.
func (s *Server) AddConditionalEdge(channel, from, to string, risks ...Risk) {
	g := s.Graph(channel)
	g.ConditionalEdges = append(g.ConditionalEdges, ConditionalEdge{From: from, To: to, Risks: risks})
	s.Set(channel, g)
}

// Down makes the named channels, or all when none is named, answer 503.
func (s *Server) Down(channels ...string) { s.setFault(unavailable, channels) }

// Garbage makes the named channels, or all when none is named, answer 200 with a body that is no graph.
func (s *Server) Garbage(channels ...string) { s.setFault(notAGraph, channels) }

// Up ends the faults of the named channels, or all faults when none is named.
func (s *Server) Up(channels ...string) { s.setFault(noFault, channels) }

func (s *Server) setFault(f fault, channels []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(channels) == 0 {
		s.allFault = f
		clear(s.faults)
		return
	}
	for _, ch := range channels {
		s.faults[ch] = f
	}
}

// Requests is how many requests asked for a channel's graph, whatever the answer.
func (s *Server) Requests(channel string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[channel]
}

// NotModified is how many requests for a channel's graph were answered 304.
func (s *Server) NotModified(channel string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notModified[channel]
}

// Rejected lists why each request answered 400 was rejected.
func (s *Server) Rejected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rejected)
}

// touch moves Last-Modified of every channel: a change to one channel can change the channels
// metadata of the others' nodes.
func (s *Server) touch() {
	for ch := range s.graphs {
		at := s.now().UTC().Truncate(time.Second)
		if prev, ok := s.lastModified[ch]; ok && !at.After(prev) {
			at = prev.Add(time.Second)
		}
		s.lastModified[ch] = at
	}
}

// ServeHTTP answers requests for graphs as the package doc says.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != GraphPath {
		http.NotFound(w, r)
		return
	}
	channel, arch := r.URL.Query().Get("channel"), r.URL.Query().Get("arch")
	s.mu.Lock()
	defer s.mu.Unlock()
	if problem := checkRequest(r, channel, arch); problem != "" {
		s.rejected = append(s.rejected, problem)
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	s.requests[channel]++
	f := s.allFault
	if chf, ok := s.faults[channel]; ok {
		f = chf
	}
	switch f {
	case unavailable:
		http.Error(w, "the update service is unavailable", http.StatusServiceUnavailable)
		return
	case notAGraph:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"nodes":"this is not a graph"`)
		return
	}
	body := s.render(channel, arch)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	modified, known := s.lastModified[channel]
	if known {
		w.Header().Set("Last-Modified", modified.Format(http.TimeFormat))
	}
	if notModified(r, etag, modified, known) {
		s.notModified[channel]++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// checkRequest says what is wrong with a request for a graph, or nothing.
func checkRequest(r *http.Request, channel, arch string) string {
	switch {
	case r.Method != http.MethodGet:
		return fmt.Sprintf("method %s: the graph is read with GET", r.Method)
	case !acceptsJSON(r.Header.Values("Accept")):
		return fmt.Sprintf("Accept %q: the graph is served as application/json only", strings.Join(r.Header.Values("Accept"), ", "))
	case channel == "":
		return "the channel query parameter is missing"
	case arch == "":
		return "the arch query parameter is missing"
	}
	return ""
}

func acceptsJSON(accept []string) bool {
	for _, header := range accept {
		for _, mediaRange := range strings.Split(header, ",") {
			if t, _, err := mime.ParseMediaType(strings.TrimSpace(mediaRange)); err == nil && t == "application/json" {
				return true
			}
		}
	}
	return false
}

// notModified applies RFC 9110's order: If-None-Match when sent, else If-Modified-Since.
func notModified(r *http.Request, etag string, modified time.Time, known bool) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, tag := range strings.Split(inm, ",") {
			if tag = strings.TrimSpace(tag); tag == etag || tag == "*" {
				return true
			}
		}
		return false
	}
	ims, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return known && err == nil && !modified.After(ims)
}

type wireNode struct {
	Version  string            `json:"version"`
	Payload  string            `json:"payload"`
	Metadata map[string]string `json:"metadata"`
}

type wireConditionalEdges struct {
	Edges []wireEdge `json:"edges"`
	Risks []Risk     `json:"risks"`
}

type wireEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// render encodes a channel's graph as the service sends it.
func (s *Server) render(channel, arch string) []byte {
	g := s.graphs[channel]
	if g == nil {
		g = &Graph{}
	}
	out := struct {
		Nodes            []wireNode             `json:"nodes"`
		Edges            [][2]int               `json:"edges"`
		ConditionalEdges []wireConditionalEdges `json:"conditionalEdges"`
	}{Nodes: []wireNode{}, Edges: [][2]int{}, ConditionalEdges: []wireConditionalEdges{}}
	index := map[string]int{}
	for i, n := range g.Nodes {
		index[n.Version] = i
		meta := map[string]string{}
		for k, v := range n.Metadata {
			meta[k] = v
		}
		if _, set := meta[ChannelsMetadataKey]; !set {
			meta[ChannelsMetadataKey] = strings.Join(s.channelsOf(n.Version), ",")
		}
		payload := n.Payload
		if payload == "" {
			payload = fmt.Sprintf("quay.io/openshift-release-dev/ocp-release:%s-%s", n.Version, imageArch(arch))
		}
		out.Nodes = append(out.Nodes, wireNode{Version: n.Version, Payload: payload, Metadata: meta})
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, [2]int{index[e.From], index[e.To]})
	}
	for _, e := range g.ConditionalEdges {
		risks := slices.Clone(e.Risks)
		for i := range risks {
			if risks[i].MatchingRules == nil {
				risks[i].MatchingRules = []json.RawMessage{json.RawMessage(`{"type":"Always"}`)}
			}
		}
		out.ConditionalEdges = append(out.ConditionalEdges, wireConditionalEdges{Edges: []wireEdge{{From: e.From, To: e.To}}, Risks: risks})
	}
	body, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return body
}

// channelsOf lists, sorted, the channels whose graph has a version.
func (s *Server) channelsOf(version string) []string {
	var channels []string
	for ch, g := range s.graphs {
		if slices.ContainsFunc(g.Nodes, func(n Node) bool { return n.Version == version }) {
			channels = append(channels, ch)
		}
	}
	slices.Sort(channels)
	return channels
}

// imageArch is how release image tags name an architecture.
func imageArch(arch string) string {
	switch arch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return arch
}

func clone(g Graph) Graph {
	out := Graph{Edges: slices.Clone(g.Edges)}
	for _, n := range g.Nodes {
		meta := map[string]string(nil)
		if n.Metadata != nil {
			meta = map[string]string{}
			for k, v := range n.Metadata {
				meta[k] = v
			}
		}
		out.Nodes = append(out.Nodes, Node{Version: n.Version, Payload: n.Payload, Metadata: meta})
	}
	for _, e := range g.ConditionalEdges {
		out.ConditionalEdges = append(out.ConditionalEdges, ConditionalEdge{From: e.From, To: e.To, Risks: slices.Clone(e.Risks)})
	}
	return out
}
