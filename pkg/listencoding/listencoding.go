// Package listencoding serves lists of the API's objects as JSON with each item's encoding kept per object
// version. A list of 10,000 HCPClusters then encodes only the items that changed since they were last
// listed and copies the rest: reflection over every field of every object was most of a list's CPU, and
// the objects of a list change far more slowly than clients list them.
//
// The bytes are those the JSON serializer writes for the item (json.Marshal of the object as it is in
// the list), so a client cannot tell a cached item from a fresh one. An item is known by the list's type
// and the object's UID, and its bytes serve only while the object's resourceVersion, kind and apiVersion
// are the ones they were made from: a new version of an object is a new resourceVersion.
package listencoding

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
	bytes             int64 // held by both generations
	rotated           time.Time
}

type itemKey struct {
	list reflect.Type // the same object is a different item in a PartialObjectMetadataList
	uid  types.UID
}

type item struct {
	resourceVersion, apiVersion, kind string
	json                              []byte
}

// NewCache returns a cache that holds at most budget bytes of JSON and frees what went unread for two
// intervals.
func NewCache(budget int64, interval time.Duration) *Cache {
	return &Cache{budget: budget, interval: interval, now: time.Now,
		current: map[itemKey]item{}, previous: map[itemKey]item{}}
}

// Size is the bytes of JSON the cache holds.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// lookup returns the item's JSON if it was made from this version of the object.
func (c *Cache) lookup(key itemKey, obj metav1.Object, typeMeta *metav1.TypeMeta) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.current[key]
	if !ok {
		if it, ok = c.previous[key]; ok {
			delete(c.previous, key)
			c.current[key] = it
		}
	}
	if !ok || it.resourceVersion != obj.GetResourceVersion() || it.apiVersion != typeMeta.APIVersion || it.kind != typeMeta.Kind {
		return nil, false
	}
	return it.json, true
}

// store keeps the item's JSON, unless that would take the cache over its budget even after it dropped
// its older generation.
func (c *Cache) store(key itemKey, obj metav1.Object, typeMeta *metav1.TypeMeta, encoded []byte) {
	size := int64(len(encoded))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, generation := range []map[itemKey]item{c.current, c.previous} {
		if old, ok := generation[key]; ok {
			c.bytes -= int64(len(old.json))
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
	c.current[key] = item{resourceVersion: obj.GetResourceVersion(), apiVersion: typeMeta.APIVersion, kind: typeMeta.Kind, json: encoded}
	c.bytes += size
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
		c.bytes -= int64(len(it.json))
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
	listType := reflect.TypeOf(obj)

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
	for i, it := range items {
		if i > 0 {
			out.WriteByte(',')
		}
		encoded, err := s.encodeItem(listType, it)
		if err != nil {
			return err
		}
		out.Write(encoded)
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

func (s cachingSerializer) encodeItem(listType reflect.Type, obj runtime.Object) ([]byte, error) {
	object, hasMeta := obj.(metav1.Object)
	typeMeta, hasType := obj.GetObjectKind().(*metav1.TypeMeta)
	if !hasMeta || !hasType || object.GetUID() == "" || object.GetResourceVersion() == "" {
		return json.Marshal(obj)
	}
	key := itemKey{list: listType, uid: object.GetUID()}
	if encoded, ok := s.cache.lookup(key, object, typeMeta); ok {
		return encoded, nil
	}
	encoded, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	s.cache.store(key, object, typeMeta, encoded)
	return encoded, nil
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
