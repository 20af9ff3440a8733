// Package versioncatalog knows which OpenShift releases the service offers in
// each channel group. It reads the Cincinnati graph format that the OpenShift
// update service serves, so a real graph can replace the compiled-in default.
package versioncatalog

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
)

// ChannelsMetadataKey is where a Cincinnati node lists the channels ("stable-4.20,fast-4.20") it is in.
const ChannelsMetadataKey = "io.openshift.upgrades.graph.release.channels"

//go:embed default-graph.json
var defaultGraph []byte

// Release is one OpenShift release.
type Release struct {
	Version *version.Version
	// Payload is the release image.
	Payload string
}

// Catalog is the set of releases per channel group (stable, fast, candidate, nightly) and the update
// graph's edges between them. A catalog made by NewLive follows what Replace gives it: every method
// reads the newest, so the server and its controllers share one catalog that the update service moves.
type Catalog struct {
	// groups holds each group's releases, oldest first.
	groups map[string][]Release
	// endOfLife is each minor's end of life, from the service's Lifecycle.
	endOfLife map[string]time.Time
	// edges are the graph's edges from each full version.
	edges map[string][]Edge
	// live, when set, holds the catalog that replaced this one.
	live *live
}

// Edge is an edge of the update graph: an update the update service offers.
type Edge struct {
	// To is the full version the edge leads to.
	To string
	// Risks are the known issues of a conditional edge; none for an unconditional one.
	Risks []Risk
}

// Risk is a known issue of a conditional edge, as the update service names it.
type Risk struct {
	Name, Message, URL string
}

type live struct {
	mu        sync.RWMutex
	current   *Catalog
	listeners map[int]func()
	next      int
}

// NewLive returns a catalog that serves initial until Replace gives it another.
func NewLive(initial *Catalog) *Catalog {
	c := *initial.now()
	c.live = &live{current: initial.now(), listeners: map[int]func(){}}
	return &c
}

// Replace makes a live catalog serve next from now on, and tells its listeners. It does nothing to a
// catalog NewLive did not make.
func (c *Catalog) Replace(next *Catalog) {
	if c.live == nil {
		return
	}
	c.live.mu.Lock()
	c.live.current = next.now()
	listeners := make([]func(), 0, len(c.live.listeners))
	for _, l := range c.live.listeners {
		listeners = append(listeners, l)
	}
	c.live.mu.Unlock()
	for _, l := range listeners {
		l()
	}
}

// OnReplace calls f after each Replace of a live catalog (a controller re-resolves its objects) until
// remove is called: controllers that run while their replica leads stop listening when they stop.
func (c *Catalog) OnReplace(f func()) (remove func()) {
	if c.live == nil {
		return func() {}
	}
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	id := c.live.next
	c.live.next++
	c.live.listeners[id] = f
	return func() {
		c.live.mu.Lock()
		defer c.live.mu.Unlock()
		delete(c.live.listeners, id)
	}
}

// now is the catalog c stands for at this moment.
func (c *Catalog) now() *Catalog {
	if c.live == nil {
		return c
	}
	c.live.mu.RLock()
	defer c.live.mu.RUnlock()
	return c.live.current
}

