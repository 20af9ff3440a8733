// Command bench measures hcp-apiserver next to its limit, the etcd it stores in, in the same
// run: creates/s, gets/s and list latency of HCPClusters through the typed clientset on the
// in-process server, and raw etcd puts/s, gets/s and range latency with the same key and value
// sizes and the same concurrency; and PUTs/s of clusters through arm-shim beside creates/s on the API.
// It prints figures, it asserts nothing; see README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"

	"github.com/aro-hcp/hcp-apiserver/pkg/embeddedetcd"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// contentTypes are the wire formats -content-type accepts; storage is protobuf either way.
var contentTypes = map[string]string{
	"protobuf": k8sruntime.ContentTypeProtobuf,
	"json":     k8sruntime.ContentTypeJSON,
}

// options are the flags of the benchmark.
type options struct {
	objects     []int
	clients     int
	contentType string
	lists       int
	dataDir     string
	// armClusters is how many clusters the ARM row PUTs through arm-shim, and creates on the API; 0: no ARM row.
	armClusters int
	// armProfile, when not empty, is where the CPU profiles of the ARM row's PUTs go.
	armProfile string
}

func defaultOptions() options {
	return options{objects: []int{1000, 10000}, clients: 16, contentType: "protobuf", lists: 10, armClusters: 500}
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.Var((*intList)(&o.objects), "objects", "comma-separated numbers of HCPClusters to create, get and list, one round each")
	fs.IntVar(&o.clients, "clients", o.clients, "concurrent clients for creates, gets, raw puts and raw gets")
	fs.StringVar(&o.contentType, "content-type", o.contentType, "wire format of the typed clientset: protobuf or json")
	fs.IntVar(&o.lists, "lists", o.lists, "lists (and raw etcd ranges) per round, one after another")
	fs.IntVar(&o.armClusters, "arm-clusters", o.armClusters, "clusters PUT through arm-shim, and created on the API beside them, after the rounds (0: no ARM row)")
	fs.StringVar(&o.armProfile, "arm-cpu-profile", o.armProfile, "write CPU profiles of the first 5 s of the ARM row's measured PUTs: arm-shim's to FILE.shim, this process's (server, etcd, clients) to FILE.server; none when empty")
	fs.StringVar(&o.dataDir, "data-dir", o.dataDir, "folder for etcd's data and the server's certificates (default: a temporary folder, removed afterwards)")
}

func (o options) validate() error {
	if len(o.objects) == 0 || o.clients < 1 || o.lists < 1 || o.armClusters < 0 {
		return fmt.Errorf("need -objects, -clients and -lists of at least 1, and -arm-clusters of at least 0")
	}
	if _, ok := contentTypes[o.contentType]; !ok {
		return fmt.Errorf("-content-type must be protobuf or json, not %q", o.contentType)
	}
	return nil
}

func main() {
	o := defaultOptions()
	o.addFlags(flag.CommandLine)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// result is what run printed.
type result struct {
	rows []row
	// arm is nil without -arm-clusters.
	arm *armRow
}

// run starts one embedded etcd and the server on it, measures every round, then the ARM row with
// arm-shim in front of the server, and prints the tables to out; progress goes to progress.
func run(ctx context.Context, o options, out, progress io.Writer) (result, error) {
	var res result
	if err := o.validate(); err != nil {
		return res, err
	}
	if o.armClusters > 0 {
		// Compiled first, so that the build competes with nothing measured.
		if _, err := framework.Build("arm-shim"); err != nil {
			return res, err
		}
	}
	dataDir := o.dataDir
	if dataDir == "" {
		tmp, err := os.MkdirTemp("", "hcp-bench-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
		dataDir = tmp
	}

	// The server and the raw client talk to the same etcd, so the two sides differ only by the API server.
	etcd, err := embeddedetcd.Start(ctx, filepath.Join(dataDir, "etcd"))
	if err != nil {
		return res, err
	}
	defer etcd.Close()
	server, err := framework.StartInProcessServer(ctx, filepath.Join(dataDir, "server"),
		framework.InProcessOptions{Args: []string{"--etcd-servers=" + etcd.ClientURL}})
	if err != nil {
		return res, err
	}
	defer server.Stop()

	client, err := apiClient(server.Config, contentTypes[o.contentType])
	if err != nil {
		return res, err
	}
	raw, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		return res, err
	}
	defer raw.Close()

	b := &bench{api: client, etcd: raw, clients: o.clients, lists: o.lists, progress: progress}
	if err := b.warmUp(ctx); err != nil {
		return res, err
	}
	var sizes []string
	for _, n := range o.objects {
		r, err := b.round(ctx, n)
		if err != nil {
			return res, fmt.Errorf("round of %d objects: %w", n, err)
		}
		res.rows = append(res.rows, r.rows...)
		sizes = append(sizes, fmt.Sprintf("%d objects: key %d B, value %d B", n, r.keySize, r.valueSize))
	}
	printReport(out, o, sizes, res.rows)
	if o.armClusters == 0 {
		return res, nil
	}

	shim, err := startARMShim(ctx, filepath.Join(dataDir, "arm-shim"), server.Kubeconfig, o.clients, o.armProfile != "")
	if err != nil {
		return res, err
	}
	defer shim.stop()
	if err := shim.registerSubscription(ctx); err != nil {
		return res, err
	}
	// As the rounds' warm-up: connections, and the shim's and the server's first calls, are not measured.
	if _, err := b.armRound(ctx, shim, 2*o.clients); err != nil {
		return res, fmt.Errorf("ARM warm-up: %w", err)
	}
	b.armProfile = o.armProfile
	arm, err := b.armRound(ctx, shim, o.armClusters)
	if err != nil {
		return res, fmt.Errorf("ARM row: %w", err)
	}
	res.arm = &arm
	printARMReport(out, o, arm)
	return res, nil
}

// apiClient is a clientset in the given wire format with client-side rate limiting off,
// so that the figures are the server's and not client-go's default 5 QPS.
func apiClient(admin *rest.Config, contentType string) (versioned.Interface, error) {
	cfg := rest.CopyConfig(admin)
	cfg.ContentType = contentType
	cfg.AcceptContentTypes = contentType
	cfg.QPS = -1
	return versioned.NewForConfig(cfg)
}

// namespace returns a fresh namespace for a round, so that a reused -data-dir works too.
func namespace(n int) string { return fmt.Sprintf("bench-%d-%s", n, rand.String(5)) }

// clusterName returns the name of object i; every name has the same length, so every key does.
func clusterName(i int) string { return fmt.Sprintf("cluster-%06d", i) }

// intList is a flag.Value for "1000,10000".
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, n := range *l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// gomaxprocs is printed with the figures: on a small machine client, server and etcd share the cores.
func gomaxprocs() int { return runtime.GOMAXPROCS(0) }
