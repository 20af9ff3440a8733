// Package peer measures hcp-apiserver against its peer: the same HCPCluster served as a CRD by
// kube-apiserver, with the schema hcp-apiserver serves. Both run as processes on their own etcd, and the
// same dynamic JSON client does the same creates, gets and lists on each, so the CPU time of each server
// and its etcd, read from /proc, is the cost of the same work. It prints figures and asserts none.
//
// Rounds of growing object counts show how each side scales, and -plot draws that:
//
//	go test -count=1 -timeout 30m -run TestCRDPeerBenchmark -v ./test/bench/peer -args -objects 3000
//	go test -count=1 -timeout 90m -run TestCRDPeerBenchmark -v ./test/bench/peer -args -objects 1000,10000,100000 -plot ../peer-growth.svg
package peer

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

var (
	objects  = flag.String("objects", "300", "comma-separated HCPCluster counts, one round each: a round adds objects on each side up to its count, gets the new ones and lists them all")
	clients  = flag.Int("clients", 16, "concurrent clients for creates and gets")
	lists    = flag.Int("lists", 5, "lists of all the objects on each side per round, one after another")
	plotFile = flag.String("plot", "", "a file (.svg, .png) to draw creates/s, list latency and RSS against the object count into; none when empty")
	profile  = flag.String("profile", "", "in the last round, take hcp-apiserver's CPU profiles of the creates and gets (PREFIX-create.pprof, 20 s from the first create) and of the lists (PREFIX-list.pprof, 10 s from the first list), and its heap after the lists (PREFIX-heap.pprof); none when empty")
)

var hcpClusters = schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: "v1alpha1", Resource: "hcpclusters"}

// side is one server under measure: how to reach it, and the processes whose CPU and memory count.
type side struct {
	name         string
	config       *rest.Config
	server, etcd *framework.Process
	// etcdURL is the etcd member's client URL, whose /metrics say its revision.
	etcdURL string
	// profiled sides serve /debug/pprof to the benchmark's client and are profiled with -profile.
	profiled bool
}

// result is what one side did in one round.
type result struct {
	objects       int           // objects held after the round
	created       int           // objects created, and got, in the round
	creates, gets time.Duration // how long the creates and the gets took
	list          time.Duration // mean of the raw lists
	firstList     time.Duration // the first of them, before anything the server keeps between lists
	cpu           time.Duration // server and etcd, from the round's first create until both were idle again
	etcdCPU       time.Duration // etcd's part of cpu
	rss           int64         // server and etcd, after the lists
	etcdRSS       int64         // etcd's part of rss
	// The server's peak RSS so far, read after its gets and after its lists: what a round's lists add to
	// the memory the server needs, apart from what stays resident after them.
	peakBeforeLists, peakAfterLists int64
	// writes are the etcd write transactions of the round (its revisions), creates and what followed.
	writes int64
	// CPU per create while the creates ran, of the server, its etcd, and the benchmark's own process (the
	// client): the three share the machine's cores, so creates/s follow their sum, not the server's alone.
	createCPU struct{ server, etcd, client time.Duration }
}

// writesPerCreate are the round's etcd write transactions per object created.
func (r result) writesPerCreate() float64 { return float64(r.writes) / float64(r.created) }

func (r result) createsPerSecond() float64 { return float64(r.created) / r.creates.Seconds() }
func (r result) getsPerSecond() float64    { return float64(r.created) / r.gets.Seconds() }

