package listencoding

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// codecs are the server's codecs as NewDefaultAPIGroupInfo makes them: lists stream item by item.
func codecs(t *testing.T) serializer.CodecFactory {
	t.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	metav1.AddToGroupVersion(scheme, v1alpha1.SchemeGroupVersion)
	return serializer.NewCodecFactory(scheme, serializer.WithStreamingCollectionEncodingToJSON())
}

func jsonSerializer(t *testing.T, ns runtime.NegotiatedSerializer) runtime.Serializer {
	t.Helper()
	for _, info := range ns.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			return info.Serializer
		}
	}
	t.Fatal("no JSON serializer")
	return nil
}

func clusterList(n int) *v1alpha1.HCPClusterList {
	list := &v1alpha1.HCPClusterList{
		TypeMeta: metav1.TypeMeta{Kind: "HCPClusterList", APIVersion: v1alpha1.SchemeGroupVersion.String()},
		ListMeta: metav1.ListMeta{ResourceVersion: "900", Continue: "next"},
	}
	for i := range n {
		c := fixtures.HCPCluster("ns", fmt.Sprintf("c-%d", i))
		c.UID = types.UID(fmt.Sprintf("uid-%d", i))
		c.ResourceVersion = fmt.Sprint(100 + i)
		c.Labels = map[string]string{"tier": "<gold & silver>"} // escaped as encoding/json escapes HTML
		c.CreationTimestamp = metav1.NewTime(time.Date(2026, 12, 4, 1, 2, 3, 0, time.UTC))
		list.Items = append(list.Items, *c)
	}
	return list
}

