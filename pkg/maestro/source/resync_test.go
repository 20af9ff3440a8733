package source

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The OCM work agent answers a status resync request about the bundles it names only: a bundle whose
// first status was lost is repaired only if the request names it, without a hash.
func TestStatusResyncNamesEveryBundle(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{})
	// Connected before it holds a bundle: a source that connects after the first Apply asks at once about
	// that one bundle, which is right, but not the request this test waits for.
	awaitLink(t, s)
	for _, id := range []string{"uid-1", "uid-2", "uid-3"} {
		if err := s.Apply("mc-1", id, 1, testBundle(t, id)); err != nil {
			t.Fatal(err)
		}
		agent.next(protocol.SpecCreateRequest)
	}
	agent.sendStatus("mc-1", "uid-1", 1, 0, available)
	nextStatus(t, statuses)
	agent.sendStatus("mc-1", "uid-3", 1, 0, available)
	nextStatus(t, statuses)
	// uid-2's status was lost on the way. The agent reconnects and resyncs.
	agent.resync(
		protocol.ResourceVersion{ResourceID: "uid-1", ResourceVersion: 1},
		protocol.ResourceVersion{ResourceID: "uid-2", ResourceVersion: 1},
		protocol.ResourceVersion{ResourceID: "uid-3", ResourceVersion: 1})

	want := []protocol.ResourceStatusHash{
		{ResourceID: "uid-1", StatusHash: "hash-1"},
		{ResourceID: "uid-2", StatusHash: ""},
		{ResourceID: "uid-3", StatusHash: "hash-2"},
	}
	deadline := time.After(timeout)
	for {
		select {
		case <-deadline:
			t.Fatalf("no status resync request with %+v", want)
		default:
		}
		// The request sent when the source connected, before it held any bundle, names none.
		hashes, err := agent.next(protocol.StatusResyncRequest).StatusHashes()
		if err != nil {
			t.Fatal(err)
		}
		if len(hashes.Hashes) == 0 {
			continue
		}
		if !slices.Equal(hashes.Hashes, want) {
			t.Fatalf("status resync request with %+v, want every bundle of mc-1: %+v", hashes.Hashes, want)
		}
		return
	}
}

func TestStatusResyncComesInParts(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, _ := startSource(t, b, Options{})
	awaitLink(t, s)
	n := maxHashesPerRequest + 10
	s.mu.Lock()
	for i := range n {
		id := "uid-" + strconv.Itoa(i)
		s.bundles[id] = &bundle{consumer: "mc-1", id: id, generation: 1}
	}
	client := s.client
	s.mu.Unlock()
	if err := s.requestStatuses(testContext(t), client, "mc-1", false); err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for len(named) < n {
		hashes, err := agent.next(protocol.StatusResyncRequest).StatusHashes()
		if err != nil {
			t.Fatal(err)
		}
		if len(hashes.Hashes) > maxHashesPerRequest {
			t.Fatalf("a request names %d bundles, more than %d", len(hashes.Hashes), maxHashesPerRequest)
		}
		for _, h := range hashes.Hashes {
			named[h.ResourceID] = true
		}
	}
}
