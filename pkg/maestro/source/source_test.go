package source

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

const (
	testSource = "hcp"
	timeout    = 10 * time.Second
)

// These tests run the source against the real embedded broker, with the agent's side played by a bare
// MQTT client holding an agent certificate: what it receives is exactly what a maestro-agent would.

type fakeAgent struct {
	t        *testing.T
	consumer string
	client   *transport.Client
	events   chan protocol.Event
	seq      uint64
	// connected receives a value on every connect.
	connected chan struct{}
}

func startFakeAgent(t *testing.T, b *maestrotest.Broker, consumer string) *fakeAgent {
	t.Helper()
	topic, err := protocol.SourceEventsTopic(testSource, consumer)
	if err != nil {
		t.Fatal(err)
	}
	connected := make(chan struct{}, 10)
	a := &fakeAgent{t: t, consumer: consumer, events: make(chan protocol.Event, 100), connected: connected}
	a.client, err = transport.Connect(testContext(t), transport.Config{
		URL: b.URL, TLS: b.AgentTLS(t, testSource, consumer), ClientID: consumer + "-agent",
		Subscriptions: []string{topic},
		OnEvent:       func(_ string, e protocol.Event) { a.events <- e },
		OnInvalid: func(topic string, err error) {
			t.Errorf("agent %s received an invalid event on %s: %v", consumer, topic, err)
		},
		OnConnect: func(context.Context) { connected <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	a.awaitConnect(timeout)
	return a
}

// reconnectTimeout bounds a reconnect after a broker restart: a dial that lands while the broker is
// closing its listener is accepted and never answered, so it costs the transport's whole 10 s connect
// timeout, then a backoff, before the next dial succeeds.
const reconnectTimeout = 30 * time.Second

func (a *fakeAgent) awaitConnect(within time.Duration) {
	a.t.Helper()
	select {
	case <-a.connected:
	case <-time.After(within):
		a.t.Fatal("the agent did not connect")
	}
}

// next returns the next event the agent receives of type want, skipping others.
func (a *fakeAgent) next(want protocol.EventType) protocol.Event {
	a.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case e := <-a.events:
			if e.EventType() == want {
				return e
			}
		case <-deadline:
			a.t.Fatalf("agent %s received no %s within %v", a.consumer, want, timeout)
		}
	}
}

// none checks that no event of type t arrives within d.
func (a *fakeAgent) none(t protocol.EventType, d time.Duration) {
	a.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case e := <-a.events:
			if e.EventType() == t {
				a.t.Fatalf("agent %s received an unexpected %s about %q", a.consumer, t, e.ResourceID())
			}
		case <-deadline:
			return
		}
	}
}

func (a *fakeAgent) publish(e protocol.Event) {
	a.t.Helper()
	topic, err := protocol.AgentEventsTopic(testSource, a.consumer)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := a.client.Publish(a.t.Context(), topic, e); err != nil {
		a.t.Fatal(err)
	}
}

// sendStatus reports a status for generation of id, claiming clusterName, with the next sequence id
// (or seq when not zero).
func (a *fakeAgent) sendStatus(clusterName, id string, generation int64, seq uint64, conditions ...metav1.Condition) {
	a.t.Helper()
	if seq == 0 {
		a.seq++
		seq = a.seq
	}
	e, err := protocol.NewStatusEvent(testSource, protocol.ActionUpdateRequest,
		protocol.BundleRef{ClusterName: clusterName, ResourceID: id, ResourceVersion: generation},
		&protocol.ManifestBundleStatus{Conditions: conditions})
	if err != nil {
		a.t.Fatal(err)
	}
	e.SetSequenceID(strconv.FormatUint(seq, 10))
	e.SetStatusHash("hash-" + strconv.FormatUint(seq, 10))
	a.publish(e)
}