func encode(t *testing.T, s runtime.Encoder, obj runtime.Object) string {
	t.Helper()
	var out bytes.Buffer
	if err := s.Encode(obj, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A list encoded through the cache is byte for byte what the server's JSON serializer writes, the first
// time and from the cache, and an object changed under a new resourceVersion is served as it is now.
func TestListsAreWhatTheJSONSerializerWrites(t *testing.T) {
	plain := jsonSerializer(t, codecs(t))
	cache := NewCache(1<<30, time.Hour)
	cached := jsonSerializer(t, NegotiatedSerializer(codecs(t), cache))

	list := clusterList(5)
	list.Items[3].UID = "" // an item that cannot be cached is encoded every time
	want := encode(t, plain, list)
	for round := range 2 {
		if got := encode(t, cached, list); got != want {
			t.Fatalf("round %d: got\n%s\nwant\n%s", round, got, want)
		}
	}
	if cache.Size() == 0 {
		t.Fatal("the cache holds nothing after two lists")
	}

	list.Items[1].Labels = map[string]string{"tier": "bronze"}
	list.Items[1].ResourceVersion = "777"
	want = encode(t, plain, list)
	if got := encode(t, cached, list); got != want {
		t.Fatalf("after a change: got\n%s\nwant\n%s", got, want)
	}

	// The same objects as metadata only are other items.
	partial := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1"},
	}
	for _, c := range list.Items {
		partial.Items = append(partial.Items, metav1.PartialObjectMetadata{ObjectMeta: c.ObjectMeta})
	}
	if got, want := encode(t, cached, partial), encode(t, plain, partial); got != want {
		t.Fatalf("metadata list: got\n%s\nwant\n%s", got, want)
	}

	// Lists with no items, and objects that are not lists, are written as the serializer writes them.
	for _, obj := range []runtime.Object{
		&v1alpha1.HCPClusterList{TypeMeta: list.TypeMeta},
		&v1alpha1.HCPClusterList{TypeMeta: list.TypeMeta, Items: []v1alpha1.HCPCluster{}},
		&list.Items[0],
	} {
		if got, want := encode(t, cached, obj), encode(t, plain, obj); got != want {
			t.Fatalf("%T: got\n%s\nwant\n%s", obj, got, want)
		}
	}
}

// compressedItemSize is what the cache holds for each item of list, on average.
func compressedItemSize(t *testing.T, list *v1alpha1.HCPClusterList) int64 {
	t.Helper()
	cache := NewCache(1<<30, time.Hour)
	encode(t, jsonSerializer(t, NegotiatedSerializer(codecs(t), cache)), list)
	return cache.Size() / int64(len(list.Items))
}

// The cache keeps what it holds compressed: the items of a list in a small part of their JSON.
func TestCacheHoldsItemsCompressed(t *testing.T) {
	plain := jsonSerializer(t, codecs(t))
	cache := NewCache(1<<30, time.Hour)
	cached := jsonSerializer(t, NegotiatedSerializer(codecs(t), cache))
	list := clusterList(200)
	want := encode(t, plain, list)
	for round := range 2 {
		if got := encode(t, cached, list); got != want {
			t.Fatalf("round %d: the list is not what the JSON serializer writes", round)
		}
	}
	var itemsJSON int
	for i := range list.Items {
		itemsJSON += len(encode(t, plain, &list.Items[i])) - 1 // the serializer ends an object with a newline
	}
	if held := cache.Size(); held == 0 || held*5 > int64(itemsJSON) {
		t.Fatalf("the cache holds %d bytes for %d bytes of items' JSON, want under a fifth", held, itemsJSON)
	}
}

// The cache holds no more than its budget, and a list larger than the budget is still whole.
func TestCacheKeepsToItsBudget(t *testing.T) {
	plain := jsonSerializer(t, codecs(t))
	list := clusterList(20)
	budget := 7 * compressedItemSize(t, list)
	cache := NewCache(budget, time.Hour)
	cached := jsonSerializer(t, NegotiatedSerializer(codecs(t), cache))
	want := encode(t, plain, list)
	for range 3 {
		if got := encode(t, cached, list); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
		if size := cache.Size(); size > budget || size == 0 {
			t.Fatalf("the cache holds %d bytes, budget %d", size, budget)
		}
	}
}

// The bytes the cache counts are the bytes it holds, however objects change and the budget presses.
func TestCacheCountsWhatItHolds(t *testing.T) {
	plain := jsonSerializer(t, codecs(t))
	list := clusterList(12)
	cache := NewCache(8*compressedItemSize(t, list), time.Hour)
	cached := jsonSerializer(t, NegotiatedSerializer(codecs(t), cache))
	for round := range 20 {
		for i := range list.Items {
			if (i+round)%3 == 0 {
				list.Items[i].ResourceVersion = fmt.Sprint(1000*round + i)
			}
		}
		if got, want := encode(t, cached, list), encode(t, plain, list); got != want {
			t.Fatalf("round %d: got\n%s\nwant\n%s", round, got, want)
		}
		var held int64
		for _, generation := range []map[itemKey]item{cache.current, cache.previous} {
			for _, it := range generation {
				held += int64(len(it.compressed))
			}
		}
		if size := cache.Size(); size != held || size > cache.budget {
			t.Fatalf("round %d: the cache counts %d bytes and holds %d, budget %d", round, size, held, cache.budget)
		}
	}
}

// An object stored again in a new version, when the budget makes the cache drop its older generation,
// leaves no copy behind that the cache does not count.
func TestNewVersionUnderPressureLeavesNoStaleCopy(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	cache := NewCache(1<<30, time.Minute)
	cache.now = func() time.Time { return now }
	typeMeta := &metav1.TypeMeta{}
	key := func(uid string) itemKey {
		return itemKey{list: reflect.TypeOf(&v1alpha1.HCPClusterList{}), uid: types.UID(uid)}
	}
	object := func(rv string) *metav1.ObjectMeta { return &metav1.ObjectMeta{ResourceVersion: rv} }
	var scratch []byte
	first := []byte(`{"kind":"Item","name":"first"}`)
	lookup := func(uid, rv string) (string, bool) {
		var out bytes.Buffer
		found := cache.lookup(key(uid), object(rv), typeMeta, &out)
		return out.String(), found
	}

	newVersion := `{"kind":"Item","name":"first","and":"what changed in the object's second version"}`
	// How much an item and the new version take: the dictionary is the first item's JSON in both caches.
	probe := NewCache(1<<30, time.Minute)
	probe.store(key("a"), object("1"), typeMeta, first, &scratch)
	itemSize := probe.Size()
	probe.store(key("x"), object("1"), typeMeta, []byte(newVersion), &scratch)
	newSize := probe.Size() - itemSize
	if newSize <= itemSize {
		t.Fatalf("the new version takes %d bytes, an item %d: the test needs it larger", newSize, itemSize)
	}
	// a, b and c fit; a's new version fits beside c but not beside b and c.
	cache.budget = max(3*itemSize, itemSize+newSize)

	cache.age() // the interval starts
	cache.store(key("a"), object("1"), typeMeta, first, &scratch)
	cache.store(key("b"), object("1"), typeMeta, first, &scratch)
	now = now.Add(time.Minute)
	cache.age() // a and b are the older generation now
	cache.store(key("c"), object("1"), typeMeta, first, &scratch)
	if got, ok := lookup("a", "1"); !ok || got != string(first) {
		t.Fatalf("a is %q, %v", got, ok)
	}
	if _, ok := lookup("a", "2"); ok {
		t.Fatal("a's old version serves its new one")
	}
	cache.store(key("a"), object("2"), typeMeta, []byte(newVersion), &scratch)

	var held int64
	for _, generation := range []map[itemKey]item{cache.current, cache.previous} {
		for _, it := range generation {
			held += int64(len(it.compressed))
		}
	}
	if size := cache.Size(); size != held || size > cache.budget {
		t.Fatalf("the cache counts %d bytes and holds %d, budget %d", size, held, cache.budget)
	}
	if _, ok := lookup("b", "1"); ok {
		t.Fatal("b, of the older generation, was kept over the budget")
	}
	if got, ok := lookup("a", "2"); !ok || got != newVersion {
		t.Fatalf("a's new version is %q, %v", got, ok)
	}
}

// What no list has read for two intervals is freed: deleted objects do not stay.
func TestUnreadItemsAreFreed(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	cache := NewCache(1<<30, time.Minute)
	cache.now = func() time.Time { return now }
	cached := jsonSerializer(t, NegotiatedSerializer(codecs(t), cache))
	encode(t, cached, clusterList(3))
	held := cache.Size()
	empty := &v1alpha1.HCPClusterList{TypeMeta: metav1.TypeMeta{Kind: "HCPClusterList", APIVersion: v1alpha1.SchemeGroupVersion.String()}}

	now = now.Add(time.Minute)
	encode(t, cached, empty)
	if got := cache.Size(); got != held {
		t.Fatalf("after one interval the cache holds %d bytes, want still %d", got, held)
	}
	now = now.Add(time.Minute)
	encode(t, cached, empty)
	if got := cache.Size(); got != 0 {
		t.Fatalf("after two unread intervals the cache holds %d bytes, want 0", got)
	}
}

// The server's metrics say what the cache holds: its bytes, the JSON they stand for, and its items.
func TestCacheIsReportedInMetrics(t *testing.T) {
	plain := jsonSerializer(t, codecs(t))
	cache := NewCache(1<<30, time.Hour)
	cache.RegisterMetrics()
	list := clusterList(20)
	encode(t, jsonSerializer(t, NegotiatedSerializer(codecs(t), cache)), list)
	var itemsJSON int
	for i := range list.Items {
		itemsJSON += len(encode(t, plain, &list.Items[i])) - 1 // the serializer ends an object with a newline
	}

	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, family := range families {
		if strings.HasPrefix(family.GetName(), "json_list_cache_") {
			got[family.GetName()] = family.GetMetric()[0].GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"json_list_cache_bytes":      float64(cache.Size()),
		"json_list_cache_json_bytes": float64(itemsJSON),
		"json_list_cache_items":      20,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
}
