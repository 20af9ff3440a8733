package agent

import (
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// spec is one generation of a bundle as the source sent it: to apply, or to delete.
type spec struct {
	generation int64
	// bundle may be nil for a deletion of a bundle the agent never knew.
	bundle   *protocol.ManifestBundle
	deleting bool
}

// Why a spec event is not acted on; the values label maestro_agent_events_refused_total.
const (
	refusedStale   = "stale_generation"
	refusedDeleted = "bundle_deleted"
)

// nextSpec returns what the agent should make of a bundle once it receives in, given current, the newest
// spec it holds (nil if none): only the newest generation is kept, and a deletion is final. ok is false,
// with the reason, when in is dropped.
func nextSpec(current *spec, in spec) (next spec, ok bool, reason string) {
	switch {
	case current == nil:
		return in, true, ""
	case in.deleting:
		// A deletion wins over any generation; it carries the bundle as last known, as the agent needs it
		// to find the objects and to know the delete option.
		next = spec{generation: max(current.generation, in.generation), bundle: mergeForDelete(current.bundle, in.bundle), deleting: true}
		return next, true, ""
	case current.deleting:
		// A bundle's resource ID is its UID: once deleted it does not come back.
		return *current, false, refusedDeleted
	case in.generation < current.generation:
		return *current, false, refusedStale
	}
	return in, true, ""
}

// mergeForDelete returns the bundle a deletion works from: what the deletion event carries where it
// carries something (Maestro sends "{}"), else the bundle as last known.
func mergeForDelete(known, in *protocol.ManifestBundle) *protocol.ManifestBundle {
	switch {
	case in == nil:
		return known
	case known == nil || len(in.Manifests) > 0:
		return in
	case in.DeleteOption == nil:
		return known
	}
	merged := *known
	merged.DeleteOption = in.DeleteOption
	return &merged
}

// statusesToResend answers a status.resync_request: the bundles, of those the agent reports (current maps
// each to its status hash), whose hash the source does not hold. An empty request asks for every status.
func statusesToResend(current map[string]string, requested []protocol.ResourceStatusHash) []string {
	held := make(map[string]string, len(requested))
	for _, h := range requested {
		held[h.ResourceID] = h.StatusHash
	}
	var resend []string
	for id, hash := range current {
		if h, ok := held[id]; len(requested) == 0 || !ok || h != hash {
			resend = append(resend, id)
		}
	}
	slices.Sort(resend)
	return resend
}

// sequence numbers the status events of this agent. It starts at the clock so that the numbers keep
// growing across restarts, as the source drops a status whose sequence ID is not newer than the last.
type sequence struct {
	last atomic.Uint64
}

func newSequence(now time.Time) *sequence {
	s := &sequence{}
	s.last.Store(uint64(now.UnixNano()))
	return s
}

// next returns the next sequence ID, in decimal as the sequenceid extension carries it.
func (s *sequence) next() string {
	return strconv.FormatUint(s.last.Add(1), 10)
}
