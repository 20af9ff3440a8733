package updateservice

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	updateservicedouble "github.com/aro-hcp/hcp-apiserver/test/updateservice"
)

// wait bounds every wait for something the poller should do soon.
const wait = 5 * time.Second

// fastOptions poll often and retry soon, so that tests wait milliseconds.
func fastOptions(url string, channels ...string) Options {
	return Options{URL: url, Channels: channels, Interval: 5 * time.Millisecond, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

// newPoller returns a poller whose merged graphs arrive on the channel returned.
func newPoller(t *testing.T, opts Options) (*Poller, <-chan []byte) {
	t.Helper()
	graphs := make(chan []byte, 100)
	onGraph := opts.OnGraph
	opts.OnGraph = func(ctx context.Context, graph []byte) {
		if onGraph != nil {
			onGraph(ctx, graph)
		}
		graphs <- graph
	}
	p, err := NewPoller(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p, graphs
}

// run runs the poller until the test ends, and fails the test when Run does not return once its
// context ends.
func run(t *testing.T, p *Poller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Error("Run did not return after its context ended")
		}
	})
}

func next(t *testing.T, graphs <-chan []byte) *Graph {
	t.Helper()
	select {
	case data := <-graphs:
		return mustParse(t, string(data))
	case <-time.After(wait):
		t.Fatal("no merged graph was handed on")
		return nil
	}
}

func none(t *testing.T, graphs <-chan []byte) {
	t.Helper()
	select {
	case data := <-graphs:
		t.Fatalf("a merged graph was handed on when none should be: %s", data)
	default:
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// versions lists a graph's versions and, for each, the channels it is in.
func versions(g *Graph) string {
	var out []string
	for _, n := range g.Nodes {
		out = append(out, n.Version+"("+n.Metadata[versioncatalog.ChannelsMetadataKey]+")")
	}
	return strings.Join(out, " ")
}

func noRejects(t *testing.T, s *updateservicedouble.Server) {
	t.Helper()
	if r := s.Rejected(); len(r) > 0 {
		t.Errorf("the update service rejected requests: %q", r)
	}
}

// The poller merges the channels' graphs, hands the result on once, asks with validators so that an
// unchanged channel answers 304 and hands nothing on, and hands on the next change.
func TestPollerHandsOnChanges(t *testing.T) {
	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8", "4.20.9")
	srv.AddEdge("stable-4.20", "4.20.8", "4.20.9")
	srv.AddNode("fast-4.21", "4.20.9", "4.21.0")
	srv.AddEdge("fast-4.21", "4.20.9", "4.21.0")
	p, graphs := newPoller(t, fastOptions(srv.URL, "stable-4.20", "fast-4.21"))
	run(t, p)

	g := next(t, graphs)
	if got, want := versions(g), "4.20.8(stable-4.20) 4.20.9(fast-4.21,stable-4.20) 4.21.0(fast-4.21)"; got != want {
		t.Errorf("merged graph has %s, want %s", got, want)
	}
	if len(g.Edges) != 2 || g.Nodes[0].Payload != "quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64" {
		t.Errorf("merged graph %+v, want both edges and amd64 payloads", g)
	}

	eventually(t, "both channels answered 304 three times", func() bool {
		return srv.NotModified("stable-4.20") >= 3 && srv.NotModified("fast-4.21") >= 3
	})
	none(t, graphs)

	srv.AddNode("fast-4.21", "4.21.1")
	srv.AddEdge("fast-4.21", "4.21.0", "4.21.1")
	if got := versions(next(t, graphs)); !strings.Contains(got, "4.21.1(fast-4.21)") {
		t.Errorf("after 4.21.1 was added the graph has %s", got)
	}
	noRejects(t, srv)
}

// A service that sends only Last-Modified is asked with If-Modified-Since, and its 304 keeps the graph.
func TestIfModifiedSince(t *testing.T) {
	const modified = "Fri, 04 Dec 2026 06:00:00 GMT"
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("If-Modified-Since"))
		mu.Unlock()
		if r.Header.Get("If-Modified-Since") == modified {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Last-Modified", modified)
		fmt.Fprint(w, `{"nodes":[{"version":"4.20.8","payload":"quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64"}]}`)
	}))
	defer srv.Close()
	p, graphs := newPoller(t, fastOptions(srv.URL, "stable-4.20"))
	run(t, p)
	next(t, graphs)
	eventually(t, "three requests", func() bool { mu.Lock(); defer mu.Unlock(); return len(asked) >= 3 })
	none(t, graphs)
	mu.Lock()
	defer mu.Unlock()
	if asked[0] != "" || asked[1] != modified {
		t.Errorf("If-Modified-Since sent %q, want none at first, then %q", asked, modified)
	}
}

