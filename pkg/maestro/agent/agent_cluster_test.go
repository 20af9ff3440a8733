package agent

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// eventTimeout bounds the wait for one event; on loopback each comes within a second.
const eventTimeout = 30 * time.Second

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// fakeSource plays hcp-apiserver's part: it publishes spec events to one consumer and keeps every event
// its agent sends.
type fakeSource struct {
	client                    *transport.Client
	sourceEvents, agentEvents string

	mu     sync.Mutex
	events []protocol.Event
	// arrived is closed, and replaced, when an event arrives.
	arrived chan struct{}
}

// agentSetup is an embedded broker with the agent's options and a source connected to it.
type agentSetup struct {
	opts   Options
	broker *maestrotest.Broker
	source *fakeSource
}

func setUpAgent(t *testing.T, mc *framework.ManagementCluster, consumer string) *agentSetup {
	t.Helper()
	ctx := klog.NewContext(t.Context(), ktesting.NewLogger(t, ktesting.NewConfig()))
	b := maestrotest.StartBroker(t)
	url := b.URL
	agentTLS := b.AgentTLS(t, testSource, consumer)
	sourceTLS := b.SourceTLS(t, testSource)

	s := &fakeSource{arrived: make(chan struct{})}
	s.sourceEvents, _ = protocol.SourceEventsTopic(testSource, consumer)
	s.agentEvents, _ = protocol.AgentEventsTopic(testSource, consumer)
	connected := make(chan struct{}, 1)
	var err error
	s.client, err = transport.Connect(ctx, transport.Config{
		URL: url, TLS: sourceTLS, ClientID: "test-source",
		Subscriptions: []string{s.agentEvents},
		OnEvent:       func(_ string, e protocol.Event) { s.add(e) },
		OnInvalid:     func(topic string, err error) { t.Errorf("the agent sent an invalid event on %s: %v", topic, err) },
		OnConnect: func(context.Context) {
			select {
			case connected <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.client.Close(closeCtx)
	})
	// Subscribed before the agent starts, so that its first resync request is seen.
	select {
	case <-connected:
	case <-time.After(eventTimeout):
		t.Fatal("the test source did not connect")
	}

	return &agentSetup{
		broker: b,
		source: s,
		opts: Options{
			Consumer: consumer, Source: testSource, BrokerURL: url, BrokerTLS: agentTLS, Kube: mc.Config,
			StateNamespace: consumer + "-state",
			// The tests resync by reconnecting; no timer fires while they run.
			ResyncInterval: time.Hour,
			Workers:        2,
		},
	}
}

// start runs a new agent until the returned function stops it and waits for Run to return.
func (s *agentSetup) start(t *testing.T) (stop func()) {
	t.Helper()
	a, err := New(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), ktesting.NewLogger(t, ktesting.NewConfig())))
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(eventTimeout):
				t.Error("the agent did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func (s *fakeSource) add(e protocol.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// mark is where waitFor starts looking: only events that arrive after it.
func (s *fakeSource) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// waitFor returns the first event after mark that match accepts.
func (s *fakeSource) waitFor(t *testing.T, mark int, what string, match func(protocol.Event) bool) protocol.Event {
	t.Helper()
	timeout := time.After(eventTimeout)
	for from := mark; ; {
		s.mu.Lock()
		for _, e := range s.events[from:] {
			if match(e) {
				s.mu.Unlock()
				return e
			}
		}
		from = len(s.events)
		arrived := s.arrived
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-timeout:
			t.Fatalf("no %s within %v", what, eventTimeout)
		}
	}
}

// retryUntil calls try every second until an event after mark matches.
func (s *fakeSource) retryUntil(t *testing.T, mark int, what string, try func(), match func(protocol.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for time.Now().Before(deadline) {
		try()
		time.Sleep(time.Second)
		s.mu.Lock()
		for _, e := range s.events[mark:] {
			if match(e) {
				s.mu.Unlock()
				return
			}
		}
		s.mu.Unlock()
	}
	t.Fatalf("no %s within %v", what, eventTimeout)
}

// none checks, for a few seconds, that no event after mark matches.
func (s *fakeSource) none(t *testing.T, mark int, what string, match func(protocol.Event) bool) {
	t.Helper()
	time.Sleep(2 * time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events[mark:] {
		if match(e) {
			t.Errorf("unexpected %s: %s", what, e)
		}
	}
}

func (s *fakeSource) publish(t *testing.T, action protocol.Action, consumer, id string, generation int64, bundle *protocol.ManifestBundle) {
	t.Helper()
	e, err := protocol.NewSpecEvent(testSource, action, protocol.BundleRef{ClusterName: consumer, ResourceID: id, ResourceVersion: generation}, bundle)
	if err != nil {
		t.Fatal(err)
	}
	if action == protocol.ActionDeleteRequest {
		e.SetDeletionTimestamp(time.Now())
	}
	s.send(t, e)
}

func (s *fakeSource) send(t *testing.T, e protocol.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), eventTimeout)
	defer cancel()
	if err := s.client.Publish(ctx, s.sourceEvents, e); err != nil {
		t.Fatal(err)
	}
}

// statusOf matches the status events of bundle id of type t for which ok returns true.
func statusOf(t *testing.T, typ protocol.EventType, id string, ok func(*protocol.ManifestBundleStatus) bool) func(protocol.Event) bool {
	return func(e protocol.Event) bool {
		if e.EventType() != typ || e.ResourceID() != id {
			return false
		}
		status, err := e.ManifestBundleStatus()
		if err != nil {
			t.Errorf("undecodable status: %v", err)
			return false
		}
		return ok(status)
	}
}

func observed(condition string, status metav1.ConditionStatus, generation int64) func(*protocol.ManifestBundleStatus) bool {
	return func(s *protocol.ManifestBundleStatus) bool {
		c := meta.FindStatusCondition(s.Conditions, condition)
		return c != nil && c.Status == status && c.ObservedGeneration == generation
	}
}

func isResyncRequest(e protocol.Event) bool { return e.EventType() == protocol.SpecResyncRequest }

func sequenceID(t *testing.T, e protocol.Event) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(e.SequenceID(), 10, 64)
	if err != nil {
		t.Fatalf("sequenceid %q: %v", e.SequenceID(), err)
	}
	return n
}

