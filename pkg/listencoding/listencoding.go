// Package listencoding serves lists of the API's objects as JSON with each item's encoding kept per object
// version. A list of 10,000 HCPClusters then encodes only the items that changed since they were last
// listed and copies the rest: reflection over every field of every object was most of a list's CPU, and
// the objects of a list change far more slowly than clients list them.
//
// The bytes are those the JSON serializer writes for the item (json.Marshal of the object as it is in
// the list), so a client cannot tell a cached item from a fresh one. An item is known by the list's type
// and the object's UID, and its bytes serve only while the object's resourceVersion, kind and apiVersion
// are the ones they were made from: a new version of an object is a new resourceVersion.
//
// The bytes are kept compressed (S2, with a dictionary per list type: the JSON of the first item of that
// type the cache kept). Items of one kind share their keys and many of their values, so each is kept in a
// small part of its JSON. Kept plain, the JSON of 100,000 clusters held about 430 MB of the server's heap for
// as long as lists read it, and the server's RSS grew by about as much; reading an item back costs well
// under a microsecond per kilobyte, where encoding it again costs tens.
package listencoding

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Cache holds the JSON of listed items, in two generations: an item found in the older one moves to the
// newer, and the older is dropped when the budget is reached or when it has gone unread for an interval.
// So the bytes of an object that is deleted, or no longer listed, are freed within two intervals, and the
// cache never holds more than its budget.
type Cache struct {
	budget   int64
	interval time.Duration
	now      func() time.Time

	mu                sync.Mutex
	current, previous map[itemKey]item
	bytes             int64 // held by both generations, compressed
	jsonBytes         int64 // what they hold, uncompressed
	rotated           time.Time
	// dictionaries are per list type, made once and never replaced: every item of the type is
	// compressed against the same one for as long as the server runs.
	dictionaries map[reflect.Type]*dictionary
}

type itemKey struct {
	list reflect.Type // the same object is a different item in a PartialObjectMetadataList
	uid  types.UID
}

type item struct {
	resourceVersion, apiVersion, kind string
	// compressed is the item's JSON, an S2 block against its list type's dictionary; size is the length
	// of the JSON.
	compressed []byte
	size       int
}

// dictionary compresses the items of one list type against the JSON of the first item of that type the
// cache kept. S2 (klauspost/compress, Snappy's successor) with a dictionary keeps an item in about a
// fifteenth of its JSON and gives it back in well under a microsecond per kilobyte: zstd with the same
// dictionary keeps a little less but takes five times as long to read, and an item is read at every list.
type dictionary = s2.Dict

// newDictionary returns nil when content is too short to be one (s2.MinDictSize).
func newDictionary(content []byte) *dictionary {
	return s2.MakeDict(bytes.Clone(content), nil)
}

// NewCache returns a cache that holds at most budget bytes (of compressed JSON) and frees what went unread
// for two intervals.
func NewCache(budget int64, interval time.Duration) *Cache {
	return &Cache{budget: budget, interval: interval, now: time.Now,
		current: map[itemKey]item{}, previous: map[itemKey]item{}, dictionaries: map[reflect.Type]*dictionary{}}
}

// Size is the bytes the cache holds: its items' JSON, compressed.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

var registerMetrics sync.Once

// RegisterMetrics reports the cache in the server's metrics: the bytes it holds, the JSON they stand for,
// and its items. A server has one cache; only the first registered is reported.
func (c *Cache) RegisterMetrics() {
	registerMetrics.Do(func() {
		gauge := func(name, help string, value func() int64) metrics.GaugeFunc {
			return metrics.NewGaugeFunc(&metrics.GaugeOpts{Subsystem: "json_list_cache", Name: name, Help: help,
				StabilityLevel: metrics.ALPHA}, func() float64 { return float64(value()) })
		}
		legacyregistry.RawMustRegister(
			gauge("bytes", "Bytes the cache of listed objects' JSON holds, compressed.", c.Size),
			gauge("json_bytes", "Bytes of JSON the cache of listed objects' JSON holds, uncompressed.", func() int64 {
				c.mu.Lock()
				defer c.mu.Unlock()
				return c.jsonBytes
			}),
			gauge("items", "Object versions the cache of listed objects' JSON holds.", func() int64 {
				c.mu.Lock()
				defer c.mu.Unlock()
				return int64(len(c.current) + len(c.previous))
			}))
	})
}

