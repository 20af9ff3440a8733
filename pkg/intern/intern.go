// Package intern makes the objects the server decodes from etcd share what repeats between them: the
// strings of their conditions and managed fields, and the managed fields' documents.
//
// The watch cache holds every object as decoded, and decoding gives each object its own copy of every
// string. Most of what a cluster's conditions and managed fields say is said by every other cluster too
// (the same types, reasons and messages; the same manager, and the same set of fields it set), so at
// 100,000 clusters the cache held a hundred thousand copies of each: about a third of each object. Here
// equal strings become one (with the standard library's unique), and equal managed-fields documents one
// array.
//
// Nothing changes an object the storage decoded in place: the watch cache gives copies, and a request
// that changes an object decodes or copies it first. So sharing the arrays of its documents is as safe as
// the conversions between the API's versions, which share them too.
package intern

import (
	"reflect"
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Codec is codec with every object it decodes interned.
func Codec(codec runtime.Codec) runtime.Codec { return interningCodec{Codec: codec} }

type interningCodec struct{ runtime.Codec }

func (c interningCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil {
		Object(obj)
	}
	return obj, gvk, err
}

// Object makes obj's managed fields and conditions (the field Conditions of its Status) share their strings
// and documents with those of the objects interned before it, and trims their lists to their length
// (decoding grows them by doubling).
func Object(obj runtime.Object) {
	if withMeta, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if objectMeta := withMeta.GetObjectMeta(); objectMeta != nil {
			if managed := objectMeta.GetManagedFields(); len(managed) > 0 {
				objectMeta.SetManagedFields(managedFields(managed))
			}
		}
	}
	if conditions := conditionsOf(obj); conditions.IsValid() && conditions.Len() > 0 {
		conditions.Set(reflect.ValueOf(conditionList(conditions.Interface().([]metav1.Condition))))
	}
}

func managedFields(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	entries = trimmed(entries)
	for i := range entries {
		e := &entries[i]
		e.Manager, e.Operation, e.APIVersion = str(e.Manager), str(e.Operation), str(e.APIVersion)
		e.FieldsType, e.Subresource = str(e.FieldsType), str(e.Subresource)
		if e.FieldsV1 != nil {
			e.FieldsV1.Raw = fieldsDocuments.share(e.FieldsV1.Raw)
		}
	}
	return entries
}

func conditionList(conditions []metav1.Condition) []metav1.Condition {
	conditions = trimmed(conditions)
	for i := range conditions {
		c := &conditions[i]
		c.Type, c.Status, c.Reason, c.Message = str(c.Type), str(c.Status), str(c.Reason), str(c.Message)
	}
	return conditions
}

// str is s as the one string of its value that every interned object shares.
func str[S ~string](s S) S {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// trimmed is list with no room beyond its length: a copy, when decoding left some.
func trimmed[T any](list []T) []T {
	if cap(list) == len(list) {
		return list
	}
	return append(make([]T, 0, len(list)), list...)
}

// conditionsOf is the settable field Status.Conditions of obj, if it has one of type []metav1.Condition.
func conditionsOf(obj runtime.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	index, ok := conditionsIndex(v.Elem().Type())
	if !ok {
		return reflect.Value{}
	}
	return v.Elem().FieldByIndex(index)
}

var (
	conditionsType    = reflect.TypeFor[[]metav1.Condition]()
	conditionsIndexes sync.Map // reflect.Type → []int, nil when the type has no conditions
)

func conditionsIndex(t reflect.Type) ([]int, bool) {
	if cached, ok := conditionsIndexes.Load(t); ok {
		index := cached.([]int)
		return index, index != nil
	}
	var index []int
	if status, ok := t.FieldByName("Status"); ok && status.Type.Kind() == reflect.Struct {
		if conditions, ok := status.Type.FieldByName("Conditions"); ok && conditions.Type == conditionsType {
			index = append(append([]int{}, status.Index...), conditions.Index...)
		}
	}
	conditionsIndexes.Store(t, index)
	return index, index != nil
}

// documentsKept bounds how many distinct documents are kept for sharing: a fleet's objects are written
// by a handful of managers setting a handful of sets of fields, and past the bound (a few MB) the
// documents kept are dropped and sharing starts again from the next ones decoded.
const documentsKept = 4096

// fieldsDocuments are the managed fields' documents decoded recently, by content.
var fieldsDocuments = &documents{byContent: map[string][]byte{}}

type documents struct {
	mu        sync.Mutex
	byContent map[string][]byte
}

// share returns the document kept with raw's content, or keeps raw as that document.
func (d *documents) share(raw []byte) []byte {
	if len(raw) == 0 {
		return raw
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if kept, ok := d.byContent[string(raw)]; ok {
		return kept
	}
	if len(d.byContent) >= documentsKept {
		clear(d.byContent)
	}
	// No room past its end: something appending to one object's document makes a copy of its own.
	raw = raw[:len(raw):len(raw)]
	d.byContent[string(raw)] = raw
	return raw
}