// Garbage and errors from the service leave the last graph in place and hand nothing on; once the
// service is back it answers 304 to the validators the poller kept, and a change is handed on.
func TestFailuresKeepTheLastGraph(t *testing.T) {
	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8")
	p, graphs := newPoller(t, fastOptions(srv.URL, "stable-4.20"))
	run(t, p)
	first := next(t, graphs)

	for _, fault := range []struct {
		name string
		set  func(...string)
	}{{"garbage", srv.Garbage}, {"503", srv.Down}} {
		fault.set()
		asked := srv.Requests("stable-4.20")
		eventually(t, "three requests during "+fault.name, func() bool { return srv.Requests("stable-4.20") >= asked+3 })
		none(t, graphs)
	}

	srv.Up()
	notModified := srv.NotModified("stable-4.20")
	eventually(t, "a 304 after the service is back", func() bool { return srv.NotModified("stable-4.20") > notModified })
	none(t, graphs)

	srv.AddNode("stable-4.20", "4.20.9")
	if got := versions(next(t, graphs)); got != versions(first)+" 4.20.9(stable-4.20)" {
		t.Errorf("after the faults and a change the graph has %s", got)
	}
	errors, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, "update_service_requests_total",
		map[string]string{"channel": "stable-4.20"}, "result")
	if err != nil {
		t.Fatal(err)
	}
	if errors["error"] < 6 || errors["ok"] < 2 || errors["not-modified"] < 1 {
		t.Errorf("update_service_requests_total by result %v, want at least 6 errors, 2 ok and a not-modified", errors)
	}
}

// A channel that fails keeps its last good graph in the merge while the others move on.
func TestFailingChannelKeepsItsGraph(t *testing.T) {
	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8")
	srv.AddNode("fast-4.21", "4.21.0")
	p, graphs := newPoller(t, fastOptions(srv.URL, "stable-4.20", "fast-4.21"))
	run(t, p)
	next(t, graphs)

	srv.Down("fast-4.21")
	srv.AddNode("stable-4.20", "4.20.9")
	if got, want := versions(next(t, graphs)), "4.20.8(stable-4.20) 4.20.9(stable-4.20) 4.21.0(fast-4.21)"; got != want {
		t.Errorf("with fast-4.21 down the graph has %s, want %s", got, want)
	}
}

// No merged graph is handed on until every channel has answered once: half a graph would take a
// channel group's releases away.
func TestChannelThatNeverAnsweredHoldsTheGraphBack(t *testing.T) {
	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8")
	srv.AddNode("fast-4.21", "4.21.0")
	srv.Garbage("fast-4.21")
	p, graphs := newPoller(t, fastOptions(srv.URL, "stable-4.20", "fast-4.21"))
	run(t, p)

	eventually(t, "both channels were asked three times", func() bool {
		return srv.Requests("stable-4.20") >= 3 && srv.Requests("fast-4.21") >= 3
	})
	none(t, graphs)
	srv.Up()
	if got, want := versions(next(t, graphs)), "4.20.8(stable-4.20) 4.21.0(fast-4.21)"; got != want {
		t.Errorf("once fast-4.21 answers the graph has %s, want %s", got, want)
	}
}

