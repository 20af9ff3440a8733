package app

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/updateservice"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// VersionOptions say where the OpenShift releases the service offers come from: the compiled-in graph,
// a graph file, or the OpenShift update service, polled while the server runs; and when each minor
// reaches its end of life.
type VersionOptions struct {
	// CatalogFile is a Cincinnati graph that replaces the compiled-in version catalog.
	CatalogFile string
	// LifecycleFile gives each minor's end of life; the compiled-in one when empty.
	LifecycleFile string
	// UpdateServiceURL is the OpenShift update service polled for the graph; none when empty.
	UpdateServiceURL string
	// UpdateServiceChannels are the channels polled: <group>-<minor>. Empty: stable, fast and candidate
	// of every minor the life cycle names.
	UpdateServiceChannels []string
	// UpdateServiceInterval is how often the update service is polled.
	UpdateServiceInterval time.Duration
	// Arch is the architecture whose releases are offered.
	Arch string
}

// NewVersionOptions returns the defaults.
func NewVersionOptions() VersionOptions {
	return VersionOptions{UpdateServiceInterval: 5 * time.Minute, Arch: "amd64"}
}

// AddFlags adds the flags of the version catalog.
func (o *VersionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CatalogFile, "version-catalog", o.CatalogFile,
		"A Cincinnati-format graph of the OpenShift releases offered per channel group, in a file or at an http(s) URL; replaces the compiled-in catalog. Read at start. Use --update-service-url to follow an update service while the server runs.")
	fs.StringVar(&o.LifecycleFile, "version-lifecycle", o.LifecycleFile,
		`A JSON file of each minor's end of life, {"endOfLife": {"4.20": "2027-04-21T00:00:00Z"}}; the compiled-in one (Red Hat's life cycle policy for the compiled-in graph's minors) when empty. A minor past its end of life takes no new cluster or node pool.`)
	fs.StringVar(&o.UpdateServiceURL, "update-service-url", o.UpdateServiceURL,
		"The OpenShift update service (Cincinnati) whose graph the service offers, such as https://api.openshift.com; polled by the leading replica, its last good graph kept in etcd. Without it the compiled-in graph (or --version-catalog) serves.")
	fs.StringSliceVar(&o.UpdateServiceChannels, "update-service-channels", o.UpdateServiceChannels,
		"The update service's channels to poll, <group>-<minor> (stable-4.20). Default: stable, fast and candidate of every minor --version-lifecycle names.")
	fs.DurationVar(&o.UpdateServiceInterval, "update-service-interval", o.UpdateServiceInterval,
		"How often the update service is polled.")
	fs.StringVar(&o.Arch, "update-service-arch", o.Arch, "The architecture whose releases the update service is asked for.")
}

// Validate checks the flags.
func (o *VersionOptions) Validate() []error {
	var errs []error
	if o.UpdateServiceURL != "" && o.CatalogFile != "" {
		errs = append(errs, fmt.Errorf("--version-catalog and --update-service-url both say where the versions come from: give one"))
	}
	if o.UpdateServiceURL != "" && !strings.HasPrefix(o.UpdateServiceURL, "http://") && !strings.HasPrefix(o.UpdateServiceURL, "https://") {
		errs = append(errs, fmt.Errorf("--update-service-url %q: must be an http(s) URL", o.UpdateServiceURL))
	}
	if o.UpdateServiceInterval <= 0 {
		errs = append(errs, fmt.Errorf("--update-service-interval must be positive"))
	}
	for _, ch := range o.UpdateServiceChannels {
		if dash := strings.LastIndex(ch, "-"); dash <= 0 || dash == len(ch)-1 {
			errs = append(errs, fmt.Errorf("--update-service-channels: %q is not <group>-<minor>", ch))
		}
	}
	return errs
}

// lifecycle reads the life cycle the flags name.
func (o *VersionOptions) lifecycle() (*versioncatalog.Lifecycle, error) {
	if o.LifecycleFile == "" {
		return versioncatalog.DefaultLifecycle(), nil
	}
	return versioncatalog.LoadLifecycle(o.LifecycleFile)
}

