package source

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// awaitLink waits until the source is connected to the broker.
func awaitLink(t *testing.T, s *Source) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		up := s.connected
		s.mu.Unlock()
		if up {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the source did not connect to the broker")
		}
	}
}

// awaitConsumer waits until the source's view of consumer satisfies ok.
func awaitConsumer(t *testing.T, s *Source, consumer string, ok func(ConsumerState) bool) ConsumerState {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if st := s.Consumer(consumer); ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %+v, not as wanted", consumer, s.Consumer(consumer))
		}
	}
}

func connected(st ConsumerState) bool { return st.Connected }

// answerProbe sends the status the agent holds for a bundle again, as an agent answers a status resync
// request that names the bundle without its hash.
func (a *fakeAgent) answerProbe(id string, generation int64, hash string) {
	a.t.Helper()
	request, err := a.next(protocol.StatusResyncRequest).StatusHashes()
	if err != nil {
		a.t.Fatal(err)
	}
	for _, h := range request.Hashes {
		if h.ResourceID == id && h.StatusHash != hash {
			a.seq++
			e, err := protocol.NewStatusEvent(testSource, protocol.ActionResyncResponse,
				protocol.BundleRef{ClusterName: a.consumer, ResourceID: id, ResourceVersion: generation},
				&protocol.ManifestBundleStatus{Conditions: nil})
			if err != nil {
				a.t.Fatal(err)
			}
			e.SetSequenceID(strconv.FormatUint(a.seq, 10))
			e.SetStatusHash(hash)
			a.publish(e)
			return
		}
	}
	a.t.Fatalf("the status resync request %+v does not ask %s for the status of %s", request.Hashes, a.consumer, id)
}

// The OCM work agent sends a spec resync request only when it connects, and nothing else unasked: the
// source's probes keep such an agent counted connected for as long as it answers them, and find it gone
// once it stops. An agent that resyncs periodically is gone once it stops; one that does neither and holds
// nothing to ask about stays connected.
func TestLiveness(t *testing.T) {
	b := maestrotest.StartBroker(t)
	quiet := startFakeAgent(t, b, "mc-quiet")
	periodic := startFakeAgent(t, b, "mc-periodic")
	empty := startFakeAgent(t, b, "mc-empty")
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	// The test sends the probes; the source's own ticker would not fire within it.
	s, statuses := startSourceAt(t, b, Options{LivenessInterval: time.Hour, LivenessTimeout: 3 * time.Minute}, clock)
	changes := make(chan string, 100)
	s.AddConsumerHandler(func(consumer string) { changes <- consumer })
	awaitLink(t, s)
	ctx := testContext(t)

	connectedAt := clock.Now()
	for _, a := range []*fakeAgent{quiet, periodic, empty} {
		a.resync()
		awaitConsumer(t, s, a.consumer, connected)
		select {
		case c := <-changes:
			if c != a.consumer {
				t.Errorf("the consumer handler was told of %s, want %s, which just connected", c, a.consumer)
			}
		case <-time.After(timeout):
			t.Errorf("the consumer handler was not told that %s connected", a.consumer)
		}
	}
	if err := s.Apply("mc-quiet", "uid-1", 1, testBundle(t, "one")); err != nil {
		t.Fatal(err)
	}
	quiet.next(protocol.SpecCreateRequest)
	quiet.sendStatus("mc-quiet", "uid-1", 1, 0, available)
	held := nextStatus(t, statuses)
	clock.Step(30 * time.Second)
	periodic.resync()
	awaitConsumer(t, s, "mc-periodic", func(st ConsumerState) bool { return st.LastResync.Equal(clock.Now()) })
	if got := gauge(t); got != 3 {
		t.Errorf("connected consumers: %v, want 3", got)
	}

	// Ten minutes in which the quiet agent only answers probes, far beyond the liveness timeout since its
	// only resync; the periodic agent stops resyncing.
	for range 10 {
		clock.Step(time.Minute)
		s.probeAll(ctx)
		quiet.answerProbe("uid-1", 1, held.Hash)
		awaitConsumer(t, s, "mc-quiet", func(st ConsumerState) bool { return st.LastSeen.Equal(clock.Now()) })
		s.expire()
	}
	st := s.Consumer("mc-quiet")
	if !st.Connected || !st.Since.Equal(connectedAt) || !st.LastResync.Equal(connectedAt) {
		t.Errorf("the quiet agent that answers every probe is %+v; want connected since %v, its only resync", st, connectedAt)
	}
	select {
	case st := <-statuses:
		t.Errorf("a probe's answer, the status the source holds, reached the status handlers: %+v", st)
	default:
	}
	if st := s.Consumer("mc-periodic"); st.Connected {
		t.Errorf("the agent that stopped its periodic resyncs ten minutes ago is %+v, want gone", st)
	}
	if st := s.Consumer("mc-empty"); !st.Connected {
		t.Errorf("the agent that holds nothing to ask about is %+v, want still connected", st)
	}
	if got := gauge(t); got != 2 {
		t.Errorf("connected consumers: %v, want 2", got)
	}

	// The quiet agent stops answering: gone once a probe is unanswered for the timeout, not before.
	for len(changes) > 0 {
		<-changes
	}
	askedAt := clock.Now().Add(time.Minute)
	for range 3 {
		clock.Step(time.Minute)
		s.probeAll(ctx)
		s.expire()
	}
	if st := s.Consumer("mc-quiet"); !st.Connected {
		t.Fatalf("mc-quiet is %+v two minutes after its first unanswered probe, want still connected", st)
	}
	clock.Step(time.Minute)
	s.expire()
	if st := s.Consumer("mc-quiet"); st.Connected || !st.Since.Equal(askedAt.Add(3*time.Minute)) {
		t.Errorf("mc-quiet is %+v, want gone since %v", st, askedAt.Add(3*time.Minute))
	}
	select {
	case c := <-changes:
		if c != "mc-quiet" {
			t.Errorf("the consumer handler was told of %s, want mc-quiet", c)
		}
	case <-time.After(timeout):
		t.Error("the consumer handler was not told that mc-quiet is gone")
	}
	if got := gauge(t); got != 1 {
		t.Errorf("connected consumers: %v, want 1", got)
	}
}

func gauge(t *testing.T) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(connectedConsumers)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