func (a *fakeAgent) resync(versions ...protocol.ResourceVersion) {
	a.t.Helper()
	e, err := protocol.NewSpecResyncRequest(testSource, a.consumer, versions)
	if err != nil {
		a.t.Fatal(err)
	}
	a.publish(e)
}

func testContext(t *testing.T) context.Context {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(4)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	t.Cleanup(cancel)
	return ctx
}

// startSource runs a source on the broker; statuses receives what its handler is told.
func startSource(t *testing.T, b *maestrotest.Broker, opts Options) (*Source, chan BundleStatus) {
	t.Helper()
	return startSourceAt(t, b, opts, nil)
}

// startSourceAt runs a source that reads the time from clock, or the real one when nil.
func startSourceAt(t *testing.T, b *maestrotest.Broker, opts Options, clock clock.PassiveClock) (*Source, chan BundleStatus) {
	t.Helper()
	opts.Source = testSource
	opts.Broker = transport.Config{URL: b.URL, TLS: b.SourceTLS(t, testSource)}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if clock != nil {
		s.now = clock.Now
	}
	statuses := make(chan BundleStatus, 100)
	s.AddStatusHandler(func(st BundleStatus) { statuses <- st })
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(timeout):
			t.Error("the source did not stop")
		}
	})
	return s, statuses
}

func nextStatus(t *testing.T, statuses chan BundleStatus) BundleStatus {
	t.Helper()
	select {
	case st := <-statuses:
		return st
	case <-time.After(timeout):
		t.Fatal("the source accepted no status")
		return BundleStatus{}
	}
}

func testBundle(t *testing.T, configMapName string) *protocol.ManifestBundle {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": configMapName, "namespace": "default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.ManifestBundle{Manifests: []json.RawMessage{raw},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}}
}

var available = metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}

func TestPublishAndStatus(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{})

	if err := s.Apply("mc-1", "uid-1", 1, testBundle(t, "one")); err != nil {
		t.Fatal(err)
	}
	create := agent.next(protocol.SpecCreateRequest)
	if create.ResourceID() != "uid-1" || create.ResourceVersion() != 1 || create.ClusterName() != "mc-1" {
		t.Fatalf("create_request about %q generation %d for %q, want uid-1 generation 1 for mc-1",
			create.ResourceID(), create.ResourceVersion(), create.ClusterName())
	}
	got, err := create.ManifestBundle()
	if err != nil || len(got.Manifests) != 1 || got.DeleteOption.PropagationPolicy != protocol.DeletePropagationOrphan {
		t.Fatalf("the create_request carries %+v (%v), want the bundle as applied", got, err)
	}

	agent.sendStatus("mc-1", "uid-1", 1, 0, available)
	st := nextStatus(t, statuses)
	if st.ResourceID != "uid-1" || st.Generation != 1 || st.Consumer != "mc-1" || st.Deleted {
		t.Fatalf("status %+v, want generation 1 of uid-1 from mc-1", st)
	}
	if got, ok := s.Status("uid-1"); !ok || got.Hash != "hash-1" || len(got.Status.Conditions) != 1 {
		t.Fatalf("Status(uid-1) = %+v, %v; want the status just sent", got, ok)
	}
	if !s.Consumer("mc-1").Connected {
		t.Error("mc-1 is not counted connected after it sent a status")
	}

	// An older sequence id is dropped, as is the same generation sent again with the same id.
	agent.sendStatus("mc-1", "uid-1", 1, 1)
	// A new generation goes out as an update and its status replaces the old one.
	if err := s.Apply("mc-1", "uid-1", 2, testBundle(t, "two")); err != nil {
		t.Fatal(err)
	}
	if update := agent.next(protocol.SpecUpdateRequest); update.ResourceVersion() != 2 {
		t.Fatalf("update_request of generation %d, want 2", update.ResourceVersion())
	}
	agent.sendStatus("mc-1", "uid-1", 2, 0)
	if st := nextStatus(t, statuses); st.Generation != 2 || st.SequenceID != 2 {
		t.Fatalf("status %+v, want generation 2 sequence 2: the stale status must have been dropped", st)
	}
	// A status of an older generation arriving late does not go back.
	agent.sendStatus("mc-1", "uid-1", 1, 99)
	agent.sendStatus("mc-1", "uid-1", 2, 0)
	if st := nextStatus(t, statuses); st.Generation != 2 || st.SequenceID != 3 {
		t.Fatalf("status %+v, want generation 2 sequence 3", st)
	}
	if got := refused(t, "stale"); got < 2 {
		t.Errorf("refused stale statuses counted %v, want at least 2", got)
	}

	// Applying an older generation, or the same again, sends nothing.
	if err := s.Apply("mc-1", "uid-1", 1, testBundle(t, "one")); err != nil {
		t.Fatal(err)
	}
	agent.none(protocol.SpecUpdateRequest, 300*time.Millisecond)

	// Delete sends a delete_request with the bundle; the agent's Deleted status ends the bundle.
	if err := s.Delete("mc-1", "uid-1"); err != nil {
		t.Fatal(err)
	}
	del := agent.next(protocol.SpecDeleteRequest)
	if del.DeletionTimestamp().IsZero() {
		t.Fatal("the delete_request has no deletiontimestamp")
	}
	if b, err := del.ManifestBundle(); err != nil || b.DeleteOption == nil || b.DeleteOption.PropagationPolicy != protocol.DeletePropagationOrphan {
		t.Fatalf("the delete_request carries %+v (%v), want the bundle with its delete option", b, err)
	}
	agent.sendStatus("mc-1", "uid-1", 2, 0, metav1.Condition{Type: protocol.ConditionDeleted, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()})
	if st := nextStatus(t, statuses); !st.Deleted {
		t.Fatalf("status %+v, want Deleted", st)
	}
	if s.Has("uid-1") {
		t.Error("the source still holds uid-1 after its agent reported it deleted")
	}
}

