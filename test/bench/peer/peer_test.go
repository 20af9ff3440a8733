// Package peer measures hcp-apiserver against its peer: the same HCPCluster served as a CRD by
// kube-apiserver, with the schema hcp-apiserver serves. Both run as processes on their own etcd, and the
// same dynamic JSON client does the same creates, gets and lists on each, so the CPU time of each server
// and its etcd, read from /proc, is the cost of the same work. It prints figures and asserts none.
//
//	go test -count=1 -timeout 30m -run TestCRDPeerBenchmark -v ./test/bench/peer -args -objects 3000
package peer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
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
	objects = flag.Int("objects", 300, "HCPClusters created, got and listed on each side")
	clients = flag.Int("clients", 16, "concurrent clients for creates and gets")
	lists   = flag.Int("lists", 5, "lists of all the objects on each side, one after another")
)

var hcpClusters = schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: "v1alpha1", Resource: "hcpclusters"}

// side is one server under measure: how to reach it, and the processes whose CPU and memory count.
type side struct {
	name         string
	config       *rest.Config
	server, etcd *framework.Process
}

// result is what one side did with the same work.
type result struct {
	creates, gets time.Duration
	list          time.Duration // mean of the raw lists
	cpu           time.Duration // server and etcd, over creates, gets and lists
	rss           int64         // server and etcd, after the lists
}

func TestCRDPeerBenchmark(t *testing.T) {
	kube := framework.StartKubeAPIServer(t)
	kube.InstallCRD(t, hcpClusterCRD(t, v1alpha1.GroupName))
	etcd := framework.StartEtcd(t)
	hcp := framework.StartHCPAPIServerProcess(t, t.TempDir(), "--etcd-servers="+strings.Join(etcd.ClientURLs, ","))
	hcpConfig, err := clientcmd.BuildConfigFromFlags("", hcp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sides := []side{
		{name: "CRD on kube-apiserver", config: kube.Config, server: kube.APIServer, etcd: kube.Etcd.Members[0]},
		{name: "hcp-apiserver", config: hcpConfig, server: hcp.Process, etcd: etcd.Members[0]},
	}
	results := make([]result, len(sides))
	for i, s := range sides {
		results[i] = measure(t, s)
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\n%d HCPClusters, %d clients, dynamic JSON client; CPU and RSS of the server and its etcd\n", *objects, *clients)
	fmt.Fprintln(w, "side\tcreates/s\tgets/s\traw list\tCPU s\tRSS MiB\t")
	for i, s := range sides {
		r := results[i]
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%v\t%.2f\t%d\t\n", s.name, perSecond(r.creates), perSecond(r.gets),
			r.list.Round(time.Millisecond), r.cpu.Seconds(), r.rss>>20)
	}
	peer, ours := results[0], results[1]
	fmt.Fprintf(w, "hcp-apiserver / peer\tx%.2f\tx%.2f\tx%.2f faster\tx%.2f\tx%.2f\t\n",
		perSecond(ours.creates)/perSecond(peer.creates), perSecond(ours.gets)/perSecond(peer.gets),
		peer.list.Seconds()/ours.list.Seconds(), ours.cpu.Seconds()/peer.cpu.Seconds(), float64(ours.rss)/float64(peer.rss))
	w.Flush()
}

func perSecond(d time.Duration) float64 { return float64(*objects) / d.Seconds() }

// measure creates, gets and lists the objects on one side, and reads what that cost its processes.
func measure(t *testing.T, s side) result {
	t.Helper()
	ctx := t.Context()
	cfg := rest.CopyConfig(s.config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the servers are measured
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clusters := client.Resource(hcpClusters).Namespace("default")
	before := cpu(t, s)

	var r result
	r.creates = parallel(t, func(i int) error {
		obj, err := clusterObject(i)
		if err == nil {
			_, err = clusters.Create(ctx, obj, metav1.CreateOptions{})
		}
		return err
	})
	r.gets = parallel(t, func(i int) error {
		_, err := clusters.Get(ctx, name(i), metav1.GetOptions{})
		return err
	})
	// A raw list: the server's work alone, with no decoding by the client.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	listURL := strings.TrimSuffix(cfg.Host, "/") + "/apis/" + v1alpha1.GroupName + "/v1alpha1/namespaces/default/hcpclusters"
	var listed time.Duration
	for range *lists {
		start := time.Now()
		body, err := rawGet(ctx, httpClient, listURL)
		if err != nil {
			t.Fatalf("%s: listing: %v", s.name, err)
		}
		listed += time.Since(start)
		if n := strings.Count(string(body), `"uid":`); n != *objects { // one per object: items of a typed list carry no kind
			t.Fatalf("%s: a list returned %d HCPClusters, want %d", s.name, n, *objects)
		}
	}
	r.list = listed / time.Duration(*lists)
	r.cpu = cpu(t, s) - before
	for _, p := range []*framework.Process{s.server, s.etcd} {
		rss, err := framework.ProcessRSS(p.PID())
		if err != nil {
			t.Fatal(err)
		}
		r.rss += rss
	}
	return r
}

// parallel calls call for 0..objects-1 from clients goroutines and returns how long they all took.
func parallel(t *testing.T, call func(i int) error) time.Duration {
	t.Helper()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < *objects; i = int(next.Add(1)) - 1 {
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

// cpu is the CPU time the side's server and etcd have used so far.
func cpu(t *testing.T, s side) time.Duration {
	t.Helper()
	var used time.Duration
	for _, p := range []*framework.Process{s.server, s.etcd} {
		d, err := framework.ProcessCPU(p.PID())
		if err != nil {
			t.Fatal(err)
		}
		used += d
	}
	return used
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
