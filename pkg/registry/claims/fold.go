package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

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

// ErrClaimed says a create with claims wrote nothing because one of its values was claimed already.
var ErrClaimed = errors.New("a value the object claims is claimed already")

type deferredKey struct{}

// deferred are the claims a create takes with its object.
type deferred struct {
	keys  []string
	value []byte
}

// InCreate returns ctx for a create whose claims may be written with the object, by a store decorated with
// WithClaimsInCreate.
func InCreate(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferredKey{}, &deferred{})
}

// Defer has the create of ctx write the claims keys for holder with its object, and reports whether it
// will: false when ctx is not of such a create, and the caller takes them itself.
func (s *Store) Defer(ctx context.Context, keys []string, holder Holder) (bool, error) {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok {
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
		pathPrefix := path.Join("/", config.Prefix)
		if !strings.HasSuffix(pathPrefix, "/") {
			pathPrefix += "/"
		}
		transformer := config.Transformer
		if transformer == nil {
			transformer = identity.NewEncryptCheckTransformer() // as the etcd3 store's factory defaults it
		}
		return &claimingStorage{Interface: decorated, client: s.client, codec: config.Codec, transformer: transformer,
			pathPrefix: pathPrefix, resourcePrefix: resourcePrefix, groupResource: config.GroupResource}, destroy, nil
	}
}

type claimingStorage struct {
	storage.Interface
	client         *clientv3.Client
	codec          runtime.Codec
	transformer    value.Transformer
	pathPrefix     string
	resourcePrefix string
	groupResource  schema.GroupResource
}

// authenticatedData is the key the transformer binds a value to, as the etcd3 store passes it.
type authenticatedData string

func (d authenticatedData) AuthenticatedData() []byte { return []byte(d) }

// Create writes the object and its deferred claims in one transaction, as the etcd3 store writes the
// object alone: encoded with the resource's codec, transformed (encrypted) for its key, created only
// where nothing is, and decoded into out at the revision written.
func (c *claimingStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok || len(d.keys) == 0 || ttl != 0 {
		return c.Interface.Create(ctx, key, obj, out, ttl)
	}
	versioner := storage.APIObjectVersioner{}
	if version, err := versioner.ObjectResourceVersion(obj); err == nil && version != 0 {
		return storage.ErrResourceVersionSetOnCreate
	}
	prepared, err := storage.PrepareKey(c.resourcePrefix, key, false)
	if err != nil {
		return err
	}
	etcdKey := c.pathPrefix + strings.TrimPrefix(prepared, "/")
	if err := versioner.PrepareObjectForStorage(obj); err != nil {
		return fmt.Errorf("PrepareObjectForStorage failed: %w", err)
	}
	data, err := runtime.Encode(c.codec, obj)
	if err != nil {
		return err
	}
	stored, err := c.transformer.TransformToStorage(ctx, data, authenticatedData(etcdKey))
	if err != nil {
		return storage.NewInternalError(err)
	}
	conditions := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(etcdKey), "=", 0)}
	puts := []clientv3.Op{clientv3.OpPut(etcdKey, string(stored))}
	for _, k := range d.keys {
		conditions = append(conditions, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
		puts = append(puts, clientv3.OpPut(k, string(d.value)))
	}
	start := time.Now()
	resp, err := c.client.Txn(ctx).If(conditions...).Then(puts...).Else(clientv3.OpGet(etcdKey, clientv3.WithCountOnly())).Commit()
	// Counted as the etcd3 store counts its creates (etcd_request_duration_seconds, etcd_requests_total).
	metrics.RecordEtcdRequest("create", c.groupResource, err, start)
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		if resp.Responses[0].GetResponseRange().Count > 0 {
			return storage.NewKeyExistsError(etcdKey, 0)
		}
		return ErrClaimed
	}
	if out == nil {
		return nil
	}
	if _, _, err := c.codec.Decode(data, nil, out); err != nil {
		return err
	}
	return versioner.UpdateObject(out, uint64(resp.Header.Revision))
}
