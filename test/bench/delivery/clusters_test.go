package delivery

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

var clusterCounts = flag.String("clusters", "20", "comma-separated numbers of HCPClusters to bring up, one round each")

// TestClusterBenchmark measures the whole path: HCPClusters created through the API of the hcp-apiserver
// binary, placed, rendered, delivered by the maestro-agent binary to a management cluster where the
// HyperShift simulator answers at once, and reported back until each is Succeeded.
func TestClusterBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a management cluster, the server and an agent")
	}
	mc := framework.StartManagementCluster(t)
	kcm := mc.StartControllerManager(t)
	hypershiftsim.StartForTest(t, mc.Config, hypershiftsim.Options{})
	dataDir := t.TempDir()
	// The server's etcd runs apart from it here, so that what each costs can be told apart.
	etcd := framework.StartEtcd(t)
	server := framework.StartHCPAPIServerProcess(t, dataDir, "--etcd-servers="+strings.Join(etcd.ClientURLs, ","))
	bundle := filepath.Join(t.TempDir(), "mc-bench.agent.yaml")
	out, err := exec.CommandContext(t.Context(), framework.Command(t, "hcp-apiserver"), "agent-bundle",
		"--data-dir", dataDir, "--consumer", "mc-bench", "--output", bundle).CombinedOutput()
	if err != nil {
		t.Fatalf("agent-bundle: %v\n%s", err, out)
	}
	agent := framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"),
		"--agent-bundle="+bundle, "--kubeconfig="+mc.Kubeconfig, "--metrics-bind-address=0")
	meter := framework.NewCPUMeter()
	meter.Add("hcp-apiserver", server.PID())
	meter.Add("its etcd", etcd.Members[0].PID())
	meter.Add("maestro-agent", agent.PID())
	meter.Add("mgmt kube-apiserver", mc.APIServer.PID())
	meter.Add("mgmt etcd", mc.Etcd.Members[0].PID())
	meter.Add("mgmt kube-controller-manager", kcm.PID())
	meter.Add("test (simulator, clients)", os.Getpid())

	cfg, err := clientcmd.BuildConfigFromFlags("", server.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target := fixtures.ManagementCluster("mc-bench")
	target.Spec.Capacity = 10000
	if _, err := client.HcpV1alpha1().ManagementClusters().Create(t.Context(), target, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	type row struct {
		n         int
		perSecond float64
		p50, p99  time.Duration
		// cpu is the CPU time each process used in the round, per cluster.
		cpu map[string]time.Duration
		// requests are the management cluster's requests in the round, per cluster, by verb and resource;
		// serverRequests are hcp-apiserver's.
		requests, serverRequests map[string]float64
	}
	var rows []row
	for i, field := range strings.Split(*clusterCounts, ",") {
		var n int
		if _, err := fmt.Sscan(field, &n); err != nil || n < 1 {
			t.Fatalf("-clusters %q: want positive numbers", *clusterCounts)
		}
		mcMetrics, serverMetrics := mc.Kube.CoreV1().RESTClient(), client.HcpV1alpha1().RESTClient()
		requestsBefore, serverRequestsBefore := apiserverRequests(t, mcMetrics), apiserverRequests(t, serverMetrics)
		before := meter.Read(t)
		r := clustersRound(t, client, fmt.Sprintf("round-%d", i), n)
		after := meter.Read(t)
		requests := perCluster(requestsBefore, apiserverRequests(t, mcMetrics), n)
		serverRequests := perCluster(serverRequestsBefore, apiserverRequests(t, serverMetrics), n)
		rows = append(rows, row{n, float64(n) / r.elapsed.Seconds(), r.percentile(50), r.percentile(99), cpuPer(before, after, n), requests, serverRequests})
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\nHCPClusters from create to Succeeded (server, agent, management cluster and simulator on one machine, simulator answering at once)")
	fmt.Fprintln(w, "clusters\tSucceeded/s\tp50\tp99\tCPU ms per cluster, all processes\t")
	for _, r := range rows {
		var total time.Duration
		for _, d := range r.cpu {
			total += d
		}
		fmt.Fprintf(w, "%d\t%.1f\t%v\t%v\t%.1f\t\n", r.n, r.perSecond, round(r.p50), round(r.p99), ms(total))
	}
	fmt.Fprintln(w, "\nCPU ms per cluster, by process")
	fmt.Fprint(w, "clusters\t")
	for _, name := range meter.Names {
		fmt.Fprintf(w, "%s\t", name)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t", r.n)
		for _, name := range meter.Names {
			fmt.Fprintf(w, "%.1f\t", ms(r.cpu[name]))
		}
		fmt.Fprintln(w)
	}
	for _, server := range []struct {
		name     string
		requests func(row) map[string]float64
	}{{"Management cluster", func(r row) map[string]float64 { return r.requests }}, {"hcp-apiserver", func(r row) map[string]float64 { return r.serverRequests }}} {
		fmt.Fprintf(w, "\n%s requests per cluster (apiserver_request_total; watches counted as they start)\n", server.name)
		for _, r := range rows {
			requests := server.requests(r)
			keys := slices.Sorted(maps.Keys(requests))
			slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(requests[b], requests[a]) })
			fmt.Fprintf(w, "%d clusters: ", r.n)
			for _, k := range keys {
				fmt.Fprintf(w, "%s %.2f, ", k, requests[k])
			}
			fmt.Fprintln(w)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// perCluster is what a counter grew by in a round of n clusters, per cluster; counters that grew by less
// than one in twenty clusters are left out.
func perCluster(before, after map[string]float64, n int) map[string]float64 {
	per := map[string]float64{}
	for k, v := range after {
		if d := (v - before[k]) / float64(n); d >= 0.05 {
			per[k] = d
		}
	}
	return per
}

// apiserverRequests reads an API server's request counters through one of its REST clients, summed by verb
// and resource.
func apiserverRequests(t *testing.T, server rest.Interface) map[string]float64 {
	t.Helper()
	raw, err := server.Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the metrics of %s: %v", server.Get().AbsPath("/metrics").URL(), err)
	}
	counts := map[string]float64{}
	for _, metric := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range metric.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		resource := labels["resource"]
		if labels["subresource"] != "" {
			resource += "/" + labels["subresource"]
		}
		counts[labels["verb"]+" "+resource] += metric.GetCounter().GetValue()
	}
	return counts
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// clustersRound creates n clusters in namespace ns from 16 clients and waits, on a watch read while they
// are created (a watch left unread is closed by the server), until every one is Succeeded.
func clustersRound(t *testing.T, client versioned.Interface, ns string, n int) result {
	t.Helper()
	ctx := t.Context()
	clusters := client.HcpV1alpha1().HCPClusters(ns)
	w, err := clusters.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created := make([]time.Time, n)
	var mu sync.Mutex
	index := map[string]int{}
	succeeded := make([]time.Duration, n)
	done := map[string]bool{}
	var last time.Time
	allDone := make(chan struct{})
	watchEnded := make(chan struct{})
	go func() {
		defer close(watchEnded)
		for ev := range w.ResultChan() {
			c, isCluster := ev.Object.(*v1alpha1.HCPCluster)
			if ev.Type != watch.Modified || !isCluster || c.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded {
				continue
			}
			now := time.Now()
			mu.Lock()
			i, known := index[c.Name]
			if known && !done[c.Name] {
				done[c.Name], succeeded[i], last = true, now.Sub(created[i]), now
				if len(done) == n {
					close(allDone)
				}
			}
			mu.Unlock()
		}
	}()

	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				name := fmt.Sprintf("b%05d", i)
				c := fixtures.HCPCluster(ns, name)
				c.Spec.DNS.BaseDomainPrefix = name
				mu.Lock()
				index[name], created[i] = i, time.Now()
				mu.Unlock()
				if _, err := clusters.Create(ctx, c, metav1.CreateOptions{}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatalf("create: %v", err)
	}
	select {
	case <-allDone:
	case <-watchEnded:
		t.Fatal("the watch ended")
	case <-time.After(15 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("only %d of %d clusters Succeeded within 15 minutes", len(done), n)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(succeeded)
	return result{count: n, elapsed: last.Sub(start), latencies: succeeded}
}