func TestCRDPeerBenchmark(t *testing.T) {
	counts, err := parseCounts(*objects)
	if err != nil {
		t.Fatalf("-objects: %v", err)
	}
	kube := framework.StartKubeAPIServer(t)
	kube.InstallCRD(t, hcpClusterCRD(t, v1alpha1.GroupName))
	etcd := framework.StartEtcd(t)
	hcp := framework.StartHCPAPIServerProcess(t, t.TempDir(), "--etcd-servers="+strings.Join(etcd.ClientURLs, ","))
	hcpConfig, err := clientcmd.BuildConfigFromFlags("", hcp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sides := []side{
		{name: "CRD on kube-apiserver", config: kube.Config, server: kube.APIServer, etcd: kube.Etcd.Members[0], etcdURL: kube.Etcd.ClientURLs[0]},
		{name: "hcp-apiserver", config: hcpConfig, server: hcp.Process, etcd: etcd.Members[0], etcdURL: etcd.ClientURLs[0], profiled: true},
	}
	// results[i][j]: side i in round j. The sides take turns within a round, so that both meet the
	// machine in the same state, and each keeps its objects from one round to the next.
	results := make([][]result, len(sides))
	held := 0
	for j, n := range counts {
		for i, s := range sides {
			profilePrefix := ""
			if s.profiled && j == len(counts)-1 {
				profilePrefix = *profile
			}
			r := measure(t, s, held, n, profilePrefix)
			results[i] = append(results[i], r)
			t.Logf("%s: %d objects, %.0f creates/s, %.0f gets/s, list %v, CPU %.2f s, RSS %d MiB (of it etcd %d MiB; the server's peak %d MiB before its lists, %d after), %.2f etcd writes per create; CPU per create while creating: server %v, etcd %v, client %v", s.name, n,
				r.createsPerSecond(), r.getsPerSecond(), r.list.Round(time.Millisecond), r.cpu.Seconds(), r.rss>>20, r.etcdRSS>>20,
				r.peakBeforeLists>>20, r.peakAfterLists>>20, r.writesPerCreate(),
				r.createCPU.server.Round(time.Microsecond), r.createCPU.etcd.Round(time.Microsecond), r.createCPU.client.Round(time.Microsecond))
		}
		held = n
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nHCPClusters, %d clients, dynamic JSON client; CPU (the round's creates, gets, lists and what followed) and RSS of the server and its etcd\n", *clients)
	fmt.Fprintln(w, "objects\tside\tcreates/s\tgets/s\traw list\t(first)\tCPU s\t(of it etcd)\tRSS MiB\tetcd writes/create\t")
	for j := range counts {
		for i, s := range sides {
			r := results[i][j]
			fmt.Fprintf(w, "%d\t%s\t%.0f\t%.0f\t%v\t%v\t%.2f\t%.2f\t%d\t%.2f\t\n", r.objects, s.name, r.createsPerSecond(), r.getsPerSecond(),
				r.list.Round(time.Millisecond), r.firstList.Round(time.Millisecond), r.cpu.Seconds(), r.etcdCPU.Seconds(), r.rss>>20, r.writesPerCreate())
		}
		peer, ours := results[0][j], results[1][j]
		fmt.Fprintf(w, "%d\thcp-apiserver / peer\tx%.2f\tx%.2f\tx%.2f faster\tx%.2f faster\tx%.2f\tx%.2f\tx%.2f\tx%.2f\t\n", ours.objects,
			ours.createsPerSecond()/peer.createsPerSecond(), ours.getsPerSecond()/peer.getsPerSecond(),
			peer.list.Seconds()/ours.list.Seconds(), peer.firstList.Seconds()/ours.firstList.Seconds(), ours.cpu.Seconds()/peer.cpu.Seconds(), ours.etcdCPU.Seconds()/peer.etcdCPU.Seconds(),
			float64(ours.rss)/float64(peer.rss), ours.writesPerCreate()/peer.writesPerCreate())
	}
	w.Flush()

	// creates/s follow the CPU a create costs the machine: the server's, its etcd's and the client's.
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\nCPU ms per create while the creates ran: the server, its etcd and the benchmark's client share the cores")
	fmt.Fprintln(w, "objects\tside\tserver\tetcd\tclient\tall\t")
	for j := range counts {
		var all [2]time.Duration
		for i, s := range sides {
			c := results[i][j].createCPU
			all[i] = c.server + c.etcd + c.client
			fmt.Fprintf(w, "%d\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n", results[i][j].objects, s.name, ms(c.server), ms(c.etcd), ms(c.client), ms(all[i]))
		}
		peer, ours := results[0][j].createCPU, results[1][j].createCPU
		fmt.Fprintf(w, "%d\thcp-apiserver / peer\tx%.2f\tx%.2f\tx%.2f\tx%.2f\t\n", results[1][j].objects,
			ms(ours.server)/ms(peer.server), ms(ours.etcd)/ms(peer.etcd), ms(ours.client)/ms(peer.client), ms(all[1])/ms(all[0]))
	}
	w.Flush()

	if *plotFile != "" {
		names := make([]string, len(sides))
		for i, s := range sides {
			names[i] = s.name
		}
		if err := drawGrowth(*plotFile, names, results); err != nil {
			t.Fatalf("drawing %s: %v", *plotFile, err)
		}
		fmt.Printf("\ndrawn into %s\n", *plotFile)
	}
}

// parseCounts reads -objects: positive counts, each larger than the one before.
func parseCounts(s string) ([]int, error) {
	var counts []int
	for _, field := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number of objects", field)
		}
		if len(counts) > 0 && n <= counts[len(counts)-1] {
			return nil, fmt.Errorf("%d after %d: each round must add objects", n, counts[len(counts)-1])
		}
		counts = append(counts, n)
	}
	return counts, nil
}

// measure brings one side from held objects to n: it creates the new ones, gets each of them, lists all
// of them raw, and reads what that cost its processes. With a profilePrefix it also profiles the server.
func measure(t *testing.T, s side, held, n int, profilePrefix string) result {
	t.Helper()
	ctx := t.Context()
	cfg := rest.CopyConfig(s.config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the servers are measured
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clusters := client.Resource(hcpClusters).Namespace("default")
	before, etcdBefore := cpu(t, s)
	revisionBefore := etcdRevision(t, s.etcdURL)

	r := result{objects: n, created: n - held}
	// httpClient speaks to the server as the benchmark's client, for raw lists and profiles.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(cfg.Host, "/")
	profiling := func(name string, seconds int) (wait func()) {
		if profilePrefix == "" {
			return func() {}
		}
		done := make(chan error, 1)
		go func() {
			done <- framework.FetchProfile(ctx, httpClient, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, seconds), profilePrefix+"-"+name+".pprof")
		}()
		return func() {
			if err := <-done; err != nil {
				t.Errorf("%s: profile of the %s: %v", s.name, name, err)
			}
		}
	}
	createProfile := profiling("create", 20)
	createsFrom := cpuWithClient(t, s)
	r.creates = parallel(t, held, n, func(i int) error {
		obj, err := clusterObject(i)
		if err == nil {
			_, err = clusters.Create(ctx, obj, metav1.CreateOptions{})
		}
		return err
	})
	createsTo := cpuWithClient(t, s)
	perCreate := func(name string) time.Duration {
		return (createsTo[name] - createsFrom[name]) / time.Duration(r.created)
	}
	r.createCPU.server, r.createCPU.etcd, r.createCPU.client = perCreate("server"), perCreate("etcd"), perCreate("client")
	r.gets = parallel(t, held, n, func(i int) error {
		_, err := clusters.Get(ctx, name(i), metav1.GetOptions{})
		return err
	})
	createProfile()
	r.peakBeforeLists = peakRSS(t, s.server)
	// A raw list: the server's work alone, with no decoding by the client.
	listURL := base + "/apis/" + v1alpha1.GroupName + "/v1alpha1/namespaces/default/hcpclusters"
	listProfile := profiling("list", 10)
	var listed time.Duration
	for range *lists {
		start := time.Now()
		body, err := rawGet(ctx, httpClient, listURL)
		if err != nil {
			t.Fatalf("%s: listing: %v", s.name, err)
		}
		took := time.Since(start)
		if listed == 0 {
			r.firstList = took
		}
		listed += took
		if got := bytes.Count(body, []byte(`"uid":`)); got != n { // one per object: items of a typed list carry no kind
			t.Fatalf("%s: a list returned %d HCPClusters, want %d", s.name, got, n)
		}
	}
	r.list = listed / time.Duration(*lists)
	r.peakAfterLists = peakRSS(t, s.server)
	listProfile()
	if profilePrefix != "" {
		if err := framework.FetchProfile(ctx, httpClient, base+"/debug/pprof/heap", profilePrefix+"-heap.pprof"); err != nil {
			t.Errorf("%s: heap profile: %v", s.name, err)
		}
	}
	// What the creates set off (the controllers' writes, compaction) belongs to the round too.
	waitIdle(t, s)
	after, etcdAfter := cpu(t, s)
	r.cpu, r.etcdCPU = after-before, etcdAfter-etcdBefore
	r.writes = etcdRevision(t, s.etcdURL) - revisionBefore
	for _, p := range []*framework.Process{s.server, s.etcd} {
		rss, err := framework.ProcessRSS(p.PID())
		if err != nil {
			t.Fatal(err)
		}
		r.rss += rss
		if p == s.etcd {
			r.etcdRSS = rss
		}
	}
	return r
}

// peakRSS is the most memory p has held so far.
func peakRSS(t *testing.T, p *framework.Process) int64 {
	t.Helper()
	peak, err := framework.ProcessPeakRSS(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	return peak
}

// idle is the CPU share below which a side counts as done with its work: an idle server still ticks, and
// ticks more the more it holds. kube-apiserver holding 100,000 of these CRDs, and its etcd, use 7 to 10 %
// of a core when nothing asks anything of them; under 5 %, the peer never counted as idle at 100,000 and
// its round took in five minutes of that.
const idle = 0.10

// waitIdle waits until the side's server and etcd have used under idle of a core for two seconds.
func waitIdle(t *testing.T, s side) {
	t.Helper()
	const window = 2 * time.Second
	deadline := time.Now().Add(5 * time.Minute)
	for last, _ := cpu(t, s); ; {
		time.Sleep(window)
		now, _ := cpu(t, s)
		if float64(now-last) < idle*float64(window) {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("%s: still busy (%.0f%% of a core) five minutes after its round; its CPU so far counts", s.name, 100*float64(now-last)/float64(window))
			return
		}
		last = now
	}
}

// parallel calls call for from..to-1 from clients goroutines and returns how long they all took.
func parallel(t *testing.T, from, to int, call func(i int) error) time.Duration {
	t.Helper()
	var next atomic.Int64
	next.Store(int64(from))
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < to; i = int(next.Add(1)) - 1 {
				if err := call(i); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// cpuWithClient is the CPU time the side's server, its etcd and this process (the client) have used so far.
func cpuWithClient(t *testing.T, s side) map[string]time.Duration {
	t.Helper()
	meter := framework.NewCPUMeter()
	meter.Add("server", s.server.PID())
	meter.Add("etcd", s.etcd.PID())
	meter.Add("client", os.Getpid())
	return meter.Read(t)
}

// cpu is the CPU time the side's server and etcd have used so far, and etcd's part of it, from one reading.
func cpu(t *testing.T, s side) (all, etcd time.Duration) {
	t.Helper()
	used := cpuWithClient(t, s)
	return used["server"] + used["etcd"], used["etcd"]
}

// etcdRevision is the etcd member's current revision, from its metrics: every write transaction, however
// many keys it writes, moves it on by one.
func etcdRevision(t *testing.T, clientURL string) int64 {
	t.Helper()
	body, err := rawGet(t.Context(), http.DefaultClient, strings.TrimSuffix(clientURL, "/")+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if value, ok := strings.CutPrefix(line, "etcd_debugging_mvcc_current_revision "); ok {
			revision, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				t.Fatalf("etcd's revision %q: %v", value, err)
			}
			return int64(revision)
		}
	}
	t.Fatalf("etcd at %s reports no etcd_debugging_mvcc_current_revision", clientURL)
	return 0
}

func name(i int) string { return fmt.Sprintf("cluster-%06d", i) }

// clusterObject is the i-th HCPCluster, each with infrastructure of its own, as an unstructured object.
func clusterObject(i int) (*unstructured.Unstructured, error) {
	c := fixtures.HCPCluster("default", name(i))
	c.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "HCPCluster"}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// rawGet reads a URL as JSON, uncompressed, as curl does by default.
func rawGet(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, body)
	}
	return body, err
}