// A bundle may change while its owner's generation does not (a cluster's bundle carries its
// ExternalAuth): the new content goes out at the same generation, once, even though the agent
// acknowledged that generation; the same content again does not; and an agent that resyncs holding
// that generation is sent the newest content, as its generation cannot say which content it has.
func TestSameGenerationNewContent(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{RepublishAfter: 300 * time.Millisecond})
	manifestOf := func(e protocol.Event) string {
		t.Helper()
		bundle, err := e.ManifestBundle()
		if err != nil || len(bundle.Manifests) != 1 {
			t.Fatalf("event carries %+v (%v), want one manifest", bundle, err)
		}
		return string(bundle.Manifests[0])
	}
	one, two := testBundle(t, "one"), testBundle(t, "two")

	if err := s.Apply("mc-1", "uid-1", 1, one); err != nil {
		t.Fatal(err)
	}
	agent.next(protocol.SpecCreateRequest)
	agent.sendStatus("mc-1", "uid-1", 1, 0, available)
	nextStatus(t, statuses)

	// The same content again, in a bundle of its own as a new render makes it: nothing to send.
	if err := s.Apply("mc-1", "uid-1", 1, testBundle(t, "one")); err != nil {
		t.Fatal(err)
	}
	agent.none(protocol.SpecUpdateRequest, 500*time.Millisecond)

	// New content at the acknowledged generation goes out.
	if err := s.Apply("mc-1", "uid-1", 1, two); err != nil {
		t.Fatal(err)
	}
	update := agent.next(protocol.SpecUpdateRequest)
	if update.ResourceVersion() != 1 || manifestOf(update) != string(two.Manifests[0]) {
		t.Fatalf("update_request of generation %d with %s, want generation 1 with %s", update.ResourceVersion(), manifestOf(update), two.Manifests[0])
	}
	// Once: the generation is acknowledged, and a republish would not tell the agent anything new.
	if err := s.Apply("mc-1", "uid-1", 1, testBundle(t, "two")); err != nil {
		t.Fatal(err)
	}
	agent.none(protocol.SpecUpdateRequest, time.Second)

	// Had that update been lost, the agent's resync after it reconnects brings the newest content.
	agent.resync(protocol.ResourceVersion{ResourceID: "uid-1", ResourceVersion: 1})
	answer := agent.next(protocol.SpecResyncResponse)
	if answer.ResourceID() != "uid-1" || answer.ResourceVersion() != 1 || manifestOf(answer) != string(two.Manifests[0]) {
		t.Fatalf("resync_response about %q generation %d with %s, want uid-1 generation 1 with %s",
			answer.ResourceID(), answer.ResourceVersion(), manifestOf(answer), two.Manifests[0])
	}

	// A new generation is the usual case again: once acknowledged, a resync holding it is sent nothing.
	if err := s.Apply("mc-1", "uid-1", 2, testBundle(t, "three")); err != nil {
		t.Fatal(err)
	}
	if update := agent.next(protocol.SpecUpdateRequest); update.ResourceVersion() != 2 {
		t.Fatalf("update_request of generation %d, want 2", update.ResourceVersion())
	}
	agent.sendStatus("mc-1", "uid-1", 2, 0, available)
	nextStatus(t, statuses)
	agent.resync(protocol.ResourceVersion{ResourceID: "uid-1", ResourceVersion: 2})
	agent.none(protocol.SpecResyncResponse, 500*time.Millisecond)
}

