package agent

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

func TestNextSpec(t *testing.T) {
	v1 := &protocol.ManifestBundle{Manifests: []json.RawMessage{json.RawMessage(`{"kind":"ConfigMap"}`)}}
	v2 := &protocol.ManifestBundle{Manifests: []json.RawMessage{json.RawMessage(`{"kind":"Secret"}`)}}
	orphan := &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}
	v2Orphan := &protocol.ManifestBundle{Manifests: v2.Manifests, DeleteOption: orphan}

	tests := []struct {
		name       string
		current    *spec
		in         spec
		want       spec
		wantReason string
	}{{
		name: "a new bundle is taken",
		in:   spec{generation: 1, bundle: v1},
		want: spec{generation: 1, bundle: v1},
	}, {
		name:    "a newer generation replaces the pending one",
		current: &spec{generation: 1, bundle: v1},
		in:      spec{generation: 3, bundle: v2},
		want:    spec{generation: 3, bundle: v2},
	}, {
		name:    "the same generation again is taken: applying it again is harmless",
		current: &spec{generation: 2, bundle: v2},
		in:      spec{generation: 2, bundle: v2},
		want:    spec{generation: 2, bundle: v2},
	}, {
		name:       "an older generation is dropped",
		current:    &spec{generation: 3, bundle: v2},
		in:         spec{generation: 2, bundle: v1},
		want:       spec{generation: 3, bundle: v2},
		wantReason: refusedStale,
	}, {
		name:    "a deletion without data keeps the bundle as known",
		current: &spec{generation: 2, bundle: v2},
		in:      spec{generation: 2, bundle: &protocol.ManifestBundle{}, deleting: true},
		want:    spec{generation: 2, bundle: v2, deleting: true},
	}, {
		name:    "a deletion of an older generation still deletes, at the newest generation",
		current: &spec{generation: 3, bundle: v2},
		in:      spec{generation: 1, deleting: true},
		want:    spec{generation: 3, bundle: v2, deleting: true},
	}, {
		name:    "a deletion's delete option wins over the known one",
		current: &spec{generation: 2, bundle: v2},
		in:      spec{generation: 2, bundle: &protocol.ManifestBundle{DeleteOption: orphan}, deleting: true},
		want:    spec{generation: 2, bundle: v2Orphan, deleting: true},
	}, {
		name:    "a deletion with manifests carries the bundle whole",
		current: &spec{generation: 1, bundle: v1},
		in:      spec{generation: 2, bundle: v2Orphan, deleting: true},
		want:    spec{generation: 2, bundle: v2Orphan, deleting: true},
	}, {
		name: "a deletion of a bundle never held is taken, to be answered",
		in:   spec{generation: 4, deleting: true},
		want: spec{generation: 4, deleting: true},
	}, {
		name:       "a deleted bundle is not applied again",
		current:    &spec{generation: 2, bundle: v2, deleting: true},
		in:         spec{generation: 5, bundle: v1},
		want:       spec{generation: 2, bundle: v2, deleting: true},
		wantReason: refusedDeleted,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, reason := nextSpec(tt.current, tt.in)
			if ok != (tt.wantReason == "") || reason != tt.wantReason {
				t.Errorf("ok = %v, reason %q; want reason %q", ok, reason, tt.wantReason)
			}
			if !sameSpec(got, tt.want) {
				t.Errorf("got generation %d deleting %v bundle %+v; want generation %d deleting %v bundle %+v",
					got.generation, got.deleting, got.bundle, tt.want.generation, tt.want.deleting, tt.want.bundle)
			}
		})
	}
}

