package claims

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3/metrics"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/client-go/tools/cache"
)

// A create's claims are written in the create's own etcd transaction when its store is decorated with
// WithClaimsInCreate: the common case, a new object whose values nobody holds, then costs one transaction
// as it would without claims. The create carries them to the storage in its context (InCreate, Defer);
// when any is held already the transaction changes nothing and the create fails with ErrClaimed, for the
// caller to claim each value the slow way (Take), which decides on the holders found, and create again.
// The same transaction writes the objects of other resources a create brings along (WriteWith), such as
// the ARM operation that follows a cluster's create, and is written only while the objects it was checked
// against are as they were (Require), such as the ARM subscription whose state allowed the create.

// ErrClaimed says a create with claims wrote nothing because one of its values was claimed already.
var ErrClaimed = errors.New("a value the object claims is claimed already")

// ErrCompanionExists says a create wrote nothing because an object it brings along exists already.
var ErrCompanionExists = errors.New("an object written with the create exists already")

type deferredKey struct{}

// deferred is what a create writes with its object.
type deferred struct {
	// claims: the create's claims may be written with it (Defer); else the caller takes them itself.
	claims bool
	keys   []string
	value  []byte

	companions []Companion
	unchanged  []Unchanged
}

// Companion is an object of another resource that a create writes in its own transaction, where no
// object is: its etcd key, and its value as its own resource's store writes it (Storage.Encode).
type Companion struct {
	Key   string
	Value []byte
}

// Unchanged is an object of another resource that a create was checked against: the create is written
// only while the object is still at Revision (its resourceVersion), and fails with Changed otherwise.
type Unchanged struct {
	Key      string
	Revision int64
	Changed  error
}

// InCreate returns ctx for a create whose store is decorated with WithClaimsInCreate: it writes the
// companions WriteWith gives it and, when withClaims, the claims Defer gives it, in the object's
// transaction.
func InCreate(ctx context.Context, withClaims bool) context.Context {
	return context.WithValue(ctx, deferredKey{}, &deferred{claims: withClaims})
}

// Defer has the create of ctx write the claims keys for holder with its object, and reports whether it
// will: false when ctx is not of such a create, and the caller takes them itself.
func (s *Store) Defer(ctx context.Context, keys []string, holder Holder) (bool, error) {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok || !d.claims {
		return false, nil
	}
	holder.Since = s.now()
	value, err := json.Marshal(holder)
	if err != nil {
		return false, err
	}
	d.keys, d.value = keys, value
	return true, nil
}

// WriteWith has the create of ctx write c with its object, and reports whether it will: false when ctx
// is not of a create whose store does that (InCreate).
func WriteWith(ctx context.Context, c Companion) bool {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok {
		return false
	}
	d.companions = append(d.companions, c)
	return true
}

// Require has the create of ctx write its object only while u is unchanged, and reports whether it will:
// false when ctx is not of a create whose store does that (InCreate).
func Require(ctx context.Context, u Unchanged) bool {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok {
		return false
	}
	d.unchanged = append(d.unchanged, u)
	return true
}

// Storage is how a resource's store writes its objects in etcd, for writing them beside it.
type Storage struct {
	pathPrefix     string
	resourcePrefix string
	codec          runtime.Codec
	transformer    value.Transformer
}

// NewStorage returns how the store of config and resourcePrefix (its generic.RESTOptions) writes.
func NewStorage(config *storagebackend.ConfigForResource, resourcePrefix string) Storage {
	pathPrefix := path.Join("/", config.Prefix)
	if !strings.HasSuffix(pathPrefix, "/") {
		pathPrefix += "/"
	}
	transformer := config.Transformer
	if transformer == nil {
		transformer = identity.NewEncryptCheckTransformer() // as the etcd3 store's factory defaults it
	}
	return Storage{pathPrefix: pathPrefix, resourcePrefix: resourcePrefix, codec: config.Codec, transformer: transformer}
}

// Key is the etcd key of the store's key (its KeyFunc's answer).
func (s Storage) Key(key string) (string, error) {
	prepared, err := storage.PrepareKey(s.resourcePrefix, key, false)
	if err != nil {
		return "", err
	}
	return s.pathPrefix + strings.TrimPrefix(prepared, "/"), nil
}

// ClusterScopedKey is the etcd key of the object name of a cluster-scoped resource, as the generic store
// keys it (NoNamespaceKeyFunc).
func (s Storage) ClusterScopedKey(name string) (string, error) {
	return s.Key(s.resourcePrefix + "/" + name)
}

// Encode returns obj, new, as the etcd3 store writes it at etcdKey: encoded with the resource's codec
// (data) and transformed (encrypted) for its key (stored).
func (s Storage) Encode(ctx context.Context, etcdKey string, obj runtime.Object) (data, stored []byte, err error) {
	return s.encodeInto(ctx, etcdKey, obj, &bytes.Buffer{})
}

// encodeInto is Encode with the encoding written to buf: data is buf's, and stored may be too (when the
// transformer keeps the value as it is).
func (s Storage) encodeInto(ctx context.Context, etcdKey string, obj runtime.Object, buf *bytes.Buffer) (data, stored []byte, err error) {
	versioner := storage.APIObjectVersioner{}
	if version, err := versioner.ObjectResourceVersion(obj); err == nil && version != 0 {
		return nil, nil, storage.ErrResourceVersionSetOnCreate
	}
	if err := versioner.PrepareObjectForStorage(obj); err != nil {
		return nil, nil, fmt.Errorf("PrepareObjectForStorage failed: %w", err)
	}
	if err = s.codec.Encode(obj, buf); err != nil {
		return nil, nil, err
	}
	data = buf.Bytes()
	if stored, err = s.transformer.TransformToStorage(ctx, data, authenticatedData(etcdKey)); err != nil {
		return nil, nil, storage.NewInternalError(err)
	}
	return data, stored, nil
}