func TestStatusFromTheWrongConsumerIsRefused(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agentA := startFakeAgent(t, b, "mc-a")
	agentB := startFakeAgent(t, b, "mc-b")
	s, statuses := startSource(t, b, Options{})
	if err := s.Apply("mc-a", "uid-a", 1, testBundle(t, "a")); err != nil {
		t.Fatal(err)
	}
	agentA.next(protocol.SpecCreateRequest)
	before := refused(t, "consumer-mismatch")
	beforeNotPlaced := refused(t, "not-placed")

	// mc-b claims to be mc-a on its own topic (the broker lets it publish nowhere else).
	agentB.sendStatus("mc-a", "uid-a", 1, 0, available)
	// mc-b reports, as itself, on a bundle placed on mc-a.
	agentB.sendStatus("mc-b", "uid-a", 1, 0, available)
	// The real agent's status still gets through, and is the only one.
	agentA.sendStatus("mc-a", "uid-a", 1, 0)
	st := nextStatus(t, statuses)
	if st.Consumer != "mc-a" || len(st.Status.Conditions) != 0 {
		t.Fatalf("accepted status %+v, want mc-a's own (without conditions)", st)
	}
	select {
	case st := <-statuses:
		t.Fatalf("accepted a second status %+v", st)
	case <-time.After(200 * time.Millisecond):
	}
	if got := refused(t, "consumer-mismatch") - before; got != 1 {
		t.Errorf("consumer-mismatch refusals: %v, want 1", got)
	}
	if got := refused(t, "not-placed") - beforeNotPlaced; got != 1 {
		t.Errorf("not-placed refusals: %v, want 1", got)
	}
}

