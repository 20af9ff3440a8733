package versioncatalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

//go:embed default-lifecycle.json
var defaultLifecycle []byte

// Lifecycle says when each minor version reaches its end of life. The update service's graph does not
// carry it: it is the service's configuration, from Red Hat's life cycle policy.
type Lifecycle struct {
	// Source says where the dates come from.
	Source string `json:"source,omitempty"`
	// EndOfLife is the end of life of each MAJOR.MINOR.
	EndOfLife map[string]time.Time `json:"endOfLife"`
}

// DefaultLifecycle returns the life cycle compiled into the server, for the compiled-in graph's minors.
func DefaultLifecycle() *Lifecycle {
	l, err := parseLifecycle(defaultLifecycle)
	if err != nil {
		panic(fmt.Sprintf("the compiled-in version life cycle is invalid: %v", err))
	}
	return l
}

// LoadLifecycle reads a life cycle file: {"endOfLife": {"4.20": "2027-04-21T00:00:00Z", ...}}.
func LoadLifecycle(path string) (*Lifecycle, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l, err := parseLifecycle(raw)
	if err != nil {
		return nil, fmt.Errorf("version life cycle %s: %w", path, err)
	}
	return l, nil
}

func parseLifecycle(raw []byte) (*Lifecycle, error) {
	var l Lifecycle
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, err
	}
	if len(l.EndOfLife) == 0 {
		return nil, fmt.Errorf("endOfLife names no version")
	}
	return &l, nil
}

// WithLifecycle returns the catalog with each minor's end of life from l, which must know every minor
// the catalog offers: hcpOpenShiftVersions always states an end of life.
func (c *Catalog) WithLifecycle(l *Lifecycle) (*Catalog, error) {
	c = c.now()
	var missing []string
	for _, releases := range c.groups {
		for _, r := range releases {
			if m := MajorMinor(r.Version); l.EndOfLife[m].IsZero() && !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("the version life cycle has no end of life for %s, which the catalog offers", strings.Join(missing, ", "))
	}
	out := *c
	out.endOfLife = l.EndOfLife
	return &out, nil
}

// WithLifecycleWhereKnown returns the catalog with the end of life l knows of each minor; a minor l
// does not know has none (the server offers it all the same, and says nothing of its end).
func (c *Catalog) WithLifecycleWhereKnown(l *Lifecycle) *Catalog {
	out := *c.now()
	out.live = nil
	out.endOfLife = l.EndOfLife
	return &out
}

// EndOfLife is when a version (MAJOR.MINOR or a full version) reaches its end of life; false when the
// catalog's life cycle does not say.
func (c *Catalog) EndOfLife(v string) (time.Time, bool) {
	c = c.now()
	minor := v
	if parts := strings.SplitN(v, ".", 3); len(parts) == 3 {
		minor = parts[0] + "." + parts[1]
	}
	t, ok := c.endOfLife[minor]
	return t, ok
}