func TestStatusesToResend(t *testing.T) {
	current := map[string]string{"a": "hash-a", "b": "hash-b", "c": "hash-c"}
	tests := []struct {
		name      string
		requested []protocol.ResourceStatusHash
		want      []string
	}{{
		name: "an empty request asks for every status",
		want: []string{"a", "b", "c"},
	}, {
		name:      "the statuses whose hash differs or that the source lacks",
		requested: []protocol.ResourceStatusHash{{ResourceID: "a", StatusHash: "hash-a"}, {ResourceID: "b", StatusHash: "old"}},
		want:      []string{"b", "c"},
	}, {
		name: "nothing when the source holds every hash",
		requested: []protocol.ResourceStatusHash{{ResourceID: "a", StatusHash: "hash-a"}, {ResourceID: "b", StatusHash: "hash-b"},
			{ResourceID: "c", StatusHash: "hash-c"}, {ResourceID: "gone", StatusHash: "x"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := statusesToResend(current, tt.requested); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSequenceGrowsAcrossRestarts(t *testing.T) {
	parse := func(s string) uint64 {
		t.Helper()
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("sequence ID %q is not a decimal uint64: %v", s, err)
		}
		return n
	}
	start := time.Now()
	before := newSequence(start)
	var last uint64
	for range 1000 {
		n := parse(before.next())
		if n <= last {
			t.Fatalf("sequence ID %d after %d", n, last)
		}
		last = n
	}
	// An agent sends far fewer than one status a nanosecond: a restart, seeded from its clock, goes on above.
	after := newSequence(start.Add(time.Millisecond))
	if n := parse(after.next()); n <= last {
		t.Errorf("the restarted agent's first sequence ID %d is not above the last one before, %d", n, last)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	const id = "0b9e0d4c-1c36-4e7c-9d51-6f2b2c1f0a11"
	bundle := &protocol.ManifestBundle{
		Manifests:    []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap"}`)},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan},
	}
	for _, s := range []spec{
		{generation: 7, bundle: bundle},
		{generation: 8, bundle: bundle, deleting: true},
		{generation: 1, deleting: true},
	} {
		data, err := encodeRecord(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecord(id, data)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSpec(got, s) {
			t.Errorf("decoded %+v, want %+v", got, s)
		}
	}

	bad := []struct {
		id  string
		raw string
	}{
		{id, `{"generation":"one","bundle":{}}`},
		{id, `{"generation":1}`},
		{id, `{"generation":1,"bundle":{"manifests":[1]}}`},
		{id, `{"generation":-1,"deleting":true}`},
		{id, `not JSON`},
		{"", `{"generation":1,"deleting":true}`},
		{"Not_A_UID", `{"generation":1,"deleting":true}`},
	}
	for _, b := range bad {
		if _, err := decodeRecord(b.id, []byte(b.raw)); err == nil {
			t.Errorf("a damaged record decoded: %s %s", b.id, b.raw)
		}
	}
}

func TestLegacyRecord(t *testing.T) {
	const id = "0b9e0d4c-1c36-4e7c-9d51-6f2b2c1f0a11"
	got, s, err := decodeLegacyRecord(map[string][]byte{
		legacyKeyResourceID: []byte(id), legacyKeyGeneration: []byte("3"), legacyKeyDeleting: []byte("false"),
		legacyKeyBundle: []byte(`{"manifests":[{"apiVersion":"v1","kind":"ConfigMap"}]}`),
	})
	if err != nil || got != id || s.generation != 3 || s.deleting || len(s.bundle.Manifests) != 1 {
		t.Errorf("decoded %s %+v, %v", got, s, err)
	}
	bad := []map[string][]byte{
		{legacyKeyResourceID: []byte("x"), legacyKeyGeneration: []byte("one"), legacyKeyDeleting: []byte("false"), legacyKeyBundle: []byte(`{}`)},
		{legacyKeyResourceID: []byte("x"), legacyKeyGeneration: []byte("1"), legacyKeyDeleting: []byte("false")},
		{legacyKeyResourceID: []byte("x"), legacyKeyGeneration: []byte("1"), legacyKeyDeleting: []byte("false"), legacyKeyBundle: []byte(`{"manifests":[1]}`)},
		{legacyKeyGeneration: []byte("1"), legacyKeyDeleting: []byte("true")},
	}
	for _, data := range bad {
		if _, _, err := decodeLegacyRecord(data); err == nil {
			t.Errorf("a damaged record decoded: %q", data)
		}
	}
}
