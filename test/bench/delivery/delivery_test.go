// Package delivery measures Maestro delivery next to its limit, the broker it rides on: bundles published
// by hcp-apiserver's source, applied by the real maestro-agent on a real management cluster and reported
// back, against raw MQTT QoS 1 round trips of the same payload size through the same broker, in the same
// run. It is a test so that it can use the test framework's management cluster; run it with
//
//	go test ./test/bench/delivery -run TestDeliveryBenchmark -v -args -bundles 1000
//
// It prints figures; it asserts only that every bundle came back, never a speed.
package delivery

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

var (
	bundles  = flag.Int("bundles", 100, "bundles to deliver (and raw MQTT round trips to make)")
	inFlight = flag.Int("in-flight", 64, "raw MQTT messages in flight at once (the source publishes all bundles at once, with its workers)")
	workers  = flag.Int("agent-workers", 16, "the agent's --workers, and the concurrency of the direct apply")
	// agentProfile is how the agent's own CPU was found: go tool pprof <maestro-agent binary> <file>.
	agentProfile      = flag.String("agent-cpu-profile", "", "write a CPU profile of maestro-agent, taken for 5 s from the start of the first row, to this file")
	kubeProfilePrefix = flag.String("kube-cpu-profile", "", "write CPU profiles of the management cluster's kube-apiserver, taken for 4 s from the start of each way of the first row, to PREFIX-maestro.pprof and PREFIX-direct.pprof")
)

const (
	sourceID = "bench"
	consumer = "mc-bench"
)

// result is one side of the comparison.
type result struct {
	count     int
	elapsed   time.Duration
	latencies []time.Duration // sorted
}

func (r result) perSecond() float64 { return float64(r.count) / r.elapsed.Seconds() }

func (r result) percentile(p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(r.latencies)))) - 1
	return r.latencies[max(i, 0)]
}

// scenario is one kind of bundle to deliver.
type scenario struct {
	name string
	// bundle builds bundle i; object builds the object it applies, for the direct apply.
	bundle func(t *testing.T, i int) *protocol.ManifestBundle
	object func(t *testing.T, i int) *unstructured.Unstructured
	gvr    schema.GroupVersionResource
}

var scenarios = []scenario{
	{
		name: "HostedCluster (ARO HCP-style, with feedback rules)",
		bundle: func(t *testing.T, i int) *protocol.ManifestBundle {
			return hostedClusterBundle(t, benchNamespace, fmt.Sprintf("hc-%06d", i))
		},
		object: func(t *testing.T, i int) *unstructured.Unstructured {
			return hostedCluster(t, benchNamespace, fmt.Sprintf("direct-hc-%06d", i))
		},
		gvr: schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"},
	},
	{
		name: "ConfigMap of 3 KB",
		bundle: func(t *testing.T, i int) *protocol.ManifestBundle {
			return configMapBundle(t, benchNamespace, fmt.Sprintf("cm-%06d", i))
		},
		object: func(t *testing.T, i int) *unstructured.Unstructured {
			return configMap(benchNamespace, fmt.Sprintf("direct-cm-%06d", i))
		},
		gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	},
}

const benchNamespace = "bench"

// figures are the measurements of one scenario.
type figures struct {
	bundleBytes int
	delivery    result
	// direct is the same objects server-side applied straight to the management cluster by a client as
	// concurrent as the agent: the management cluster's limit. raw is MQTT's.
	direct, raw result
	// deliveryCPU and directCPU are the CPU time each process used per bundle in the two rounds.
	deliveryCPU, directCPU map[string]time.Duration
}

func TestDeliveryBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a management cluster, a broker and an agent")
	}
	mc := framework.StartManagementCluster(t)
	broker := maestrotest.StartBroker(t)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()

	statuses := &firstStatuses{at: map[string]time.Time{}}
	src, err := source.New(source.Options{Source: sourceID, Workers: 8,
		Broker: transport.Config{URL: broker.URL, TLS: broker.SourceTLS(t, sourceID)}})
	if err != nil {
		t.Fatal(err)
	}
	src.AddStatusHandler(statuses.record)
	src.SetSynced()
	go func() { _ = src.Run(ctx) }()
	metrics := "0"
	if *agentProfile != "" {
		metrics = "127.0.0.1:" + strconv.Itoa(framework.FreePort(t))
	}
	agent := framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"),
		"--agent-bundle="+broker.AgentBundle(t, sourceID, consumer), "--kubeconfig="+mc.Kubeconfig,
		"--metrics-bind-address="+metrics, "--profiling="+strconv.FormatBool(*agentProfile != ""), fmt.Sprintf("--workers=%d", *workers))
	kubeProfileClient, err := rest.HTTPClientFor(mc.Config)
	if err != nil {
		t.Fatal(err)
	}
	meter := framework.NewCPUMeter()
	meter.Add("mgmt kube-apiserver", mc.APIServer.PID())
	meter.Add("mgmt etcd", mc.Etcd.Members[0].PID())
	meter.Add("maestro-agent", agent.PID())
	meter.Add("test (source, broker, direct client)", os.Getpid())

	// The namespace and one object of each kind first, so that discovery and informers are warm.
	if err := src.Apply(consumer, "warm-up-namespace", 1, namespaceBundle(t, benchNamespace)); err != nil {
		t.Fatal(err)
	}
	statuses.wait(t, []string{"warm-up-namespace"})
	for i, sc := range scenarios {
		id := fmt.Sprintf("warm-up-%d", i)
		if err := src.Apply(consumer, id, 1, sc.bundle(t, 999999)); err != nil {
			t.Fatal(err)
		}
		statuses.wait(t, []string{id})
	}

	results := make([]figures, len(scenarios))
	for i, sc := range scenarios {
		payload, err := json.Marshal(sc.bundle(t, 0))
		if err != nil {
			t.Fatal(err)
		}
		results[i].bundleBytes = len(payload)
		before := meter.Read(t)
		var profiled chan error
		if i == 0 && *agentProfile != "" {
			profiled = make(chan error, 1)
			go func() {
				profiled <- framework.FetchProfile(ctx, nil, "http://"+metrics+"/debug/pprof/profile?seconds=5", *agentProfile)
			}()
		}
		// The management cluster's kube-apiserver, each way of the first row.
		kubeProfile := func(way string) (wait func()) {
			if i != 0 || *kubeProfilePrefix == "" {
				return func() {}
			}
			done := make(chan error, 1)
			go func() {
				done <- framework.FetchProfile(ctx, kubeProfileClient, mc.URL+"/debug/pprof/profile?seconds=4", *kubeProfilePrefix+"-"+way+".pprof")
			}()
			return func() {
				if err := <-done; err != nil {
					t.Errorf("kube-apiserver's CPU profile %s: %v", way, err)
				}
			}
		}
		kubeProfiled := kubeProfile("maestro")
		results[i].delivery = deliver(t, src, statuses, i, sc)
		kubeProfiled()
		if profiled != nil {
			if err := <-profiled; err != nil {
				t.Errorf("the agent's CPU profile: %v", err)
			}
		}
		between := meter.Read(t)
		kubeProfiled = kubeProfile("direct")
		results[i].direct = directApply(t, mc, sc)
		kubeProfiled()
		after := meter.Read(t)
		results[i].deliveryCPU = cpuPer(before, between, *bundles)
		results[i].directCPU = cpuPer(between, after, *bundles)
		results[i].raw = rawRoundTrips(t, broker, len(payload))
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nMaestro delivery of %d bundles per row: source -> broker -> maestro-agent (--workers=%d) -> server-side apply -> status back\n", *bundles, *workers)
	fmt.Fprintln(w, "bundle\tbytes\tdelivered/s\tp50\tp99\tdirect SSA/s\tratio\traw MQTT RT/s\tRT p50\tratio\t")
	for i, sc := range scenarios {
		r := results[i]
		fmt.Fprintf(w, "%s\t%d\t%.0f\t%v\t%v\t%.0f\t%.2f\t%.0f\t%v\t%.2f\t\n", sc.name, r.bundleBytes,
			r.delivery.perSecond(), round(r.delivery.percentile(50)), round(r.delivery.percentile(99)),
			r.direct.perSecond(), r.delivery.perSecond()/r.direct.perSecond(),
			r.raw.perSecond(), round(r.raw.percentile(50)), r.delivery.perSecond()/r.raw.perSecond())
		if r.delivery.perSecond() <= 0 || r.direct.perSecond() <= 0 || r.raw.perSecond() <= 0 {
			t.Errorf("%s: figures missing: %+v", sc.name, r)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("direct SSA: the same objects applied by one client with %d concurrent requests (the management cluster's limit);\n"+
		"raw MQTT RT: QoS 1 publish and echo of the same size through the same broker, %d in flight (the broker's limit).\n", *workers, *inFlight)

	// Where each way spends its CPU: what the agent's path adds to the management cluster, and what it costs itself.
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\nCPU ms per bundle\tway\t"+strings.Join(meter.Names, "\t")+"\ttotal\t")
	for i, sc := range scenarios {
		for _, way := range []struct {
			name string
			cpu  map[string]time.Duration
		}{{"through Maestro", results[i].deliveryCPU}, {"direct SSA", results[i].directCPU}} {
			fmt.Fprintf(w, "%s\t%s\t", sc.name, way.name)
			var total time.Duration
			for _, name := range meter.Names {
				fmt.Fprintf(w, "%.2f\t", ms(way.cpu[name]))
				total += way.cpu[name]
			}
			fmt.Fprintf(w, "%.2f\t\n", ms(total))
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// deliver hands every bundle to the source at once; the clock of each stops at its first status. The
// bundles are built before the clock starts, as directApply builds its objects: building a HostedCluster
// parses the example's YAML, which is no part of delivering it.
func deliver(t *testing.T, src *source.Source, statuses *firstStatuses, round int, sc scenario) result {
	t.Helper()
	ids := make([]string, *bundles)
	specs := make([]*protocol.ManifestBundle, *bundles)
	for i := range specs {
		ids[i] = fmt.Sprintf("bench-%d-%06d", round, i)
		specs[i] = sc.bundle(t, i)
	}
	applied := make([]time.Time, *bundles)
	start := time.Now()
	for i := range *bundles {
		applied[i] = time.Now()
		if err := src.Apply(consumer, ids[i], 1, specs[i]); err != nil {
			t.Fatal(err)
		}
	}
	back := statuses.wait(t, ids)
	r := result{count: *bundles}
	for i := range ids {
		r.latencies = append(r.latencies, back[i].Sub(applied[i]))
		r.elapsed = max(r.elapsed, back[i].Sub(start))
	}
	slices.Sort(r.latencies)
	return r
}

// directApply server-side applies the scenario's objects straight to the management cluster.
func directApply(t *testing.T, mc *framework.ManagementCluster, sc scenario) result {
	t.Helper()
	objects := make([]*unstructured.Unstructured, *bundles)
	for i := range objects {
		objects[i] = sc.object(t, i)
	}
	latencies := make([]time.Duration, *bundles)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range *workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < *bundles; i = int(next.Add(1) - 1) {
				began := time.Now()
				obj := objects[i]
				_, err := mc.Dynamic.Resource(sc.gvr).Namespace(obj.GetNamespace()).Apply(t.Context(), obj.GetName(), obj,
					metav1.ApplyOptions{FieldManager: "bench", Force: true})
				if err != nil {
					failed.Store(err)
					return
				}
				latencies[i] = time.Since(began)
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatalf("direct apply: %v", err)
	}
	r := result{count: *bundles, elapsed: time.Since(start), latencies: latencies}
	slices.Sort(r.latencies)
	return r
}

// firstStatuses records when the first status of each bundle came back.
type firstStatuses struct {
	mu      sync.Mutex
	at      map[string]time.Time
	changed chan struct{}
}

func (f *firstStatuses) record(st source.BundleStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.at[st.ResourceID]; !seen {
		f.at[st.ResourceID] = time.Now()
		if f.changed != nil {
			close(f.changed)
			f.changed = nil
		}
	}
}

// wait returns when each of ids came back.
func (f *firstStatuses) wait(t *testing.T, ids []string) []time.Time {
	t.Helper()
	deadline := time.After(10 * time.Minute)
	for {
		f.mu.Lock()
		back := make([]time.Time, 0, len(ids))
		for _, id := range ids {
			at, ok := f.at[id]
			if !ok {
				break
			}
			back = append(back, at)
		}
		if len(back) == len(ids) {
			f.mu.Unlock()
			return back
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("only %d of %d bundles reported back within 10 minutes", len(back), len(ids))
		}
	}
}

// rawRoundTrips sends *bundles messages of size bytes from a source-like client to an agent-like client
// that echoes each back, QoS 1 both ways, with *inFlight outstanding: the broker's own limit for what a
// bundle's delivery does on the wire (one event out, one back).
func rawRoundTrips(t *testing.T, broker *maestrotest.Broker, size int) result {
	t.Helper()
	ctx := t.Context()
	// A source of its own: the echoes are not events, and the benchmark's source, subscribed to its agents'
	// events, would read and refuse each of them (and log it) while the limit is measured.
	const rawSourceID = sourceID + "-raw"
	out, _ := protocol.SourceEventsTopic(rawSourceID, "raw-echo")
	back, _ := protocol.AgentEventsTopic(rawSourceID, "raw-echo")
	// The echoing side holds an agent certificate, the sending side the source's, as in delivery. A
	// handler runs on the client's reader, which also reads the PUBACK a QoS 1 publish waits for: the
	// echo goes out from another goroutine.
	echoClient, err := pahoClient(ctx, broker, broker.AgentTLS(t, rawSourceID, "raw-echo"), "raw-echo", out, func(p *paho.Publish, c *paho.Client) {
		go func() { _, _ = c.Publish(ctx, &paho.Publish{Topic: back, QoS: 1, Payload: p.Payload}) }()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer echoClient.Disconnect(&paho.Disconnect{})

	sent := make([]time.Time, *bundles)
	latencies := make([]time.Duration, *bundles)
	var received atomic.Int64
	done := make(chan struct{})
	slots := make(chan struct{}, *inFlight)
	sender, err := pahoClient(ctx, broker, broker.SourceTLS(t, rawSourceID), "raw-sender", back, func(p *paho.Publish, _ *paho.Client) {
		var i int
		fmt.Sscanf(string(p.Payload[:12]), "%012d", &i)
		latencies[i] = time.Since(sent[i])
		<-slots
		if received.Add(1) == int64(*bundles) {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Disconnect(&paho.Disconnect{})

	payload := make([]byte, size)
	for i := range payload {
		payload[i] = 'x'
	}
	start := time.Now()
	for i := range *bundles {
		slots <- struct{}{}
		msg := slices.Clone(payload)
		copy(msg, fmt.Sprintf("%012d", i))
		sent[i] = time.Now()
		if _, err := sender.Publish(ctx, &paho.Publish{Topic: out, QoS: 1, Payload: msg}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("only %d of %d raw round trips came back", received.Load(), *bundles)
	}
	r := result{count: *bundles, elapsed: time.Since(start), latencies: latencies}
	slices.Sort(r.latencies)
	return r
}

// pahoClient connects a bare MQTT v5 client with a subscription to filter whose messages go to onMessage.
func pahoClient(ctx context.Context, broker *maestrotest.Broker, cfg *tls.Config, clientID, filter string,
	onMessage func(*paho.Publish, *paho.Client)) (*paho.Client, error) {
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", strings.TrimPrefix(broker.URL, "mqtts://"))
	if err != nil {
		return nil, err
	}
	var c *paho.Client
	c = paho.NewClient(paho.ClientConfig{
		Conn: packets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(r paho.PublishReceived) (bool, error) {
			onMessage(r.Packet, c)
			return true, nil
		}},
	})
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: clientID, CleanStart: true, KeepAlive: 30}); err != nil {
		return nil, err
	}
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}}); err != nil {
		return nil, err
	}
	return c, nil
}

// hostedClusterBundle is a realistic cluster bundle: the ARO HCP-style HostedCluster with feedback rules.
func hostedClusterBundle(t *testing.T, ns, name string) *protocol.ManifestBundle {
	t.Helper()
	return &protocol.ManifestBundle{
		Manifests:    []json.RawMessage{mustJSON(t, hostedCluster(t, ns, name).Object)},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan},
		ManifestConfigs: []protocol.ManifestConfigOption{{
			ResourceIdentifier: protocol.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Name: name, Namespace: ns},
			FeedbackRules: []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{
				{Name: "available", Path: `.status.conditions[?(@.type=="Available")].status`},
				{Name: "version", Path: `.status.version.history[0].version`},
			}}},
		}},
	}
}

func hostedCluster(t *testing.T, ns, name string) *unstructured.Unstructured {
	hc := exampleHostedCluster(t)
	hc.SetNamespace(ns)
	hc.SetName(name)
	return hc
}

func configMapBundle(t *testing.T, ns, name string) *protocol.ManifestBundle {
	t.Helper()
	return &protocol.ManifestBundle{
		Manifests:    []json.RawMessage{mustJSON(t, configMap(ns, name).Object)},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan},
	}
}

func configMap(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     map[string]any{"config": strings.Repeat("x", 3000)},
	}}
}

func namespaceBundle(t *testing.T, ns string) *protocol.ManifestBundle {
	t.Helper()
	return &protocol.ManifestBundle{
		Manifests:    []json.RawMessage{mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan},
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func exampleHostedCluster(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return framework.HyperShiftExample(t, "aro-hcp-style-minimal-hostedcluster.yaml", "HostedCluster")
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d
}