// WithClaimsInCreate decorates the storage that inner makes so that a create writes the claims Defer put in
// its context in the object's own transaction. Everything else, the watch cache included, is inner's; the
// cache learns of the object from etcd's watch, as it does of any create.
func (s *Store) WithClaimsInCreate(inner generic.StorageDecorator) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		decorated, destroy, err := inner(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, triggers, indexers)
		if err != nil {
			return decorated, destroy, err
		}
		return &claimingStorage{Interface: decorated, client: s.client, storage: NewStorage(config, resourcePrefix),
			groupResource: config.GroupResource}, destroy, nil
	}
}

// encodeBuffers hold creates' encodings while they are written.
var encodeBuffers = sync.Pool{New: func() any { return &bytes.Buffer{} }}

type claimingStorage struct {
	storage.Interface
	client        *clientv3.Client
	storage       Storage
	groupResource schema.GroupResource
}

// authenticatedData is the key the transformer binds a value to, as the etcd3 store passes it.
type authenticatedData string

func (d authenticatedData) AuthenticatedData() []byte { return []byte(d) }

// Create writes the object, its deferred claims and its companions in one transaction, as the etcd3
// store writes the object alone: encoded with the resource's codec, transformed (encrypted) for its key,
// created only where nothing is, and decoded into out at the revision written.
func (c *claimingStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok || len(d.keys)+len(d.companions)+len(d.unchanged) == 0 || ttl != 0 && len(d.companions)+len(d.unchanged) == 0 {
		return c.Interface.Create(ctx, key, obj, out, ttl)
	}
	if ttl != 0 {
		// No resource of the API expires; were one to, its companions would have to.
		return storage.NewInternalError(fmt.Errorf("a create that expires cannot write other objects with it"))
	}
	etcdKey, err := c.storage.Key(key)
	if err != nil {
		return err
	}
	// The encoding is only needed until the answer is decoded from it, and every create makes one: it is
	// written into a buffer that the next create reuses, rather than into a new one each time. etcd's
	// client copies the stored value (OpPut takes a string), and decoding copies what it keeps.
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		encodeBuffers.Put(buf)
	}()
	data, stored, err := c.storage.encodeInto(ctx, etcdKey, obj, buf)
	if err != nil {
		return err
	}
	// Sized once: an etcd operation is a few hundred bytes, and every create builds these.
	writes := 1 + len(d.keys) + len(d.companions)
	conditions := append(make([]clientv3.Cmp, 0, writes+len(d.unchanged)), clientv3.Compare(clientv3.ModRevision(etcdKey), "=", 0))
	puts := append(make([]clientv3.Op, 0, writes), clientv3.OpPut(etcdKey, string(stored)))
	holder := string(d.value)
	for _, k := range d.keys {
		conditions = append(conditions, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
		puts = append(puts, clientv3.OpPut(k, holder))
	}
	for _, companion := range d.companions {
		conditions = append(conditions, clientv3.Compare(clientv3.CreateRevision(companion.Key), "=", 0))
		puts = append(puts, clientv3.OpPut(companion.Key, string(companion.Value)))
	}
	// What failed is read in the same transaction: whether the object exists, and where each object the
	// create was checked against is now.
	failed := append(make([]clientv3.Op, 0, 1+len(d.unchanged)), clientv3.OpGet(etcdKey, clientv3.WithCountOnly()))
	for _, u := range d.unchanged {
		conditions = append(conditions, clientv3.Compare(clientv3.ModRevision(u.Key), "=", u.Revision))
		failed = append(failed, clientv3.OpGet(u.Key, clientv3.WithKeysOnly()))
	}
	start := time.Now()
	resp, err := c.client.Txn(ctx).If(conditions...).Then(puts...).Else(failed...).Commit()
	// Counted as the etcd3 store counts its creates (etcd_request_duration_seconds, etcd_requests_total).
	metrics.RecordEtcdRequest("create", c.groupResource, err, start)
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		if resp.Responses[0].GetResponseRange().Count > 0 {
			return storage.NewKeyExistsError(etcdKey, 0)
		}
		if err := changed(resp.Responses[1:], d.unchanged); err != nil {
			return err
		}
		if len(d.keys) > 0 {
			// Claimed values are the likely cause; a companion that exists shows when created again
			// without them.
			return ErrClaimed
		}
		return ErrCompanionExists
	}
	if out == nil {
		return nil
	}
	if _, _, err := c.storage.codec.Decode(data, nil, out); err != nil {
		return err
	}
	return storage.APIObjectVersioner{}.UpdateObject(out, uint64(resp.Header.Revision))
}

// changed returns the Changed error of the first object of unchanged that is no longer at its revision,
// as the failed transaction read them (responses, in the same order).
func changed(responses []*etcdserverpb.ResponseOp, unchanged []Unchanged) error {
	for i, u := range unchanged {
		var revision int64 // 0: the object is gone
		if kvs := responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
			revision = kvs[0].ModRevision
		}
		if revision != u.Revision {
			return u.Changed
		}
	}
	return nil
}