func secret(namespace, name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"data":     map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(value))},
	}}
}

func testAgent(t *testing.T, mc *framework.ManagementCluster) {
	const consumer, ns = "mc-agent", "agent-bundles"
	s := setUpAgent(t, mc, consumer)
	src := s.source
	begin := src.mark()
	stop := s.start(t)
	first := src.waitFor(t, begin, "spec resync request on connect", isResyncRequest)
	if versions, err := first.ResourceVersions(); err != nil || len(versions.Versions) != 0 {
		t.Errorf("the first resync request holds %+v, %v; want no versions", versions, err)
	}

	// Create: the objects appear, labelled, and the status comes back with its extensions.
	id := newBundleID()
	mark := src.mark()
	src.publish(t, protocol.ActionCreateRequest, consumer, id, 1,
		newBundle(t, namespace(ns), secret(ns, "creds", "s3cret"), configMap(ns, "settings", map[string]any{"a": "1"})))
	created := src.waitFor(t, mark, "status of generation 1", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionAvailable, metav1.ConditionTrue, 1)))
	if created.StatusHash() == "" || created.ClusterName() != consumer || created.ResourceVersion() != 1 {
		t.Errorf("status event with statushash %q, clustername %q, resourceversion %d", created.StatusHash(), created.ClusterName(), created.ResourceVersion())
	}
	for _, o := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
		name      string
	}{{namespaces, "", ns}, {secrets, ns, "creds"}, {configMaps, ns, "settings"}} {
		if got := get(t, mc, o.gvr, o.namespace, o.name).GetLabels()[BundleLabel]; got != id {
			t.Errorf("%s %s carries bundle label %q, want %q", o.gvr.Resource, o.name, got, id)
		}
	}
	holder, raw := findRecord(t, mc, s.opts.StateNamespace, id)
	if holder == nil {
		t.Fatal("the bundle has no record")
	}
	if recorded, err := decodeRecord(id, raw); err != nil || recorded.generation != 1 || holder.Labels[ConsumerLabel] != consumer {
		t.Errorf("the record holds generation %d (%v), labels %v", recorded.generation, err, holder.Labels)
	}

	// Update.
	mark = src.mark()
	generation2 := newBundle(t, namespace(ns), secret(ns, "creds", "s3cret"), configMap(ns, "settings", map[string]any{"a": "2"}))
	src.publish(t, protocol.ActionUpdateRequest, consumer, id, 2, generation2)
	updated := src.waitFor(t, mark, "status of generation 2", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionApplied, metav1.ConditionTrue, 2)))
	if got := data(get(t, mc, configMaps, ns, "settings"), "a"); got != "2" {
		t.Errorf("settings holds a=%q after the update, want 2", got)
	}
	if sequenceID(t, updated) <= sequenceID(t, created) || updated.StatusHash() == created.StatusHash() {
		t.Errorf("the update's status has sequenceid %s and hash %s after %s and %s", updated.SequenceID(), updated.StatusHash(), created.SequenceID(), created.StatusHash())
	}

	// A redelivery of generation 2 and a late generation 1 change nothing: no status, no rollback.
	stale := counter(t, refusedStale)
	mark = src.mark()
	src.publish(t, protocol.ActionUpdateRequest, consumer, id, 2, generation2)
	src.publish(t, protocol.ActionUpdateRequest, consumer, id, 1, newBundle(t, namespace(ns), configMap(ns, "settings", map[string]any{"a": "1"})))
	src.none(t, mark, "status after a duplicate and a stale spec", func(e protocol.Event) bool { return e.ResourceID() == id })
	if got := data(get(t, mc, configMaps, ns, "settings"), "a"); got != "2" {
		t.Errorf("settings holds a=%q after a stale spec, want 2", got)
	}
	if got := counter(t, refusedStale); got != stale+1 {
		t.Errorf("%v stale events counted, want %v", got-stale, 1)
	}

	// A status resync: only what the source does not hold comes back.
	mark = src.mark()
	request, err := protocol.NewStatusResyncRequest(testSource, consumer, []protocol.ResourceStatusHash{{ResourceID: id, StatusHash: "outdated"}})
	if err != nil {
		t.Fatal(err)
	}
	src.send(t, request)
	resent := src.waitFor(t, mark, "status resync response", statusOf(t, protocol.StatusResyncResponse, id, observed(ConditionApplied, metav1.ConditionTrue, 2)))
	if resent.StatusHash() != updated.StatusHash() || resent.ResourceVersion() != 2 || sequenceID(t, resent) <= sequenceID(t, updated) {
		t.Errorf("the resync response has hash %s, resourceversion %d, sequenceid %s", resent.StatusHash(), resent.ResourceVersion(), resent.SequenceID())
	}

	// A manifest the cluster cannot take is reported, not left silent.
	bad := newBundleID()
	mark = src.mark()
	unknownKind := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Nothing", "metadata": map[string]any{"name": "x", "namespace": ns}}}
	src.publish(t, protocol.ActionCreateRequest, consumer, bad, 1, newBundle(t, configMap(ns, "fine", nil), unknownKind))
	failed := src.waitFor(t, mark, "status of a failed apply", statusOf(t, protocol.StatusUpdateRequest, bad, observed(ConditionApplied, metav1.ConditionFalse, 1)))
	if status, _ := failed.ManifestBundleStatus(); len(status.ResourceStatus) != 2 ||
		meta.IsStatusConditionTrue(status.ResourceStatus[1].Conditions, ConditionApplied) {
		t.Errorf("the failed manifest's conditions are not reported: %+v", status.ResourceStatus)
	}

	// Delete with Orphan: the objects stay, the agent lets go of them, the source hears Deleted.
	mark = src.mark()
	src.publish(t, protocol.ActionDeleteRequest, consumer, id, 2,
		&protocol.ManifestBundle{DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}})
	deleted := src.waitFor(t, mark, "Deleted status", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionDeleted, metav1.ConditionTrue, 2)))
	if sequenceID(t, deleted) <= sequenceID(t, resent) {
		t.Errorf("the Deleted status's sequenceid %s is not above %s", deleted.SequenceID(), resent.SequenceID())
	}
	for _, o := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
		name      string
	}{{namespaces, "", ns}, {secrets, ns, "creds"}, {configMaps, ns, "settings"}} {
		obj := get(t, mc, o.gvr, o.namespace, o.name)
		if obj.GetDeletionTimestamp() != nil || obj.GetLabels()[BundleLabel] != "" {
			t.Errorf("orphaned %s %s: deletionTimestamp %v, labels %v", o.gvr.Resource, o.name, obj.GetDeletionTimestamp(), obj.GetLabels())
		}
	}
	// The record goes right after the Deleted status is published: it may take a moment more.
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		holder, _ := findRecord(t, mc, s.opts.StateNamespace, id)
		return holder == nil, nil
	})
	if err != nil {
		t.Errorf("the record of the deleted bundle is still there: %v", err)
	}

	// A delete of a bundle the agent never had is answered at once.
	never := newBundleID()
	mark = src.mark()
	src.publish(t, protocol.ActionDeleteRequest, consumer, never, 3, nil)
	src.waitFor(t, mark, "Deleted status of an unknown bundle", statusOf(t, protocol.StatusUpdateRequest, never, observed(ConditionDeleted, metav1.ConditionTrue, 3)))

	// Two more bundles, then a restart: one is deleted at the source meanwhile, the other drifts.
	goner, kept := newBundleID(), newBundleID()
	mark = src.mark()
	src.publish(t, protocol.ActionCreateRequest, consumer, goner, 1, newBundle(t, configMap(ns, "goner", nil)))
	src.publish(t, protocol.ActionCreateRequest, consumer, kept, 4, newBundle(t, configMap(ns, "kept", map[string]any{"v": "desired"})))
	src.waitFor(t, mark, "status of the bundle to delete", statusOf(t, protocol.StatusUpdateRequest, goner, observed(ConditionAvailable, metav1.ConditionTrue, 1)))
	src.waitFor(t, mark, "status of the bundle to keep", statusOf(t, protocol.StatusUpdateRequest, kept, observed(ConditionAvailable, metav1.ConditionTrue, 4)))
	stop()

	patch := []byte(`{"data":{"v":"drifted"}}`)
	if _, err := mc.Dynamic.Resource(configMaps).Namespace(ns).Patch(t.Context(), "kept", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	mark = src.mark()
	s.start(t)
	resync := src.waitFor(t, mark, "spec resync request after the restart", isResyncRequest)
	versions, err := resync.ResourceVersions()
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int64{}
	for _, v := range versions.Versions {
		held[v.ResourceID] = v.ResourceVersion
	}
	if len(held) != 3 || held[goner] != 1 || held[kept] != 4 || held[bad] != 1 {
		t.Errorf("the restarted agent holds %v; want %s at 1, %s at 4 and %s at 1", held, goner, kept, bad)
	}
	// The source no longer has goner: it answers with a deletion without data, as Maestro does.
	src.publish(t, protocol.ActionResyncResponse, consumer, kept, 4, newBundle(t, configMap(ns, "kept", map[string]any{"v": "desired"})))
	gone, err := protocol.NewSpecEvent(testSource, protocol.ActionResyncResponse, protocol.BundleRef{ClusterName: consumer, ResourceID: goner, ResourceVersion: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone.SetDeletionTimestamp(time.Now())
	src.send(t, gone)

	// Foreground: no garbage collector runs here, so the test removes the finalizer as it would.
	waitForObject(t, mc, configMaps, ns, "goner", "a deletion timestamp", func(obj *unstructured.Unstructured) bool { return obj.GetDeletionTimestamp() != nil })
	removeFinalizers(t, mc, configMaps, ns, "goner")
	src.waitFor(t, mark, "Deleted status after the restart", statusOf(t, protocol.StatusUpdateRequest, goner, observed(ConditionDeleted, metav1.ConditionTrue, 1)))
	if exists(t, mc, configMaps, ns, "goner") {
		t.Error("the object of the bundle deleted during the restart is still there")
	}
	waitForObject(t, mc, configMaps, ns, "kept", "its data applied again", func(obj *unstructured.Unstructured) bool { return data(obj, "v") == "desired" })

	// The broker restarts, losing what was in flight, while an object goes away: the source asks for
	// the statuses it lacks until the agent is back, and hears of it.
	s.broker.Stop()
	if err := mc.Dynamic.Resource(configMaps).Namespace(ns).Delete(t.Context(), "kept", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mark = src.mark()
	if err := s.broker.Start(); err != nil {
		t.Fatal(err)
	}
	src.retryUntil(t, mark, "status of the object gone while the broker was down", func() {
		if request, err := protocol.NewStatusResyncRequest(testSource, consumer, nil); err == nil {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_ = src.client.Publish(ctx, src.sourceEvents, request)
		}
	}, func(e protocol.Event) bool {
		return (e.EventType() == protocol.StatusUpdateRequest || e.EventType() == protocol.StatusResyncResponse) &&
			statusOf(t, e.EventType(), kept, observed(ConditionAvailable, metav1.ConditionFalse, 4))(e)
	})
}

// findRecord returns the record Secret that holds the record of bundle id, and the record; nil if none does.
func findRecord(t *testing.T, mc *framework.ManagementCluster, namespace, id string) (*corev1.Secret, []byte) {
	t.Helper()
	list, err := mc.Kube.CoreV1().Secrets(namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if raw, ok := list.Items[i].Data[id]; ok && list.Items[i].Type == RecordType {
			return &list.Items[i], raw
		}
	}
	return nil, nil
}

// counter returns how many events were refused for reason.
func counter(t *testing.T, reason string) float64 {
	t.Helper()
	n, err := testutil.GetCounterMetricValue(eventsRefused.WithLabelValues(reason))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForObject waits on a watch until the object satisfies ok.
func waitForObject(t *testing.T, mc *framework.ManagementCluster, gvr schema.GroupVersionResource, ns, name, what string, ok func(*unstructured.Unstructured) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), eventTimeout)
	defer cancel()
	w, err := mc.Dynamic.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if obj, isObj := ev.Object.(*unstructured.Unstructured); isObj && ok(obj) {
			return
		}
	}
	t.Fatalf("%s %s/%s did not get %s: %v", gvr.Resource, ns, name, what, ctx.Err())
}

// requestCounter counts the requests the clients of a rest.Config make, by verb and resource.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		verb := r.Method
		if r.URL.Query().Get("watch") == "true" {
			verb = "WATCH"
		}
		resource := ""
		for _, p := range strings.Split(strings.Trim(r.URL.Path, "/"), "/") {
			if p == "configmaps" || p == "secrets" {
				resource = p
			}
		}
		c.mu.Lock()
		c.n[verb+" "+resource]++
		c.mu.Unlock()
		return next.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *requestCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

func testRequestsPerBundle(t *testing.T, mc *framework.ManagementCluster) {
	const consumer, ns, bundles = "mc-requests", "agent-requests", 60
	createNamespace(t, mc, ns)
	s := setUpAgent(t, mc, consumer)
	counter := &requestCounter{n: map[string]int{}}
	cfg := rest.CopyConfig(mc.Config)
	cfg.Wrap(counter.wrap)
	s.opts.Kube, s.opts.Workers = cfg, 4
	src := s.source
	mark := src.mark()
	s.start(t)
	src.waitFor(t, mark, "spec resync request on connect", isResyncRequest)
	// The first bundle of a kind starts the agent's informer on it: counted apart.
	first := newBundleID()
	src.publish(t, protocol.ActionCreateRequest, consumer, first, 1, newBundle(t, configMap(ns, "first", nil)))
	src.waitFor(t, mark, "status of the first bundle", statusOf(t, protocol.StatusUpdateRequest, first, observed(ConditionApplied, metav1.ConditionTrue, 1)))
	before := counter.counts()

	// The bundles come at once, as when a source publishes many: their records share writes.
	mark = src.mark()
	ids := make([]string, bundles)
	events := make([]protocol.Event, bundles)
	for i := range ids {
		ids[i] = newBundleID()
		e, err := protocol.NewSpecEvent(testSource, protocol.ActionCreateRequest, protocol.BundleRef{ClusterName: consumer, ResourceID: ids[i], ResourceVersion: 1},
			newBundle(t, configMap(ns, fmt.Sprintf("cm-%d", i), map[string]any{"v": "1"})))
		if err != nil {
			t.Fatal(err)
		}
		events[i] = e
	}
	errs := make(chan error, bundles)
	for _, e := range events {
		go func() { errs <- src.client.Publish(t.Context(), src.sourceEvents, e) }()
	}
	for range events {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		src.waitFor(t, mark, "status of bundle "+id, statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionAvailable, metav1.ConditionTrue, 1)))
	}
	after := counter.counts()
	delta, total := map[string]int{}, 0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			delta[k] = d
			total += d
		}
	}
	// One apply per bundle, no read, and record writes that many bundles share.
	if delta["PATCH configmaps"] != bundles || delta["GET configmaps"] != 0 {
		t.Errorf("the ConfigMaps of %d bundles took %v", bundles, delta)
	}
	if total > bundles*3/2 {
		t.Errorf("%d one-manifest bundles took %d requests to the management cluster, more than 1.5 each: %v", bundles, total, delta)
	}
	t.Logf("%d one-manifest bundles took %d requests to the management cluster: %v", bundles, total, delta)
}