func TestSpecResync(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{})
	for i, id := range []string{"uid-current", "uid-newer", "uid-missing", "uid-deleting", "uid-deleted"} {
		if err := s.Apply("mc-1", id, 2, testBundle(t, "cm-"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		agent.next(protocol.SpecCreateRequest)
	}
	mustDelete(t, s, "uid-deleting")
	mustDelete(t, s, "uid-deleted")
	agent.next(protocol.SpecDeleteRequest)
	agent.next(protocol.SpecDeleteRequest)

	held := []protocol.ResourceVersion{
		{ResourceID: "uid-current", ResourceVersion: 2},
		{ResourceID: "uid-newer", ResourceVersion: 1},
		{ResourceID: "uid-deleting", ResourceVersion: 2},
		{ResourceID: "uid-unknown", ResourceVersion: 7},
	}
	// Not synced yet: the source may not know every bundle, so it deletes nothing it does not hold.
	agent.resync(held...)
	got := map[string]protocol.Event{}
	for range 3 {
		e := agent.next(protocol.SpecResyncResponse)
		got[e.ResourceID()] = e
	}
	if e, ok := got["uid-newer"]; !ok || e.ResourceVersion() != 2 || !e.DeletionTimestamp().IsZero() {
		t.Errorf("no resync_response with generation 2 of uid-newer, which the agent holds at 1: %v", got)
	}
	if _, ok := got["uid-missing"]; !ok {
		t.Errorf("no resync_response for uid-missing, which the agent lacks: %v", got)
	}
	if e, ok := got["uid-deleting"]; !ok || e.DeletionTimestamp().IsZero() {
		t.Errorf("no delete (a resync_response with deletiontimestamp) for uid-deleting, which the agent still holds: %v", got)
	}
	// The agent does not hold uid-deleted: its delete is done.
	if st := nextStatus(t, statuses); st.ResourceID != "uid-deleted" || !st.Deleted {
		t.Errorf("status %+v, want uid-deleted reported deleted", st)
	}
	agent.none(protocol.SpecResyncResponse, 300*time.Millisecond)

	s.SetSynced()
	agent.resync(held[:1]...)
	agent.resync(held...)
	// The second request supersedes the first if both are pending; either way the unknown bundle is
	// deleted on the agent.
	deadline := time.After(timeout)
	for {
		e := agent.next(protocol.SpecResyncResponse)
		if e.ResourceID() == "uid-unknown" {
			if e.DeletionTimestamp().IsZero() || e.ResourceVersion() != 7 {
				t.Fatalf("resync_response about uid-unknown: generation %d, deletiontimestamp %v; want a delete of generation 7",
					e.ResourceVersion(), e.DeletionTimestamp())
			}
			break
		}
		select {
		case <-deadline:
			t.Fatal("no delete of uid-unknown")
		default:
		}
	}
}

func TestRepublishUntilAcknowledged(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{RepublishAfter: 300 * time.Millisecond})
	// The agent says it is there (its resync request is its heartbeat), once the source listens.
	for deadline := time.Now().Add(timeout); !s.Consumer("mc-1").Connected; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the source never counted mc-1 connected")
		}
		agent.resync()
	}
	if err := s.Apply("mc-1", "uid-1", 1, testBundle(t, "one")); err != nil {
		t.Fatal(err)
	}
	first := agent.next(protocol.SpecCreateRequest)
	// As if the agent lost it: no status. The source sends it again.
	again := agent.next(protocol.SpecCreateRequest)
	if again.ResourceID() != first.ResourceID() || again.ResourceVersion() != 1 {
		t.Fatalf("republished %q generation %d, want uid-1 generation 1", again.ResourceID(), again.ResourceVersion())
	}
	agent.sendStatus("mc-1", "uid-1", 1, 0)
	nextStatus(t, statuses)
	// Acknowledged: nothing more, once a republish decided just before the status came has arrived (it is
	// published as soon as it is decided; a republish interval is ample for it to arrive).
	for drained := time.After(300 * time.Millisecond); ; {
		select {
		case <-agent.events:
			continue
		case <-drained:
		}
		break
	}
	agent.none(protocol.SpecCreateRequest, time.Second)
}

