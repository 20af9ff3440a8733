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
	"strings"
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

// Catalog is the set of releases per channel group (stable, fast, candidate, nightly).
type Catalog struct {
	// groups holds each group's releases, oldest first.
	groups map[string][]Release
	// endOfLife is each minor's end of life, from the service's Lifecycle.
	endOfLife map[string]time.Time
}

// graph is the Cincinnati wire format.
type graph struct {
	Nodes []struct {
		Version  string            `json:"version"`
		Payload  string            `json:"payload"`
		Metadata map[string]string `json:"metadata"`
	} `json:"nodes"`
	Edges [][2]int `json:"edges"`
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
	c := &Catalog{groups: map[string][]Release{}}
	for i, n := range g.Nodes {
		v, err := version.ParseSemantic(n.Version)
		if err != nil {
			return nil, fmt.Errorf("node %d: version %q: %w", i, n.Version, err)
		}
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

// Minors returns the MAJOR.MINOR versions a group offers, oldest first.
func (c *Catalog) Minors(group string) []string {
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
	var versions []string
	for _, r := range c.groups[group] {
		versions = append(versions, r.Version.String())
	}
	return versions
}

// Find returns the release of a full version in a group.
func (c *Catalog) Find(group, fullVersion string) (Release, bool) {
	v, err := version.ParseSemantic(fullVersion)
	if err != nil {
		return Release{}, false
	}
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
	var patches []Release
	for _, r := range c.groups[group] {
		if MajorMinor(r.Version) == minor {
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
// current (empty at first). A resolved version never moves down: a catalog that now offers an older patch
// of the same minor (a release pulled from stable, say) leaves the cluster where it is.
func (c *Catalog) ResolveCluster(group, minor, current string) Resolution {
	release, ok := c.Resolve(group, minor)
	if !ok {
		return Resolution{Desired: current, Reason: "NotInCatalog",
			Message: fmt.Sprintf("the version catalog offers no %s release in channel group %s", minor, group)}
	}
	resolved := release.Version
	if v, err := version.ParseSemantic(current); err == nil && MajorMinor(v) == minor && v.GreaterThan(resolved) {
		if _, known := c.Find(group, v.String()); known {
			resolved = v
		}
	}
	return Resolution{Desired: resolved.String(), Resolved: true, Reason: "Resolved",
		Message: fmt.Sprintf("%s in channel group %s resolves to %s", minor, group, resolved)}
}

// MajorMinor prints the MAJOR.MINOR of a version.
func MajorMinor(v *version.Version) string {
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
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
