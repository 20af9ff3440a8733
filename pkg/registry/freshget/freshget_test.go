package freshget_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3/metrics"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/freshget"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

// newStorage returns the HCPClusters' watch cache over a real etcd, decorated as the server decorates it,
// and the key of the cluster ns/name in it.
func newStorage(t *testing.T) (storage.Interface, string) {
	opts, client := registrytest.NewRESTOptionsAndClient(t, "hcpclusters")
	opts.StorageConfig.EventsHistoryWindow = storagebackend.DefaultEventsHistoryWindow
	prefix := "/" + opts.ResourcePrefix
	keyFunc := func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc(prefix+"/", obj) }
	decorate := freshget.Decorator(genericregistry.StorageWithCacher(), client)
	s, destroy, err := decorate(opts.StorageConfig, prefix, keyFunc,
		func() runtime.Object { return &hcp.HCPCluster{} }, func() runtime.Object { return &hcp.HCPClusterList{} },
		storage.DefaultNamespaceScopedAttr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	return s, prefix + "/ns/dev"
}

func cluster(generation string) *hcp.HCPCluster {
	return &hcp.HCPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev", Labels: map[string]string{"generation": generation}}}
}

func get(t *testing.T, s storage.Interface, key string) *hcp.HCPCluster {
	t.Helper()
	out := &hcp.HCPCluster{}
	if err := s.Get(t.Context(), key, storage.GetOptions{}, out); err != nil {
		t.Fatalf("GET: %v", err)
	}
	return out
}

// Every GET sees the write made just before it, whether the watch cache has seen that write yet or not.
func TestGetSeesTheWriteBeforeIt(t *testing.T) {
	s, key := newStorage(t)
	if err := s.Create(t.Context(), key, cluster("0"), nil, 0); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		generation := strconv.Itoa(i)
		err := s.GuaranteedUpdate(t.Context(), key, &hcp.HCPCluster{}, false, nil,
			func(input runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				updated := input.(*hcp.HCPCluster).DeepCopy()
				updated.Labels = map[string]string{"generation": generation}
				return updated, nil, nil
			}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := get(t, s, key).Labels["generation"]; got != generation {
			t.Fatalf("GET after write %d answered generation %q", i, got)
		}
	}
}