func TestBrokerRestart(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{})
	if err := s.Apply("mc-1", "uid-1", 1, testBundle(t, "one")); err != nil {
		t.Fatal(err)
	}
	agent.next(protocol.SpecCreateRequest)
	agent.sendStatus("mc-1", "uid-1", 1, 0)
	nextStatus(t, statuses)

	b.Stop()
	// Published while the broker is down: retried until it is back.
	if err := s.Apply("mc-1", "uid-1", 2, testBundle(t, "two")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}

	// After reconnecting, the source asks for the statuses it may have missed, with the hashes it holds:
	// when it reconnects, and when the agent resyncs after its own reconnect (whichever of the two
	// reconnected first, the second request reaches it). A request without hashes may still be on its
	// way from the first connect, when the source held no status yet. The one sent on reconnect is also a
	// liveness probe, which names uid-1 without its hash: that asks for its status all the same. Generation 2 reaches the agent as
	// the retried update, or, when the agent resubscribed only after that went out, in the answer to its
	// resync; either may come before the status resync request.
	agent.awaitConnect(reconnectTimeout)
	agent.resync()
	wantHashes := []protocol.ResourceStatusHash{{ResourceID: "uid-1", StatusHash: "hash-1"}}
	askedForStatuses := false
	var generation int64
	var manifests []json.RawMessage
	deadline := time.After(reconnectTimeout)
	for !askedForStatuses || generation < 2 {
		var e protocol.Event
		select {
		case e = <-agent.events:
		case <-deadline:
			t.Fatalf("after the restart the agent was asked for statuses: %v, and got generation %d; want a status resync request naming uid-1 and generation 2",
				askedForStatuses, generation)
		}
		switch e.EventType() {
		case protocol.StatusResyncRequest:
			hashes, err := e.StatusHashes()
			switch {
			case err != nil:
				t.Fatal(err)
			case len(hashes.Hashes) == 0:
			case slices.Equal(hashes.Hashes, []protocol.ResourceStatusHash{{ResourceID: "uid-1"}}):
				askedForStatuses = true
			case !slices.Equal(hashes.Hashes, wantHashes):
				t.Fatalf("status resync request with %+v, want uid-1's hash-1", hashes.Hashes)
			default:
				askedForStatuses = true
			}
		case protocol.SpecUpdateRequest, protocol.SpecResyncResponse:
			if e.ResourceID() != "uid-1" || e.ResourceVersion() < generation {
				continue
			}
			b, err := e.ManifestBundle()
			if err != nil {
				t.Fatal(err)
			}
			generation, manifests = e.ResourceVersion(), b.Manifests
		}
	}
	if want := testBundle(t, "two").Manifests; generation != 2 || len(manifests) != 1 || string(manifests[0]) != string(want[0]) {
		t.Errorf("after the restart the agent holds generation %d with %s, want generation 2 with %s", generation, manifests, want)
	}
}