// graph is the Cincinnati wire format.
type graph struct {
	Nodes []struct {
		Version  string            `json:"version"`
		Payload  string            `json:"payload"`
		Metadata map[string]string `json:"metadata"`
	} `json:"nodes"`
	Edges            [][2]int `json:"edges"`
	ConditionalEdges []struct {
		Edges []struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"edges"`
		Risks []struct {
			URL     string `json:"url"`
			Name    string `json:"name"`
			Message string `json:"message"`
		} `json:"risks"`
	} `json:"conditionalEdges"`
}

// Default returns the catalog compiled into the server, with the compiled-in life cycle.
func Default() *Catalog {
	c, err := Parse(strings.NewReader(string(defaultGraph)))
	if err == nil {
		c, err = c.WithLifecycle(DefaultLifecycle())
	}
	if err != nil {
		panic(fmt.Sprintf("the compiled-in version catalog is invalid: %v", err))
	}
	return c
}

// LoadFile reads a Cincinnati graph from a file.
func LoadFile(path string) (*Catalog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("version catalog %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a Cincinnati graph. A node belongs to the channel group of each of its channels
// ("stable-4.20" is in group stable); a node without channels is in no group.
func Parse(r io.Reader) (*Catalog, error) {
	var g graph
	if err := json.NewDecoder(r).Decode(&g); err != nil {
		return nil, fmt.Errorf("not a Cincinnati graph: %w", err)
	}
	c := &Catalog{groups: map[string][]Release{}, edges: map[string][]Edge{}}
	versions := make([]*version.Version, len(g.Nodes))
	for i, n := range g.Nodes {
		v, err := version.ParseSemantic(n.Version)
		if err != nil {
			return nil, fmt.Errorf("node %d: version %q: %w", i, n.Version, err)
		}
		versions[i] = v
		for _, channel := range strings.Split(n.Metadata[ChannelsMetadataKey], ",") {
			dash := strings.LastIndex(channel, "-")
			if dash <= 0 {
				continue
			}
			group := strings.TrimSpace(channel[:dash])
			if !slices.ContainsFunc(c.groups[group], func(r Release) bool { return r.Version.EqualTo(v) }) {
				c.groups[group] = append(c.groups[group], Release{Version: v, Payload: n.Payload})
			}
		}
	}
	if err := c.addEdges(&g, versions); err != nil {
		return nil, err
	}
	for _, releases := range c.groups {
		slices.SortFunc(releases, func(a, b Release) int {
			switch {
			case a.Version.LessThan(b.Version):
				return -1
			case b.Version.LessThan(a.Version):
				return 1
			}
			return 0
		})
	}
	return c, nil
}

// addEdges reads the graph's edges, unconditional and conditional, by the versions of its nodes. An
// update that is both is unconditional.
func (c *Catalog) addEdges(g *graph, versions []*version.Version) error {
	known := map[string]bool{}
	for _, v := range versions {
		known[v.String()] = true
	}
	unconditional := map[[2]string]bool{}
	for i, e := range g.Edges {
		if e[0] < 0 || e[0] >= len(versions) || e[1] < 0 || e[1] >= len(versions) {
			return fmt.Errorf("edge %d: %v names no node", i, e)
		}
		from, to := versions[e[0]].String(), versions[e[1]].String()
		if !unconditional[[2]string{from, to}] {
			unconditional[[2]string{from, to}] = true
			c.edges[from] = append(c.edges[from], Edge{To: to})
		}
	}
	for i, ce := range g.ConditionalEdges {
		var risks []Risk
		for _, r := range ce.Risks {
			risks = append(risks, Risk{Name: r.Name, Message: r.Message, URL: r.URL})
		}
		if len(risks) == 0 {
			return fmt.Errorf("conditional edges %d: no risk", i)
		}
		for _, e := range ce.Edges {
			from, errFrom := version.ParseSemantic(e.From)
			to, errTo := version.ParseSemantic(e.To)
			if errFrom != nil || errTo != nil || !known[from.String()] || !known[to.String()] {
				return fmt.Errorf("conditional edges %d: %s -> %s names no node", i, e.From, e.To)
			}
			if unconditional[[2]string{from.String(), to.String()}] {
				continue
			}
			j := slices.IndexFunc(c.edges[from.String()], func(x Edge) bool { return x.To == to.String() })
			if j < 0 {
				c.edges[from.String()] = append(c.edges[from.String()], Edge{To: to.String(), Risks: slices.Clone(risks)})
			} else {
				c.edges[from.String()][j].Risks = append(c.edges[from.String()][j].Risks, risks...)
			}
		}
	}
	return nil
}

// Upgrades returns the edges from a full version to releases a group offers, oldest target first.
func (c *Catalog) Upgrades(group, from string) []Edge {
	c = c.now()
	v, err := version.ParseSemantic(from)
	if err != nil {
		return nil
	}
	var out []Edge
	for _, e := range c.edges[v.String()] {
		if _, ok := c.Find(group, e.To); ok {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Edge) int {
		n, _ := version.MustParseSemantic(a.To).Compare(b.To)
		return n
	})
	return out
}

// PatchUpgrade is where the service moves a cluster on its own within its minor.
type PatchUpgrade struct {
	// Next is the release the cluster moves to now: an unconditional edge from its version.
	Next Release
	// Goal is the newest release it can reach that way, over one edge or more.
	Goal Release
}

// NextPatch says where a cluster on current in a group moves on its own: along unconditional edges,
// within current's minor, never past the release Resolve picks for that minor (in stable the
// second-newest patch, which has had time to prove itself). False when it stays where it is.
func (c *Catalog) NextPatch(group, current string) (PatchUpgrade, bool) {
	c = c.now()
	from, err := version.ParseSemantic(current)
	if err != nil {
		return PatchUpgrade{}, false
	}
	ceiling, ok := c.Resolve(group, MajorMinor(from))
	if !ok || !ceiling.Version.GreaterThan(from) {
		return PatchUpgrade{}, false
	}
	eligible := func(to string) (Release, bool) {
		r, ok := c.Find(group, to)
		if !ok || MajorMinor(r.Version) != MajorMinor(from) || r.Version.GreaterThan(ceiling.Version) {
			return Release{}, false
		}
		return r, true
	}
	var up PatchUpgrade
	// The next step is the newest direct edge; the goal is the newest release reachable.
	seen := map[string]bool{from.String(): true}
	frontier := []string{from.String()}
	for len(frontier) > 0 {
		at := frontier[0]
		frontier = frontier[1:]
		for _, e := range c.edges[at] {
			if len(e.Risks) > 0 || seen[e.To] {
				continue
			}
			r, ok := eligible(e.To)
			if !ok || !r.Version.GreaterThan(from) {
				continue
			}
			seen[e.To] = true
			frontier = append(frontier, e.To)
			if at == from.String() && (up.Next.Version == nil || r.Version.GreaterThan(up.Next.Version)) {
				up.Next = r
			}
			if up.Goal.Version == nil || r.Version.GreaterThan(up.Goal.Version) {
				up.Goal = r
			}
		}
	}
	return up, up.Next.Version != nil
}

// Groups returns the channel groups the catalog offers releases in, sorted.
func (c *Catalog) Groups() []string {
	c = c.now()
	groups := make([]string, 0, len(c.groups))
	for g := range c.groups {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	return groups
}

// Minors returns the MAJOR.MINOR versions a group offers, oldest first.
func (c *Catalog) Minors(group string) []string {
	c = c.now()
	var minors []string
	for _, r := range c.groups[group] {
		m := MajorMinor(r.Version)
		if !slices.Contains(minors, m) {
			minors = append(minors, m)
		}
	}
	return minors
}

// Versions returns the full versions a group offers, oldest first.
func (c *Catalog) Versions(group string) []string {
	c = c.now()
	var versions []string
	for _, r := range c.groups[group] {
		versions = append(versions, r.Version.String())
	}
	return versions
}

// Find returns the release of a full version in a group.
func (c *Catalog) Find(group, fullVersion string) (Release, bool) {
	c = c.now()
	v, err := version.ParseSemantic(fullVersion)
	if err != nil {
		return Release{}, false
	}
	return c.find(group, v)
}

func (c *Catalog) find(group string, v *version.Version) (Release, bool) {
	for _, r := range c.groups[group] {
		if r.Version.EqualTo(v) {
			return r, true
		}
	}
	return Release{}, false
}

// Resolve picks the release a cluster asking for minor (MAJOR.MINOR) in a group gets: in stable the
// second-newest patch of the minor, which has had time to prove itself; elsewhere the newest.
func (c *Catalog) Resolve(group, minor string) (Release, bool) {
	c = c.now()
	var patches []Release
	for _, r := range c.groups[group] {
		if inMinor(r.Version, minor) {
			patches = append(patches, r)
		}
	}
	switch {
	case len(patches) == 0:
		return Release{}, false
	case group == "stable" && len(patches) > 1:
		return patches[len(patches)-2], true
	default:
		return patches[len(patches)-1], true
	}
}

// Resolution is what a cluster's version resolves to, worded for its VersionResolved condition.
type Resolution struct {
	// Desired is the full version; empty when the catalog has none.
	Desired  string
	Resolved bool
	Reason   string
	Message  string
}

// ResolveCluster resolves the version a cluster asks for (minor in group), which currently resolved to
// current (empty at first). A cluster already on a release of that minor in the group stays on it: it
// moves on only along the update graph (NextPatch), which its controller decides. A resolved version never
// moves down: when the catalog no longer offers it (a release pulled, say) and picks an older one, the
// cluster stays where it is, unresolved, rather than be sent a downgrade; a newer pick moves it on.
func (c *Catalog) ResolveCluster(group, minor, current string) Resolution {
	c = c.now()
	held := releaseOf(minor, current)
	if held != nil {
		if _, offered := c.find(group, held); offered {
			return Resolution{Desired: held.String(), Resolved: true, Reason: "Resolved",
				Message: fmt.Sprintf("%s in channel group %s resolves to %s", minor, group, held)}
		}
	}
	release, ok := c.Resolve(group, minor)
	switch {
	case !ok:
		return Resolution{Desired: current, Reason: "NotInCatalog",
			Message: fmt.Sprintf("the version catalog offers no %s release in channel group %s", minor, group)}
	case held != nil && release.Version.LessThan(held):
		return Resolution{Desired: current, Reason: "NotInCatalog",
			Message: fmt.Sprintf("the version catalog no longer offers %s in channel group %s, and the cluster stays on it rather than move down to %s, which %s resolves to now",
				held, group, release.Version, minor)}
	}
	return Resolution{Desired: release.Version.String(), Resolved: true, Reason: "Resolved",
		Message: fmt.Sprintf("%s in channel group %s resolves to %s", minor, group, release.Version)}
}

// releaseOf parses current when it is a full version of minor, and returns nil otherwise.
func releaseOf(minor, current string) *version.Version {
	if current == "" { // a new cluster: not worth a parse error
		return nil
	}
	v, err := version.ParseSemantic(current)
	if err != nil || !inMinor(v, minor) {
		return nil
	}
	return v
}

// MajorMinor prints the MAJOR.MINOR of a version.
func MajorMinor(v *version.Version) string {
	return strconv.FormatUint(uint64(v.Major()), 10) + "." + strconv.FormatUint(uint64(v.Minor()), 10)
}

// inMinor says whether v is a release of minor (MAJOR.MINOR) without printing v's: every create resolves
// its cluster's version against each release of its channel group, twice.
func inMinor(v *version.Version, minor string) bool {
	major, rest, ok := strings.Cut(minor, ".")
	return ok && major == strconv.FormatUint(uint64(v.Major()), 10) && rest == strconv.FormatUint(uint64(v.Minor()), 10)
}

// Load reads a Cincinnati graph from a file, or from an http(s) URL as the OpenShift update service
// serves it (asking for application/json, as its clients do).
func Load(ctx context.Context, location string) (*Catalog, error) {
	if !strings.HasPrefix(location, "http://") && !strings.HasPrefix(location, "https://") {
		return LoadFile(location)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, fmt.Errorf("version catalog %s: %w", location, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("version catalog %s: %w", location, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("version catalog %s: the server answered %s", location, resp.Status)
	}
	c, err := Parse(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("version catalog %s: %w", location, err)
	}
	return c, nil
}