// A stored graph is handed on at once, before the service answers, and stands in for channels that
// have not answered; each new graph is saved before it is handed on, and an unchanged one neither.
func TestStoreSeedsAndSaves(t *testing.T) {
	seed, err := Merge(map[string]*Graph{
		"stable-4.20": mustParse(t, `{"nodes":[{"version":"4.20.8","payload":"quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64"}]}`),
		"fast-4.21":   mustParse(t, `{"nodes":[{"version":"4.21.0","payload":"quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	seedBytes, _ := seed.Marshal()
	store := NewMemoryStore(seedBytes)

	srv := updateservicedouble.Start(t)
	srv.Down()
	opts := fastOptions(srv.URL, "stable-4.20", "fast-4.21")
	opts.Store = store
	var savedFirst []string
	opts.OnGraph = func(ctx context.Context, graph []byte) {
		stored, _ := store.Load(ctx)
		if !bytes.Equal(stored, graph) {
			savedFirst = append(savedFirst, string(graph))
		}
	}
	p, graphs := newPoller(t, opts)
	run(t, p)

	if got := next(t, graphs); versions(got) != versions(seed) {
		t.Errorf("handed on %s at start, want the stored %s", versions(got), versions(seed))
	}
	eventually(t, "the service was asked twice", func() bool { return srv.Requests("stable-4.20") >= 2 })
	none(t, graphs)

	// stable-4.20 answers with a new release; fast-4.21 never does, and the stored graph stands in for it.
	srv.AddNode("stable-4.20", "4.20.8", "4.20.9")
	srv.Up("stable-4.20")
	if got, want := versions(next(t, graphs)), "4.20.8(stable-4.20) 4.20.9(stable-4.20) 4.21.0(fast-4.21)"; got != want {
		t.Errorf("handed on %s, want %s", got, want)
	}
	if store.Saves() != 1 {
		t.Errorf("saved %d times, want once: the new graph", store.Saves())
	}
	notModified := srv.NotModified("stable-4.20")
	eventually(t, "stable-4.20 answered 304 twice", func() bool { return srv.NotModified("stable-4.20") >= notModified+2 })
	none(t, graphs)
	if store.Saves() != 1 || savedFirst != nil {
		t.Errorf("saved %d times, want once; graphs handed on before they were saved: %q", store.Saves(), savedFirst)
	}
	if nodes, err := testutil.GetGaugeMetricValue(graphNodes); err != nil || nodes != 3 {
		t.Errorf("update_service_graph_nodes = %v, %v; want 3", nodes, err)
	}
}

// A restart that finds the service as it was hands on the stored graph and nothing after it.
func TestRestartWithAnUnchangedService(t *testing.T) {
	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8", "4.20.9")
	srv.AddEdge("stable-4.20", "4.20.8", "4.20.9")
	store := NewMemoryStore(nil)
	opts := fastOptions(srv.URL, "stable-4.20")
	opts.Store = store

	first, graphs := newPoller(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); first.Run(ctx) }()
	next(t, graphs)
	cancel()
	<-done
	if store.Saves() != 1 {
		t.Fatalf("saved %d times, want once", store.Saves())
	}

	second, graphs := newPoller(t, opts)
	run(t, second)
	next(t, graphs)
	asked := srv.Requests("stable-4.20")
	eventually(t, "two more requests", func() bool { return srv.Requests("stable-4.20") >= asked+2 })
	none(t, graphs)
	if store.Saves() != 1 {
		t.Errorf("saved %d times, want once: the graph did not change", store.Saves())
	}
}

// After failures a channel waits Backoff, then twice as long each time up to MaxBackoff; one answer
// puts it back on Interval, and the next failure waits Backoff again.
func TestBackoffGrowsAndResets(t *testing.T) {
	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8")
	srv.Down()
	p, graphs := newPoller(t, Options{URL: srv.URL, Channels: []string{"stable-4.20"},
		Interval: time.Hour, Backoff: time.Second, MaxBackoff: 4 * time.Second})
	clock := clocktesting.NewFakeClock(time.Now())
	p.clock = clock
	p.random = func() float64 { return 0 }
	run(t, p)

	requests := 1
	waiting := func() {
		t.Helper()
		eventually(t, fmt.Sprintf("request %d was answered", requests), func() bool {
			return srv.Requests("stable-4.20") == requests && clock.HasWaiters()
		})
	}
	// waits steps the clock to just before d and then to d, and wants the next request only then.
	waits := func(d time.Duration) {
		t.Helper()
		waiting()
		clock.Step(d - time.Millisecond)
		// A timer that fires leaves the fake clock's waiters at once, long before the request it
		// starts could make a new one.
		if !clock.HasWaiters() || srv.Requests("stable-4.20") != requests {
			t.Fatalf("asked again before %v passed", d)
		}
		clock.Step(time.Millisecond)
		requests++
		waiting()
	}
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		waits(d)
	}
	srv.Up()
	waits(4 * time.Second)
	next(t, graphs)
	srv.Down()
	waits(time.Hour)
	waits(time.Second)
}

// The jitter takes up to half of the wait away, never adds to it, so MaxBackoff bounds it.
func TestBackoffJitter(t *testing.T) {
	p, err := NewPoller(Options{URL: "https://example.com", Channels: []string{"stable-4.20"}, OnGraph: func(context.Context, []byte) {},
		Backoff: 10 * time.Second, MaxBackoff: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		random   float64
		failures int
		want     time.Duration
	}{
		{random: 0, failures: 1, want: 10 * time.Second},
		{random: 0.5, failures: 1, want: 7500 * time.Millisecond},
		{random: 0, failures: 3, want: 40 * time.Second},
		{random: 0, failures: 100, want: time.Minute},
		{random: 0.999999, failures: 100, want: 30*time.Second + 30*time.Microsecond},
	} {
		p.random = func() float64 { return tc.random }
		if got := p.backoff(tc.failures); got != tc.want {
			t.Errorf("backoff after %d failures with random %v = %v, want %v", tc.failures, tc.random, got, tc.want)
		}
	}
}

// A request that hangs ends at Timeout, a body past MaxBodyBytes is refused, and Run returns at once
// when its context ends, with no request left behind.
func TestRequestLimits(t *testing.T) {
	entered := make(chan struct{}, 100)
	left := make(chan struct{}, 100)
	var inFlight atomic.Int32
	var hanging atomic.Bool
	var mu sync.Mutex
	hang, body := true, ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer func() { inFlight.Add(-1); left <- struct{}{} }()
		entered <- struct{}{}
		mu.Lock()
		h, b := hang, body
		mu.Unlock()
		if h {
			hanging.Store(true)
			defer hanging.Store(false)
			<-r.Context().Done()
			return
		}
		fmt.Fprint(w, b)
	}))
	defer srv.Close()
	opts := fastOptions(srv.URL, "limits-4.20")
	opts.Timeout = 20 * time.Millisecond
	opts.MaxBodyBytes = 200
	p, graphs := newPoller(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()

	<-entered
	<-left
	<-entered // the hanging request timed out and the poller asked again

	mu.Lock()
	hang, body = false, `{"nodes":[{"version":"4.20.8","payload":"quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64","metadata":{"x":"`+strings.Repeat("x", 200)+`"}}]}`
	mu.Unlock()
	<-left
	<-entered
	<-left
	none(t, graphs)
	errors, _ := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, "update_service_requests_total",
		map[string]string{"channel": "limits-4.20"}, "result")
	if errors["error"] < 2 {
		t.Errorf("errors counted %v, want the timeout and the large body", errors)
	}

	mu.Lock()
	hang = true
	mu.Unlock()
	eventually(t, "a request hangs", func() bool { return inFlight.Load() == 1 && hanging.Load() })
	cancel()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Run did not return after its context ended")
	}
	eventually(t, "no request is open after Run returned", func() bool { return inFlight.Load() == 0 })
}

// Options that cannot work are refused when the poller is made; a graph URL as a cluster's upstream
// names it works as well as the service's base URL.
func TestNewPoller(t *testing.T) {
	onGraph := func(context.Context, []byte) {}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{name: "no URL", opts: Options{Channels: []string{"stable-4.20"}, OnGraph: onGraph}, want: "no URL"},
		{name: "not http", opts: Options{URL: "ftp://x", Channels: []string{"stable-4.20"}, OnGraph: onGraph}, want: "not an http(s) URL"},
		{name: "no channels", opts: Options{URL: "https://x", OnGraph: onGraph}, want: "no channels"},
		{name: "channel without minor", opts: Options{URL: "https://x", Channels: []string{"stable"}, OnGraph: onGraph}, want: `"stable"`},
		{name: "channel twice", opts: Options{URL: "https://x", Channels: []string{"stable-4.20", "stable-4.20"}, OnGraph: onGraph}, want: "twice"},
		{name: "no OnGraph", opts: Options{URL: "https://x", Channels: []string{"stable-4.20"}}, want: "no OnGraph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewPoller(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewPoller = %v, want an error containing %q", err, tc.want)
			}
		})
	}

	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8")
	for _, url := range []string{srv.URL + "/", srv.URL + GraphPath} {
		opts := fastOptions(url, "stable-4.20")
		opts.Arch = "arm64"
		p, graphs := newPoller(t, opts)
		run(t, p)
		if g := next(t, graphs); g.Nodes[0].Payload != "quay.io/openshift-release-dev/ocp-release:4.20.8-aarch64" {
			t.Errorf("URL %s: payload %s, want the arm64 release", url, g.Nodes[0].Payload)
		}
	}
	noRejects(t, srv)
}
