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
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	workers  = flag.Int("agent-workers", 8, "the agent's --workers")
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

func TestDeliveryBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a management cluster, a broker and an agent")
	}
	mc := framework.StartManagementCluster(t)
	broker := maestrotest.StartBroker(t)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()

	firstStatus := map[string]time.Time{}
	var mu sync.Mutex
	allBack := make(chan struct{})
	src, err := source.New(source.Options{Source: sourceID, Workers: 8,
		Broker: transport.Config{URL: broker.URL, TLS: broker.SourceTLS(t, sourceID)}})
	if err != nil {
		t.Fatal(err)
	}
	src.AddStatusHandler(func(st source.BundleStatus) {
		mu.Lock()
		defer mu.Unlock()
		if _, seen := firstStatus[st.ResourceID]; !seen && strings.HasPrefix(st.ResourceID, "bench-") {
			firstStatus[st.ResourceID] = time.Now()
			if len(firstStatus) == *bundles {
				close(allBack)
			}
		}
	})
	src.SetSynced()
	go func() { _ = src.Run(ctx) }()
	framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"),
		"--agent-bundle="+broker.AgentBundle(t, sourceID, consumer), "--kubeconfig="+mc.Kubeconfig,
		"--metrics-bind-address=0", fmt.Sprintf("--workers=%d", *workers))

	ns := "bench"
	warmUp := bundle(t, ns, "warm-up")
	// The namespace and one HostedCluster first, so that discovery and informers are warm.
	if err := src.Apply(consumer, "warm-up", 1, warmUp); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := src.Status("warm-up"); return ok }, "the warm-up bundle")

	payload, err := json.Marshal(bundle(t, ns, "hc-000000"))
	if err != nil {
		t.Fatal(err)
	}
	// Delivery: every bundle handed to the source at once; the clock of each stops at its first status.
	applied := make([]time.Time, *bundles)
	start := time.Now()
	for i := range *bundles {
		applied[i] = time.Now()
		if err := src.Apply(consumer, fmt.Sprintf("bench-%06d", i), 1, bundle(t, ns, fmt.Sprintf("hc-%06d", i))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-allBack:
	case <-time.After(10 * time.Minute):
		mu.Lock()
		t.Fatalf("only %d of %d bundles reported back within 10 minutes", len(firstStatus), *bundles)
	}
	delivery := result{count: *bundles}
	mu.Lock()
	for i := range *bundles {
		back := firstStatus[fmt.Sprintf("bench-%06d", i)]
		delivery.latencies = append(delivery.latencies, back.Sub(applied[i]))
		delivery.elapsed = max(delivery.elapsed, back.Sub(start))
	}
	mu.Unlock()
	slices.Sort(delivery.latencies)

	raw := rawRoundTrips(t, broker, len(payload))

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nMaestro delivery: %d bundles of %d bytes (Namespace-scoped HostedCluster with feedback rules), agent --workers=%d\n", *bundles, len(payload), *workers)
	fmt.Fprintln(w, "what\tper second\tp50\tp99\t")
	fmt.Fprintf(w, "bundle: publish -> applied -> first status\t%.0f\t%v\t%v\t\n", delivery.perSecond(), round(delivery.percentile(50)), round(delivery.percentile(99)))
	fmt.Fprintf(w, "raw MQTT QoS 1 round trip, same broker and size (%d in flight)\t%.0f\t%v\t%v\t\n", *inFlight, raw.perSecond(), round(raw.percentile(50)), round(raw.percentile(99)))
	fmt.Fprintf(w, "ratio bundle / raw\t%.2f\t\t\t\n", delivery.perSecond()/raw.perSecond())
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if delivery.perSecond() <= 0 || raw.perSecond() <= 0 {
		t.Errorf("figures missing: delivery %.1f/s, raw %.1f/s", delivery.perSecond(), raw.perSecond())
	}
}

// rawRoundTrips sends *bundles messages of size bytes from a source-like client to an agent-like client
// that echoes each back, QoS 1 both ways, with *inFlight outstanding: the broker's own limit for what a
// bundle's delivery does on the wire (one event out, one back).
func rawRoundTrips(t *testing.T, broker *maestrotest.Broker, size int) result {
	t.Helper()
	ctx := t.Context()
	out, _ := protocol.SourceEventsTopic(sourceID, "raw-echo")
	back, _ := protocol.AgentEventsTopic(sourceID, "raw-echo")
	// The echoing side holds an agent certificate, the sending side the source's, as in delivery. A
	// handler runs on the client's reader, which also reads the PUBACK a QoS 1 publish waits for: the
	// echo goes out from another goroutine.
	echoClient, err := pahoClient(ctx, broker, broker.AgentTLS(t, sourceID, "raw-echo"), "raw-echo", out, func(p *paho.Publish, c *paho.Client) {
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
	sender, err := pahoClient(ctx, broker, broker.SourceTLS(t, sourceID), "raw-sender", back, func(p *paho.Publish, _ *paho.Client) {
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

// bundle is a realistic cluster bundle: the ARO HCP-style HostedCluster with feedback rules.
func bundle(t *testing.T, ns, name string) *protocol.ManifestBundle {
	t.Helper()
	hc := exampleHostedCluster(t)
	hc.SetNamespace(ns)
	hc.SetName(name)
	nsManifest, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	hcManifest, err := json.Marshal(hc.Object)
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.ManifestBundle{
		Manifests:    []json.RawMessage{nsManifest, hcManifest},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan},
		ManifestConfigs: []protocol.ManifestConfigOption{
			{
				ResourceIdentifier: protocol.ResourceIdentifier{Resource: "namespaces", Name: ns},
				UpdateStrategy:     &protocol.UpdateStrategy{Type: protocol.UpdateStrategyCreateOnly},
			},
			{
				ResourceIdentifier: protocol.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Name: name, Namespace: ns},
				FeedbackRules: []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{
					{Name: "available", Path: `.status.conditions[?(@.type=="Available")].status`},
					{Name: "version", Path: `.status.version.history[0].version`},
				}}},
			},
		},
	}
}

var (
	exampleOnce sync.Once
	example     *unstructured.Unstructured
)

func exampleHostedCluster(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	exampleOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join(framework.SharedDir(t), "hypershift", "examples", "aro-hcp-style-minimal-hostedcluster.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := framework.DecodeObjects(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			if obj.GetKind() == "HostedCluster" {
				example = obj
			}
		}
	})
	if example == nil {
		t.Fatal("no HostedCluster in the example")
	}
	return example.DeepCopy()
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no status of %s within a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
