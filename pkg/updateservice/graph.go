package updateservice

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// Graph is an update graph in the wire format of the update service's
// /api/upgrades_info/v1/graph.
type Graph struct {
	Nodes []Node `json:"nodes"`
	// Edges are unconditional updates, as indexes into Nodes: [from, to].
	Edges [][2]int `json:"edges"`
	// ConditionalEdges are updates with known risks, by version.
	ConditionalEdges []ConditionalEdges `json:"conditionalEdges"`
}

// Node is a release.
type Node struct {
	Version string `json:"version"`
	// Payload is the release image.
	Payload  string            `json:"payload"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// ConditionalEdges are updates that share the same risks.
type ConditionalEdges struct {
	Edges []ConditionalEdge `json:"edges"`
	Risks []Risk            `json:"risks"`
}

// ConditionalEdge is an update from one version to another.
type ConditionalEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Risk is a known issue of conditional edges.
type Risk struct {
	URL     string `json:"url"`
	Name    string `json:"name"`
	Message string `json:"message"`
	// MatchingRules say which clusters the risk applies to. They are kept as the service sent them
	// (with their keys sorted), since the server only passes them on.
	MatchingRules []json.RawMessage `json:"matchingRules,omitempty"`
}

// wireGraph is what Parse decodes before it checks anything: edges of any length, a nodes key
// that may be missing.
type wireGraph struct {
	Nodes            *[]Node            `json:"nodes"`
	Edges            [][]int            `json:"edges"`
	ConditionalEdges []ConditionalEdges `json:"conditionalEdges"`
}

// Parse reads and checks a graph: it has a nodes list, every node a semantic version (none twice)
// and a payload, every edge two indexes of nodes, every conditional edge two versions of nodes and at
// least one named risk. A graph that fails any of these is an error, never part of a graph. Versions
// come back in their canonical form, and matching rules with their keys sorted.
func Parse(data []byte) (*Graph, error) {
	if err := jsonlimit.CheckDepth(data, jsonlimit.MaxDepth); err != nil {
		return nil, fmt.Errorf("not an update graph: %w", err)
	}
	var w wireGraph
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("not an update graph: %w", err)
	}
	if w.Nodes == nil {
		return nil, errors.New("not an update graph: it has no nodes list")
	}
	g := &Graph{Nodes: *w.Nodes, Edges: make([][2]int, 0, len(w.Edges)), ConditionalEdges: w.ConditionalEdges}
	known := make(map[string]bool, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		v, err := version.ParseSemantic(n.Version)
		if err != nil {
			return nil, fmt.Errorf("node %d: version %q: %w", i, n.Version, err)
		}
		n.Version = v.String()
		if known[n.Version] {
			return nil, fmt.Errorf("node %d: version %s is in the graph twice", i, n.Version)
		}
		known[n.Version] = true
		if n.Payload == "" {
			return nil, fmt.Errorf("node %d (%s): no payload", i, n.Version)
		}
	}
	for i, e := range w.Edges {
		if len(e) != 2 {
			return nil, fmt.Errorf("edge %d: %v is not [from, to]", i, e)
		}
		if e[0] < 0 || e[0] >= len(g.Nodes) || e[1] < 0 || e[1] >= len(g.Nodes) {
			return nil, fmt.Errorf("edge %d: %v names no node", i, e)
		}
		g.Edges = append(g.Edges, [2]int{e[0], e[1]})
	}
	for i := range g.ConditionalEdges {
		ce := &g.ConditionalEdges[i]
		if len(ce.Risks) == 0 {
			return nil, fmt.Errorf("conditional edges %d: no risk", i)
		}
		for j := range ce.Risks {
			r := &ce.Risks[j]
			if r.Name == "" {
				return nil, fmt.Errorf("conditional edges %d: risk %d has no name", i, j)
			}
			for k, rule := range r.MatchingRules {
				canonical, err := sortKeys(rule)
				if err != nil {
					return nil, fmt.Errorf("conditional edges %d: risk %s: matching rule %d: %w", i, r.Name, k, err)
				}
				r.MatchingRules[k] = canonical
			}
		}
		for j := range ce.Edges {
			e := &ce.Edges[j]
			from, errFrom := version.ParseSemantic(e.From)
			to, errTo := version.ParseSemantic(e.To)
			if errFrom != nil || errTo != nil || !known[from.String()] || !known[to.String()] {
				return nil, fmt.Errorf("conditional edges %d: %s -> %s names no node", i, e.From, e.To)
			}
			e.From, e.To = from.String(), to.String()
		}
	}
	if g.ConditionalEdges == nil {
		g.ConditionalEdges = []ConditionalEdges{}
	}
	return g, nil
}

// sortKeys re-encodes a JSON value with its object keys sorted, so that equal rules are equal bytes.
func sortKeys(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Marshal encodes the graph in the wire format, with empty lists rather than null ones, as the
// service sends them. Equal graphs in the same order encode to the same bytes; Merge's are in order.
func (g *Graph) Marshal() ([]byte, error) {
	out := *g
	if out.Nodes == nil {
		out.Nodes = []Node{}
	}
	if out.Edges == nil {
		out.Edges = [][2]int{}
	}
	if out.ConditionalEdges == nil {
		out.ConditionalEdges = []ConditionalEdges{}
	}
	return json.Marshal(out)
}

// Merge joins the graphs of several channels into one. A node's
// io.openshift.upgrades.graph.release.channels lists the channels of graphs it is in, sorted and
// comma-separated (what the service said there is replaced: the server offers a release in a channel
// group only when it polled a channel of that group that has it); its other metadata is the union,
// the first channel in sorted order winning a key two channels disagree on. Nodes are sorted by
// version, edges by their nodes, and edges and conditional edges are deduplicated; conditional edges
// with the same risks are one entry, entries sorted by their risks. A version with two payloads is
// an error.
func Merge(graphs map[string]*Graph) (*Graph, error) {
	channels := make([]string, 0, len(graphs))
	for ch := range graphs {
		channels = append(channels, ch)
	}
	slices.Sort(channels)

	type merged struct {
		node     Node
		version  *version.Version
		channels []string
		payload  string // the channel that gave the payload, for the error
	}
	nodes := map[string]*merged{}
	for _, ch := range channels {
		for _, n := range graphs[ch].Nodes {
			v, err := version.ParseSemantic(n.Version)
			if err != nil {
				return nil, fmt.Errorf("channel %s: version %q: %w", ch, n.Version, err)
			}
			m, ok := nodes[v.String()]
			if !ok {
				m = &merged{node: Node{Version: v.String(), Payload: n.Payload, Metadata: map[string]string{}}, version: v, payload: ch}
				nodes[v.String()] = m
			} else if m.node.Payload != n.Payload {
				return nil, fmt.Errorf("version %s has payload %s in channel %s and %s in channel %s",
					n.Version, m.node.Payload, m.payload, n.Payload, ch)
			}
			for k, v := range n.Metadata {
				if _, set := m.node.Metadata[k]; !set && k != versioncatalog.ChannelsMetadataKey {
					m.node.Metadata[k] = v
				}
			}
			if !slices.Contains(m.channels, ch) {
				m.channels = append(m.channels, ch)
			}
		}
	}
	sorted := make([]*merged, 0, len(nodes))
	for _, m := range nodes {
		sorted = append(sorted, m)
	}
	slices.SortFunc(sorted, func(a, b *merged) int {
		switch {
		case a.version.LessThan(b.version):
			return -1
		case b.version.LessThan(a.version):
			return 1
		}
		return 0
	})

	out := &Graph{Nodes: make([]Node, len(sorted)), Edges: [][2]int{}, ConditionalEdges: []ConditionalEdges{}}
	index := make(map[string]int, len(sorted))
	for i, m := range sorted {
		m.node.Metadata[versioncatalog.ChannelsMetadataKey] = strings.Join(m.channels, ",")
		out.Nodes[i] = m.node
		index[m.node.Version] = i
	}

	edges := map[[2]int]bool{}
	byRisks := map[string]*ConditionalEdges{}
	conditional := map[string]map[[2]int]bool{}
	for _, ch := range channels {
		g := graphs[ch]
		at := func(i int) (int, error) {
			if i < 0 || i >= len(g.Nodes) {
				return 0, fmt.Errorf("channel %s: edge to node %d, which is not there", ch, i)
			}
			return index[version.MustParseSemantic(g.Nodes[i].Version).String()], nil
		}
		for _, e := range g.Edges {
			from, err := at(e[0])
			if err != nil {
				return nil, err
			}
			to, err := at(e[1])
			if err != nil {
				return nil, err
			}
			edges[[2]int{from, to}] = true
		}
		for _, ce := range g.ConditionalEdges {
			risks := slices.Clone(ce.Risks)
			slices.SortFunc(risks, compareRisks)
			key, err := json.Marshal(risks)
			if err != nil {
				return nil, err
			}
			if byRisks[string(key)] == nil {
				byRisks[string(key)] = &ConditionalEdges{Risks: risks}
				conditional[string(key)] = map[[2]int]bool{}
			}
			for _, e := range ce.Edges {
				from, okFrom := index[canonical(e.From)]
				to, okTo := index[canonical(e.To)]
				if !okFrom || !okTo {
					return nil, fmt.Errorf("channel %s: conditional edge %s -> %s names no node", ch, e.From, e.To)
				}
				conditional[string(key)][[2]int{from, to}] = true
			}
		}
	}
	for e := range edges {
		out.Edges = append(out.Edges, e)
	}
	slices.SortFunc(out.Edges, compareEdges)
	keys := make([]string, 0, len(byRisks))
	for k := range byRisks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pairs := make([][2]int, 0, len(conditional[k]))
		for e := range conditional[k] {
			pairs = append(pairs, e)
		}
		if len(pairs) == 0 {
			continue
		}
		slices.SortFunc(pairs, compareEdges)
		ce := byRisks[k]
		for _, e := range pairs {
			ce.Edges = append(ce.Edges, ConditionalEdge{From: out.Nodes[e[0]].Version, To: out.Nodes[e[1]].Version})
		}
		out.ConditionalEdges = append(out.ConditionalEdges, *ce)
	}
	return out, nil
}

// canonical is a version's canonical form, or "" when it is not one.
func canonical(v string) string {
	parsed, err := version.ParseSemantic(v)
	if err != nil {
		return ""
	}
	return parsed.String()
}

func compareEdges(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

func compareRisks(a, b Risk) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.URL, b.URL); c != 0 {
		return c
	}
	if c := strings.Compare(a.Message, b.Message); c != 0 {
		return c
	}
	return slices.CompareFunc(a.MatchingRules, b.MatchingRules, func(x, y json.RawMessage) int { return bytes.Compare(x, y) })
}

// channelGraph is the part of a merged graph that a channel contributed: the nodes that list it and
// the edges between them. The update service's graph of a channel is exactly that, so a stored merged
// graph stands in for each channel's graph until the service answers.
func channelGraph(merged *Graph, channel string) *Graph {
	out := &Graph{Nodes: []Node{}, Edges: [][2]int{}, ConditionalEdges: []ConditionalEdges{}}
	index := map[int]int{}
	inChannel := map[string]bool{}
	for i, n := range merged.Nodes {
		if slices.Contains(strings.Split(n.Metadata[versioncatalog.ChannelsMetadataKey], ","), channel) {
			index[i] = len(out.Nodes)
			inChannel[n.Version] = true
			out.Nodes = append(out.Nodes, n)
		}
	}
	for _, e := range merged.Edges {
		from, okFrom := index[e[0]]
		to, okTo := index[e[1]]
		if okFrom && okTo {
			out.Edges = append(out.Edges, [2]int{from, to})
		}
	}
	for _, ce := range merged.ConditionalEdges {
		kept := ConditionalEdges{Risks: ce.Risks}
		for _, e := range ce.Edges {
			if inChannel[e.From] && inChannel[e.To] {
				kept.Edges = append(kept.Edges, e)
			}
		}
		if len(kept.Edges) > 0 {
			out.ConditionalEdges = append(out.ConditionalEdges, kept)
		}
	}
	return out
}