// refused reads the refusal counter for reason.
func refused(t *testing.T, reason string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(eventsRefused.WithLabelValues(reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustDelete(t *testing.T, s *Source, id string) {
	t.Helper()
	if err := s.Delete("mc-1", id); err != nil {
		t.Fatal(err)
	}
}

// After a restart the source may be asked to delete a bundle it no longer holds: the delete goes out
// without data, and the agent's Deleted status ends it as for any other.
func TestDeleteOfABundleTheSourceDoesNotHold(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{})
	mustDelete(t, s, "uid-forgotten")
	del := agent.next(protocol.SpecDeleteRequest)
	if del.ResourceID() != "uid-forgotten" || del.DeletionTimestamp().IsZero() || len(del.Data()) != 0 {
		t.Fatalf("delete_request about %q, deletiontimestamp %v, %d bytes of data; want uid-forgotten, a timestamp, no data",
			del.ResourceID(), del.DeletionTimestamp(), len(del.Data()))
	}
	agent.sendStatus("mc-1", "uid-forgotten", 0, 0, metav1.Condition{Type: protocol.ConditionDeleted, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()})
	if st := nextStatus(t, statuses); !st.Deleted || s.Has("uid-forgotten") {
		t.Fatalf("status %+v, source holds it: %v; want it Deleted and forgotten", st, s.Has("uid-forgotten"))
	}
}

// After a restart an owner may have nothing to give for an object whose bundle the agent holds (a cluster
// whose version the catalog no longer offers, say): kept, the bundle is neither deleted nor sent by a
// resync, until the owner applies or deletes it, and its statuses reach the owner as any bundle's. A bundle
// kept on another consumer is deleted as before.
func TestKeptBundleStaysOnTheAgent(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-1")
	s, statuses := startSource(t, b, Options{})
	// A bundle held, as the agent has it: the source is connected once the agent has its create.
	if err := s.Apply("mc-1", "uid-held", 2, testBundle(t, "cm-held")); err != nil {
		t.Fatal(err)
	}
	agent.next(protocol.SpecCreateRequest)
	for _, k := range []struct{ consumer, id string }{{"mc-1", "uid-kept"}, {"mc-2", "uid-elsewhere"}} {
		if err := s.Keep(k.consumer, k.id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Keep("mc-1", "not a/valid id"); err == nil {
		t.Error("kept a resource ID that is not one")
	}
	s.SetSynced()
	agent.resync(protocol.ResourceVersion{ResourceID: "uid-held", ResourceVersion: 2},
		protocol.ResourceVersion{ResourceID: "uid-kept", ResourceVersion: 4},
		protocol.ResourceVersion{ResourceID: "uid-unknown", ResourceVersion: 7},
		protocol.ResourceVersion{ResourceID: "uid-elsewhere", ResourceVersion: 1})
	deleted := map[string]bool{}
	for range 2 {
		e := agent.next(protocol.SpecResyncResponse)
		deleted[e.ResourceID()] = !e.DeletionTimestamp().IsZero()
	}
	if !deleted["uid-unknown"] || !deleted["uid-elsewhere"] || len(deleted) != 2 {
		t.Fatalf("resync answered %v; want deletes of uid-unknown and uid-elsewhere", deleted)
	}
	agent.none(protocol.SpecResyncResponse, 300*time.Millisecond)

	// Its agent's statuses are taken, and a status resync request names it with the hash of the last one.
	applied := metav1.Condition{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}
	agent.sendStatus("mc-1", "uid-kept", 4, 0, applied)
	if st := nextStatus(t, statuses); st.ResourceID != "uid-kept" || st.Generation != 4 || st.Deleted {
		t.Fatalf("status %+v; want uid-kept's of generation 4", st)
	}
	s.mu.Lock()
	hashes, _ := s.statusHashesLocked("mc-1", false)
	s.mu.Unlock()
	if !slices.Contains(hashes, protocol.ResourceStatusHash{ResourceID: "uid-kept", StatusHash: "hash-" + strconv.FormatUint(agent.seq, 10)}) {
		t.Errorf("a status resync request names %+v; want uid-kept with its status's hash", hashes)
	}

	// A kept bundle that has reported is probed as any other: the one heard longest ago goes without its hash.
	s.mu.Lock()
	hashes, _ = s.statusHashesLocked("mc-1", true)
	s.mu.Unlock()
	if !slices.Contains(hashes, protocol.ResourceStatusHash{ResourceID: "uid-kept"}) {
		t.Errorf("a probe names %+v; want uid-kept, the only bundle reported on, without its hash", hashes)
	}

	// Applied at the generation its agent reported, the bundle is sent all the same, as an update: the source
	// never had the content the agent holds. Then an agent holding an older generation is sent the newest.
	if err := s.Apply("mc-1", "uid-kept", 4, testBundle(t, "cm-kept")); err != nil {
		t.Fatal(err)
	}
	if e := agent.next(protocol.SpecUpdateRequest); e.ResourceID() != "uid-kept" || e.ResourceVersion() != 4 {
		t.Fatalf("update_request about %s at %d; want uid-kept at 4", e.ResourceID(), e.ResourceVersion())
	}
	if err := s.Apply("mc-1", "uid-kept", 5, testBundle(t, "cm-kept-5")); err != nil {
		t.Fatal(err)
	}
	agent.next(protocol.SpecUpdateRequest)
	agent.resync(protocol.ResourceVersion{ResourceID: "uid-held", ResourceVersion: 2}, protocol.ResourceVersion{ResourceID: "uid-kept", ResourceVersion: 4})
	if e := agent.next(protocol.SpecResyncResponse); e.ResourceID() != "uid-kept" || e.ResourceVersion() != 5 || !e.DeletionTimestamp().IsZero() {
		t.Fatalf("resync answered %s at %d (deletiontimestamp %v); want uid-kept at 5", e.ResourceID(), e.ResourceVersion(), e.DeletionTimestamp())
	}

	// Forgotten (its owner gone without a delete), a kept bundle is deleted by the next resync.
	if err := s.Keep("mc-1", "uid-orphan"); err != nil {
		t.Fatal(err)
	}
	s.Forget("uid-orphan")
	agent.resync(protocol.ResourceVersion{ResourceID: "uid-held", ResourceVersion: 2}, protocol.ResourceVersion{ResourceID: "uid-kept", ResourceVersion: 5},
		protocol.ResourceVersion{ResourceID: "uid-orphan", ResourceVersion: 1})
	if e := agent.next(protocol.SpecResyncResponse); e.ResourceID() != "uid-orphan" || e.DeletionTimestamp().IsZero() {
		t.Fatalf("resync answered %s (deletiontimestamp %v); want a delete of uid-orphan", e.ResourceID(), e.DeletionTimestamp())
	}
}

// An agent the source holds only kept bundles for, one that never speaks unless asked (as the OCM work
// agent between its reconnects), is still asked for their statuses; a status of a newer generation with
// the hash of the last one reaches the handlers; and a kept bundle its agent reports deleted is kept no
// more.
func TestKeptBundlesAreAskedForAndFollowed(t *testing.T) {
	b := maestrotest.StartBroker(t)
	agent := startFakeAgent(t, b, "mc-kept")
	s, statuses := startSource(t, b, Options{LivenessInterval: time.Hour})
	awaitLink(t, s)
	if err := s.Keep("mc-kept", "uid-kept"); err != nil {
		t.Fatal(err)
	}
	s.SetSynced()
	s.probeAll(testContext(t))
	request, err := agent.next(protocol.StatusResyncRequest).StatusHashes()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(request.Hashes, protocol.ResourceStatusHash{ResourceID: "uid-kept"}) {
		t.Fatalf("the probe of an agent holding only a kept bundle asks for %+v; want uid-kept", request.Hashes)
	}

	applied := metav1.Condition{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}
	agent.sendStatus("mc-kept", "uid-kept", 3, 0, applied)
	first := nextStatus(t, statuses)
	if got, ok := s.Status("uid-kept"); !ok || got.Generation != 3 {
		t.Errorf("Status(uid-kept) = %+v, %v; want the kept bundle's status of generation 3", got, ok)
	}
	// The same content at the next generation (a publish that reached the agent after a restart).
	e, err := protocol.NewStatusEvent(testSource, protocol.ActionUpdateRequest,
		protocol.BundleRef{ClusterName: "mc-kept", ResourceID: "uid-kept", ResourceVersion: 4},
		&protocol.ManifestBundleStatus{Conditions: []metav1.Condition{applied}})
	if err != nil {
		t.Fatal(err)
	}
	agent.seq++
	e.SetSequenceID(strconv.FormatUint(agent.seq, 10))
	e.SetStatusHash(first.Hash)
	agent.publish(e)
	if st := nextStatus(t, statuses); st.ResourceID != "uid-kept" || st.Generation != 4 {
		t.Fatalf("status %+v; want uid-kept's of generation 4, its hash unchanged", st)
	}

	deleted := metav1.Condition{Type: protocol.ConditionDeleted, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}
	agent.sendStatus("mc-kept", "uid-kept", 4, 0, deleted)
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		kept := s.kept["uid-kept"] != nil
		s.mu.Unlock()
		if !kept {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a kept bundle its agent reports deleted is still kept")
		}
	}
	select {
	case st := <-statuses:
		t.Errorf("the delete of a kept bundle reached the handlers: %+v", st)
	default:
	}
}