// lookup appends the item's JSON to out if it was made from this version of the object.
func (c *Cache) lookup(key itemKey, obj metav1.Object, typeMeta *metav1.TypeMeta, out *bytes.Buffer) bool {
	c.mu.Lock()
	it, ok := c.current[key]
	if !ok {
		if it, ok = c.previous[key]; ok {
			delete(c.previous, key)
			c.current[key] = it
		}
	}
	dict := c.dictionaries[key.list]
	c.mu.Unlock()
	if !ok || dict == nil || it.resourceVersion != obj.GetResourceVersion() || it.apiVersion != typeMeta.APIVersion || it.kind != typeMeta.Kind {
		return false
	}
	out.Grow(it.size) // so the JSON is decompressed in place
	decoded, err := dict.Decode(out.AvailableBuffer(), it.compressed)
	if err != nil || len(decoded) != it.size {
		return false // cannot happen to a block the cache made; encoding the object again is right anyway
	}
	out.Write(decoded)
	return true
}

// store keeps the item's JSON, unless that would take the cache over its budget even after it dropped
// its older generation. scratch is memory the compression may use; what it grows to is left in it.
func (c *Cache) store(key itemKey, obj metav1.Object, typeMeta *metav1.TypeMeta, encoded []byte, scratch *[]byte) {
	c.mu.Lock()
	dict := c.dictionaries[key.list]
	c.mu.Unlock()
	if dict == nil {
		made := newDictionary(encoded)
		if made == nil {
			return // an item of a few bytes; the next item tries again
		}
		c.mu.Lock()
		if dict = c.dictionaries[key.list]; dict == nil {
			dict = made
			c.dictionaries[key.list] = made
		}
		c.mu.Unlock()
	}
	*scratch = dict.Encode((*scratch)[:cap(*scratch)], encoded)
	compressed := bytes.Clone(*scratch)
	size := int64(len(compressed))

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, generation := range []map[itemKey]item{c.current, c.previous} {
		if old, ok := generation[key]; ok {
			c.bytes -= int64(len(old.compressed))
			c.jsonBytes -= int64(old.size)
			delete(generation, key)
		}
	}
	if c.bytes+size > c.budget {
		c.dropPrevious()
	}
	if c.bytes+size > c.budget {
		delete(c.current, key)
		return
	}
	c.current[key] = item{resourceVersion: obj.GetResourceVersion(), apiVersion: typeMeta.APIVersion, kind: typeMeta.Kind,
		compressed: compressed, size: len(encoded)}
	c.bytes += size
	c.jsonBytes += int64(len(encoded))
}

// age drops the older generation once an interval has passed since the last time it did.
func (c *Cache) age() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); now.Sub(c.rotated) >= c.interval {
		c.dropPrevious()
		c.rotated = now
	}
}

func (c *Cache) dropPrevious() {
	for _, it := range c.previous {
		c.bytes -= int64(len(it.compressed))
		c.jsonBytes -= int64(it.size)
	}
	c.previous, c.current = c.current, map[itemKey]item{}
}

// cachingSerializer is the JSON serializer with lists encoded through the cache.
type cachingSerializer struct {
	runtime.Serializer
	cache *Cache
}

func (s cachingSerializer) Identifier() runtime.Identifier {
	return runtime.Identifier("listencoding(" + string(s.Serializer.Identifier()) + ")")
}