// testRecordSecretsUpdatedWhole checks that a record Secret is written whole, as an update at the
// resourceVersion the agent last saw (protobuf, which the API server reads as it is, where it would encode
// the stored Secret to JSON to merge a patch), and that a Secret someone else changed meanwhile gets the
// records as a merge patch, keeping the other's change.
func testRecordSecretsUpdatedWhole(t *testing.T, mc *framework.ManagementCluster) {
	const ns = "agent-records-whole"
	createNamespace(t, mc, ns)
	ctx, client, wrote := startCountedRecords(t, rest.CopyConfig(mc.Config), ns)

	wrote(1, map[string]int{"POST secrets": 1})
	wrote(2, map[string]int{"PUT secrets": 1})
	secrets, err := mc.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 || len(secrets.Items[0].Data) != 2 {
		t.Fatalf("two records are in %d Secrets: %+v", len(secrets.Items), secrets.Items)
	}
	// Someone else annotates the Secret: the agent's update is refused (409), and its patch keeps the
	// annotation.
	other := &secrets.Items[0]
	other.Annotations = map[string]string{"example.com/reviewed": "yes"}
	if _, err := mc.Kube.CoreV1().Secrets(ns).Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wrote(3, map[string]int{"PUT secrets": 1, "PATCH secrets": 1})
	wrote(4, map[string]int{"PUT secrets": 1})
	got, err := mc.Kube.CoreV1().Secrets(ns).Get(ctx, other.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations["example.com/reviewed"] != "yes" || len(got.Data) != 4 {
		t.Errorf("after the writes the Secret holds %d records and annotations %v, want 4 and the other's", len(got.Data), got.Annotations)
	}
	specs, unreadable, err := newRecords(client, ns, testConsumer, testSource).load(ctx)
	if err != nil || len(unreadable) > 0 || len(specs) != 4 {
		t.Errorf("a restart finds %d records (%v, %v), want 4", len(specs), err, unreadable)
	}
}

// startCountedRecords runs a record store in ns on cfg and returns its context, its client, and wrote,
// which saves record i and checks which requests that took.
func startCountedRecords(t *testing.T, cfg *rest.Config, ns string) (context.Context, kubernetes.Interface, func(i int, want map[string]int)) {
	t.Helper()
	counter := &requestCounter{n: map[string]int{}}
	cfg.Wrap(counter.wrap)
	client, err := recordsClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := newRecords(client, ns, testConsumer, testSource)
	if _, _, err := r.load(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testContext(t))
	t.Cleanup(cancel)
	go r.run(ctx)
	wrote := func(i int, want map[string]int) {
		t.Helper()
		before := counter.counts()
		if err := r.save(ctx, recordID(i), spec{generation: 1, bundle: bundleOfSize(1000)}); err != nil {
			t.Fatal(err)
		}
		after := counter.counts()
		got := map[string]int{}
		for _, k := range []string{"POST secrets", "PUT secrets", "PATCH secrets"} {
			if d := after[k] - before[k]; d > 0 {
				got[k] = d
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("record %d was written with %v, want %v", i, got, want)
		}
	}
	return ctx, client, wrote
}

// testRecordsWithoutUpdate checks that an agent whose role grants patch on Secrets but not update, as
// artifacts/agent's did before the agent updated its records whole, goes on recording: its first update is
// refused (403), and it merge-patches that record and every one after.
func testRecordsWithoutUpdate(t *testing.T, mc *framework.ManagementCluster) {
	const ns, user = "agent-records-no-update", "agent-without-update"
	createNamespace(t, mc, ns)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
			Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := mc.Kube.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Kube.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(mc.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	waitUntilAllowed(t, cfg, ns, "secrets")
	ctx, client, wrote := startCountedRecords(t, cfg, ns)

	wrote(1, map[string]int{"POST secrets": 1})
	wrote(2, map[string]int{"PUT secrets": 1, "PATCH secrets": 1})
	wrote(3, map[string]int{"PATCH secrets": 1})
	specs, unreadable, err := newRecords(client, ns, testConsumer, testSource).load(ctx)
	if err != nil || len(unreadable) > 0 || len(specs) != 3 {
		t.Errorf("a restart finds %d records (%v, %v), want 3", len(specs), err, unreadable)
	}
}

// waitUntilAllowed waits until cfg's user may list resource (of the core group) in ns. kube-apiserver
// authorizes from its informers' copy of the RBAC objects, which learns of a new binding a moment after
// the binding's create was answered.
func waitUntilAllowed(t *testing.T, cfg *rest.Config, ns, resource string) {
	t.Helper()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, eventTimeout, true, func(ctx context.Context) (bool, error) {
		last = client.CoreV1().RESTClient().Get().Namespace(ns).Resource(resource).Do(ctx).Error()
		return last == nil, nil
	}); err != nil {
		t.Fatalf("%s may still not list %s in %s: %v", cfg.Impersonate.UserName, resource, ns, last)
	}
}

// testRepeatedDeletes checks that a delete the source sends again while the objects wait for their
// dependents costs the management cluster nothing: the agent waits on its informers, and they, not
// another round of lists, tell it when the objects are gone.
func testRepeatedDeletes(t *testing.T, mc *framework.ManagementCluster) {
	const consumer, ns = "mc-repeated-deletes", "agent-repeated-deletes"
	createNamespace(t, mc, ns)
	s := setUpAgent(t, mc, consumer)
	counter := &requestCounter{n: map[string]int{}}
	cfg := rest.CopyConfig(mc.Config)
	cfg.Wrap(counter.wrap)
	s.opts.Kube = cfg
	src := s.source
	mark := src.mark()
	s.start(t)
	src.waitFor(t, mark, "spec resync request on connect", isResyncRequest)
	id := newBundleID()
	bundle := newBundle(t, configMap(ns, "waits", nil))
	src.publish(t, protocol.ActionCreateRequest, consumer, id, 1, bundle)
	src.waitFor(t, mark, "status of the bundle", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionApplied, metav1.ConditionTrue, 1)))

	// The first delete deletes and lists: a DELETE, and a GET (list) each for the delete and the check.
	before := counter.counts()
	src.publish(t, protocol.ActionDeleteRequest, consumer, id, 1, nil)
	waitForObject(t, mc, configMaps, ns, "waits", "a deletion timestamp", func(obj *unstructured.Unstructured) bool { return obj.GetDeletionTimestamp() != nil })
	deadline := time.Now().Add(eventTimeout)
	for now := counter.counts(); now["GET configmaps"] < before["GET configmaps"]+2; now = counter.counts() {
		if time.Now().After(deadline) {
			t.Fatalf("the first delete did not list the bundle's ConfigMaps twice: %v before, %v after", before, now)
		}
		time.Sleep(50 * time.Millisecond)
	}

	before = counter.counts()
	mark = src.mark()
	for range 5 {
		src.publish(t, protocol.ActionDeleteRequest, consumer, id, 1, nil)
	}
	src.none(t, mark, "Deleted status while the object waits", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionDeleted, metav1.ConditionTrue, 1)))
	after := counter.counts()
	for _, k := range []string{"GET configmaps", "DELETE configmaps", "WATCH configmaps"} {
		if d := after[k] - before[k]; d != 0 {
			t.Errorf("5 repeated deletes of a bundle whose object waits made %d %s requests; want none", d, k)
		}
	}

	// The collector's part: the object goes, the informers tell, the source hears Deleted.
	removeFinalizers(t, mc, configMaps, ns, "waits")
	src.waitFor(t, mark, "Deleted status", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionDeleted, metav1.ConditionTrue, 1)))
}