// catalog returns the live catalog the server starts with: the compiled-in graph or the file's, with the
// life cycle. With an update service, what etcd keeps of it replaces that as soon as it is read.
func (o *VersionOptions) catalog(ctx context.Context, lifecycle *versioncatalog.Lifecycle) (*versioncatalog.Catalog, error) {
	initial := versioncatalog.Default()
	if o.CatalogFile != "" {
		var err error
		if initial, err = versioncatalog.Load(ctx, o.CatalogFile); err != nil {
			return nil, err
		}
	}
	return versioncatalog.NewLive(initial.WithLifecycleWhereKnown(lifecycle)), nil
}

// channels are the update service's channels polled.
func (o *VersionOptions) channels(lifecycle *versioncatalog.Lifecycle) []string {
	if len(o.UpdateServiceChannels) > 0 {
		return o.UpdateServiceChannels
	}
	var minors []string
	for m := range lifecycle.EndOfLife {
		minors = append(minors, m)
	}
	slices.Sort(minors)
	var out []string
	for _, group := range []string{"stable", "fast", "candidate"} {
		for _, m := range minors {
			out = append(out, group+"-"+m)
		}
	}
	return out
}

// updateServiceGraphKey is where etcd keeps the last good graph of the update service.
const updateServiceGraphKey = "/hcp-apiserver/update-service/graph"

// storedGraphWait is how long a starting server waits to read the stored graph before serving.
const storedGraphWait = 10 * time.Second

// followStoredGraph replaces catalog with the update service's graph that etcd keeps, at once and each
// time the leader stores a new one, until ctx ends; it closes read once it has read the key the first
// time. Every replica runs it: a graph changes as a whole, so every replica swaps it in one step from one
// key, and a restart serves the last good graph before the service answers again.
func (o *VersionOptions) followStoredGraph(ctx context.Context, client *clientv3.Client, catalog *versioncatalog.Catalog, lifecycle *versioncatalog.Lifecycle, read chan<- struct{}) {
	logger := klog.FromContext(ctx).WithValues("key", updateServiceGraphKey)
	apply := func(graph []byte) {
		next, err := versioncatalog.Parse(bytes.NewReader(graph))
		if err != nil {
			logger.Error(err, "The stored graph of the update service is not one; keeping the catalog")
			return
		}
		catalog.Replace(next.WithLifecycleWhereKnown(lifecycle))
		logger.V(2).Info("Serving the update service's graph", "versions", len(next.Groups()))
	}
	for backoff := time.Second; ctx.Err() == nil; backoff = min(2*backoff, time.Minute) {
		resp, err := client.Get(ctx, updateServiceGraphKey)
		if err != nil {
			logger.Error(err, "Cannot read the stored graph of the update service")
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			continue
		}
		if len(resp.Kvs) > 0 {
			apply(resp.Kvs[0].Value)
		}
		if read != nil {
			close(read)
			read = nil
		}
		for wr := range client.Watch(clientv3.WithRequireLeader(ctx), updateServiceGraphKey, clientv3.WithRev(resp.Header.Revision+1)) {
			if wr.Err() != nil {
				break
			}
			backoff = time.Second
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypePut {
					apply(ev.Kv.Value)
				}
			}
		}
	}
}

// pollUpdateService polls the update service and stores each new graph in etcd, where every replica's
// followStoredGraph picks it up; the leading replica runs it until ctx ends.
func (o *VersionOptions) pollUpdateService(ctx context.Context, client *clientv3.Client, lifecycle *versioncatalog.Lifecycle) error {
	updateservice.RegisterMetrics()
	poller, err := updateservice.NewPoller(updateservice.Options{
		URL: o.UpdateServiceURL, Arch: o.Arch, Channels: o.channels(lifecycle), Interval: o.UpdateServiceInterval,
		// A service that fails is asked again sooner than every interval, up to once an interval.
		Backoff: min(o.UpdateServiceInterval, 10*time.Second),
		Store:   updateservice.NewEtcdStore(client, updateServiceGraphKey),
		OnGraph: func(ctx context.Context, graph []byte) {
			klog.FromContext(ctx).Info("The update service's graph changed", "bytes", len(graph))
		},
	})
	if err != nil {
		return err
	}
	go poller.Run(ctx)
	return nil
}