// A GET right after a delete is a NotFound, though the watch cache may still hold the object; with
// IgnoreNotFound it is the empty object.
func TestGetAfterDeleteFindsNothing(t *testing.T) {
	s, key := newStorage(t)
	for i := 0; i < 50; i++ {
		if err := s.Create(t.Context(), key, cluster(strconv.Itoa(i)), nil, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(t.Context(), key, &hcp.HCPCluster{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err := s.Get(t.Context(), key, storage.GetOptions{}, &hcp.HCPCluster{})
		if !storage.IsNotFound(err) {
			t.Fatalf("GET after delete %d: %v, want NotFound", i, err)
		}
		out := cluster("left over")
		if err := s.Get(t.Context(), key, storage.GetOptions{IgnoreNotFound: true}, out); err != nil || out.Name != "" || out.Labels != nil {
			t.Fatalf("GET with IgnoreNotFound after delete %d: %v, %+v, want the empty object", i, err, out.ObjectMeta)
		}
	}
}

// Once the watch cache holds the object as etcd does, a GET reads only the key's revision from etcd, not
// its value too: one read of etcd where the etcd3 store makes two (the revision, then the value) when the
// cache is behind. The answer is the caller's own: changing it changes nothing the next GET answers.
func TestCurrentCacheAnswersGets(t *testing.T) {
	metrics.Register()
	s, key := newStorage(t)
	if err := s.Create(t.Context(), key, cluster("1"), nil, 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		// Until it is ready, the cache sends its reads to etcd.
		cached := &hcp.HCPCluster{}
		if s.ReadinessCheck() == nil && s.Get(ctx, key, storage.GetOptions{ResourceVersion: "0", IgnoreNotFound: true}, cached) == nil && cached.Name == "dev" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the watch cache was not ready with the object within 30 s")
		case <-time.After(10 * time.Millisecond):
		}
	}
	before := etcdGets(t)
	first := get(t, s, key)
	if reads := etcdGets(t) - before; reads != 1 {
		t.Errorf("a GET of an object the watch cache holds as etcd does read etcd %v times, want once (its revision)", reads)
	}
	if first.Labels["generation"] != "1" || first.ResourceVersion == "" {
		t.Errorf("GET answered %+v", first.ObjectMeta)
	}
	first.Labels["generation"] = "changed by the caller"
	if second := get(t, s, key); second.Labels["generation"] != "1" {
		t.Errorf("after the caller changed its answer, the next GET answered generation %q", second.Labels["generation"])
	}
}

// etcdGets is how many reads of HCPClusters the server counted (etcd_requests_total).
func etcdGets(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "etcd_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["operation"] == "get" && labels["resource"] == "hcpclusters" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// staleCache stands for a watch cache that holds the cluster at revision cached, whatever etcd holds; a
// read it must send to etcd answers etcd's copy, told by its label.
type staleCache struct {
	storage.Interface
	cached    string
	etcdReads int
}

func (c *staleCache) Get(_ context.Context, _ string, opts storage.GetOptions, out runtime.Object) error {
	answer := cluster("cache")
	answer.ResourceVersion = c.cached
	if opts.ResourceVersion == "" {
		c.etcdReads++
		answer = cluster("etcd")
	}
	*out.(*hcp.HCPCluster) = *answer
	return nil
}

// Which copy a GET answers, by what etcd holds now and what the cache holds: etcd's when the cache holds
// another revision, the cache's when it holds etcd's, nothing when etcd holds nothing.
func TestGetAnswersTheCacheOnlyAtEtcdsRevision(t *testing.T) {
	opts, client := registrytest.NewRESTOptionsAndClient(t, "hcpclusters")
	prefix := "/" + opts.ResourcePrefix
	keys := claims.NewStorage(opts.StorageConfig, prefix)
	key := prefix + "/ns/dev"
	etcdKey, err := keys.Key(key)
	if err != nil {
		t.Fatal(err)
	}
	gr := opts.StorageConfig.GroupResource

	cache := &staleCache{cached: "5"}
	s := freshget.New(cache, client, keys, gr)
	if err := s.Get(t.Context(), key, storage.GetOptions{}, &hcp.HCPCluster{}); !storage.IsNotFound(err) {
		t.Errorf("GET of a key etcd does not hold, which the cache does: %v, want NotFound", err)
	}
	out := cluster("left over")
	if err := s.Get(t.Context(), key, storage.GetOptions{IgnoreNotFound: true}, out); err != nil || out.Name != "" {
		t.Errorf("GET with IgnoreNotFound of a key etcd does not hold: %v, %+v, want the empty object", err, out.ObjectMeta)
	}

	put, err := client.Put(t.Context(), etcdKey, "a value the cache stands for")
	if err != nil {
		t.Fatal(err)
	}
	revision := strconv.FormatInt(put.Header.Revision, 10)
	for _, c := range []struct {
		cached, want string
		etcdReads    int
	}{
		{cached: revision, want: "cache"},
		{cached: strconv.FormatInt(put.Header.Revision-1, 10), want: "etcd", etcdReads: 1},
		{cached: strconv.FormatInt(put.Header.Revision+1, 10), want: "etcd", etcdReads: 1},
		{cached: "", want: "etcd", etcdReads: 1},
	} {
		cache := &staleCache{cached: c.cached}
		s := freshget.New(cache, client, keys, gr)
		out := &hcp.HCPCluster{}
		if err := s.Get(t.Context(), key, storage.GetOptions{}, out); err != nil || out.Labels["generation"] != c.want || cache.etcdReads != c.etcdReads {
			t.Errorf("etcd at revision %s, the cache at %q: %v, answered %q after %d reads of etcd's copy, want %q after %d",
				revision, c.cached, err, out.Labels["generation"], cache.etcdReads, c.want, c.etcdReads)
		}
	}
	// A GET at a resourceVersion is the cache's to answer.
	out = &hcp.HCPCluster{}
	if err := s.Get(t.Context(), key, storage.GetOptions{ResourceVersion: "7"}, out); err != nil || out.Labels["generation"] != "cache" {
		t.Errorf("GET at resourceVersion 7: %v, answered %q, want the cache's", err, out.Labels["generation"])
	}
}