// Encode writes a list of objects as the JSON serializer's streaming encoder does, item by item, with
// each item's bytes from the cache where they are current; anything else goes to the JSON serializer.
func (s cachingSerializer) Encode(obj runtime.Object, w io.Writer) error {
	typeMeta, isTyped := obj.GetObjectKind().(*metav1.TypeMeta)
	if !isTyped || !meta.IsListType(obj) {
		return s.Serializer.Encode(obj, w)
	}
	accessor, hasListMeta := obj.(metav1.ListMetaAccessor)
	if !hasListMeta {
		return s.Serializer.Encode(obj, w)
	}
	list, isListMeta := accessor.GetListMeta().(*metav1.ListMeta)
	items, err := meta.ExtractList(obj)
	if err != nil || !isListMeta {
		return s.Serializer.Encode(obj, w)
	}
	s.cache.age()

	var out bytes.Buffer
	out.WriteByte('{')
	if typeMeta.Kind != "" {
		writeField(&out, "kind", typeMeta.Kind)
	}
	if typeMeta.APIVersion != "" {
		writeField(&out, "apiVersion", typeMeta.APIVersion)
	}
	if err := writeValue(&out, "metadata", list); err != nil {
		return err
	}
	if items == nil {
		out.WriteString(`"items":null}` + "\n")
		_, err := w.Write(out.Bytes())
		return err
	}
	out.WriteString(`"items":[`)
	writer := itemWriter{cache: s.cache, listType: reflect.TypeOf(obj), out: &out, encoder: json.NewEncoder(&out)}
	for i, it := range items {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := writer.write(it); err != nil {
			return err
		}
		// Write as it goes, as the streaming encoder does, so that a large list is never held twice.
		if out.Len() >= flushAt {
			if _, err := w.Write(out.Bytes()); err != nil {
				return err
			}
			out.Reset()
		}
	}
	out.WriteString("]}\n")
	_, err = w.Write(out.Bytes())
	return err
}

// flushAt is how much JSON is gathered before it is written: one write per item would cost a call down
// the whole response writer chain each.
const flushAt = 64 << 10

// itemWriter writes the items of one list to out.
type itemWriter struct {
	cache    *Cache
	listType reflect.Type
	out      *bytes.Buffer
	// encoder writes to out what json.Marshal returns, and a newline.
	encoder *json.Encoder
	scratch []byte
}

// write appends obj's JSON to out, from the cache where it is current, and keeps it there where it was not.
func (w *itemWriter) write(obj runtime.Object) error {
	object, hasMeta := obj.(metav1.Object)
	typeMeta, hasType := obj.GetObjectKind().(*metav1.TypeMeta)
	cacheable := hasMeta && hasType && object.GetUID() != "" && object.GetResourceVersion() != ""
	key := itemKey{list: w.listType}
	if cacheable {
		key.uid = object.GetUID()
		if w.cache.lookup(key, object, typeMeta, w.out) {
			return nil
		}
	}
	start := w.out.Len()
	if err := w.encoder.Encode(obj); err != nil {
		return err
	}
	w.out.Truncate(w.out.Len() - 1) // the newline
	if cacheable {
		w.cache.store(key, object, typeMeta, w.out.Bytes()[start:], &w.scratch)
	}
	return nil
}

func writeField(out *bytes.Buffer, name, value string) {
	_ = writeValue(out, name, value) // a string always encodes
}

func writeValue(out *bytes.Buffer, name string, value any) error {
	encoded, err := json.Marshal(value)
	if err != nil {
		return err
	}
	out.WriteByte('"')
	out.WriteString(name)
	out.WriteString(`":`)
	out.Write(encoded)
	out.WriteByte(',')
	return nil
}

// NegotiatedSerializer is serializers with their JSON one (not the pretty one, nor YAML or protobuf)
// encoding lists through cache.
func NegotiatedSerializer(serializers runtime.NegotiatedSerializer, cache *Cache) runtime.NegotiatedSerializer {
	infos := append([]runtime.SerializerInfo(nil), serializers.SupportedMediaTypes()...)
	for i := range infos {
		if infos[i].MediaType == runtime.ContentTypeJSON {
			infos[i].Serializer = cachingSerializer{Serializer: infos[i].Serializer, cache: cache}
		}
	}
	return negotiated{NegotiatedSerializer: serializers, infos: infos}
}

type negotiated struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (n negotiated) SupportedMediaTypes() []runtime.SerializerInfo { return n.infos }
