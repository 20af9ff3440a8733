package versioncatalog

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// FuzzParse reads Cincinnati graphs, as --version-catalog reads a file or an update service's answer.
// A catalog that parses keeps each group's releases oldest first without duplicates, finds each of them
// by its printed version, resolves each of its minors to a release of that minor, and reads back the same
// from a graph written from it.
func FuzzParse(f *testing.F) {
	f.Add(defaultGraph)
	f.Add([]byte(`{"nodes":[
		{"version":"4.20.1+b","payload":"a","metadata":{"` + ChannelsMetadataKey + `":"stable-4.20, fast-4.20,-4.20,x-,a-b-c"}},
		{"version":"4.20.1+a","payload":"b","metadata":{"` + ChannelsMetadataKey + `":"stable-4.20"}},
		{"version":"4.20.0-rc.1","payload":"c","metadata":{"` + ChannelsMetadataKey + `":" -4.20,stable-4.20"}},
		{"version":"0.0.0"}
	],"edges":[[0,7],[-1,0]]}trailing`))
	f.Add([]byte(`{"nodes":[{"version":"v4.20"}]}`))
	f.Add([]byte(`{"nodes":null,"edges":[[0]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		checkCatalog(t, c)
		again, err := Parse(bytes.NewReader(writeGraph(t, c)))
		if err != nil {
			t.Fatalf("a graph written from a parsed catalog does not parse: %v\n%s", err, writeGraph(t, c))
		}
		for _, group := range slices.Sorted(maps.Keys(c.groups)) {
			if !slices.EqualFunc(c.groups[group], again.groups[group], func(a, b Release) bool {
				return a.Version.EqualTo(b.Version) && a.Payload == b.Payload
			}) {
				t.Errorf("group %q is %v, read back as %v", group, c.Versions(group), again.Versions(group))
			}
		}
		if len(again.groups) != len(c.groups) {
			t.Errorf("groups %v, read back as %v", slices.Sorted(maps.Keys(c.groups)), slices.Sorted(maps.Keys(again.groups)))
		}
	})
}

func checkCatalog(t *testing.T, c *Catalog) {
	t.Helper()
	for group, releases := range c.groups {
		for i := 1; i < len(releases); i++ {
			if !releases[i-1].Version.LessThan(releases[i].Version) {
				t.Fatalf("group %q is not oldest first without duplicates: %v", group, c.Versions(group))
			}
		}
		for _, r := range releases {
			found, ok := c.Find(group, r.Version.String())
			if !ok || found.Payload != r.Payload {
				t.Fatalf("Find(%q, %q) = %v, %v; want payload %q", group, r.Version, found.Payload, ok, r.Payload)
			}
		}
		for _, minor := range c.Minors(group) {
			r, ok := c.Resolve(group, minor)
			if !ok || MajorMinor(r.Version) != minor {
				t.Fatalf("Resolve(%q, %q) = %v, %v", group, minor, r.Version, ok)
			}
		}
	}
}

// writeGraph writes the catalog as a Cincinnati graph: a node per release of each group, in a channel of
// that group. The space before the group keeps an empty group name a group (Parse trims it).
func writeGraph(t *testing.T, c *Catalog) []byte {
	t.Helper()
	var g graph
	for group, releases := range c.groups {
		for _, r := range releases {
			g.Nodes = append(g.Nodes, struct {
				Version  string            `json:"version"`
				Payload  string            `json:"payload"`
				Metadata map[string]string `json:"metadata"`
			}{r.Version.String(), r.Payload, map[string]string{ChannelsMetadataKey: " " + group + "-" + MajorMinor(r.Version)}})
		}
	}
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
