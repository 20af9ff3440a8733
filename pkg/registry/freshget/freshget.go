// Package freshget answers a read that must see every write made before it (a GET without a
// resourceVersion) from the watch cache when the cache holds the object as etcd holds it now, instead of
// reading the object's value from etcd and decoding it once more.
//
// k8s.io/apiserver sends such a GET to etcd: the value travels, is decompressed and decoded, a third of
// the read's CPU and 12 KB of its garbage, though the watch cache usually holds that very revision of the
// object already. Here the read asks etcd, with the same quorum read, only for the key's revision; when
// the cache holds the object at that revision, the object is what etcd would have sent, and a copy of the
// cache's is answered. When the cache holds another revision (a write it has not seen yet, or one after
// the read) or not the object, the object is read from etcd as before; when etcd has no such key, the read
// is a NotFound whatever the cache holds. So the answer is always the object as it is in etcd when the
// read is served, as the quorum read answers.
package freshget

import (
	"context"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3/metrics"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// RESTOptionsGetter is getter with the GETs of every resource that has a watch cache answered from it
// when it is current, asking etcd through client.
func RESTOptionsGetter(getter generic.RESTOptionsGetter, client *clientv3.Client) generic.RESTOptionsGetter {
	return hcpregistry.DecorateStorage(getter, func(inner generic.StorageDecorator) generic.StorageDecorator {
		return Decorator(inner, client)
	})
}

// Decorator decorates the storage inner makes, when it is a watch cache over etcd, so that its GETs are
// answered as the package says.
func Decorator(inner generic.StorageDecorator, client *clientv3.Client) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		decorated, destroy, err := inner(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, triggers, indexers)
		if err != nil {
			return decorated, destroy, err
		}
		if _, cached := decorated.(*cacher.CacheDelegator); !cached {
			return decorated, destroy, nil
		}
		return New(decorated, client, claims.NewStorage(config, resourcePrefix), config.GroupResource), destroy, nil
	}
}

// New returns cached, a watch cache over the etcd that client reaches, with its GETs answered as the
// package says; keys tells the etcd key of an object's key.
func New(cached storage.Interface, client *clientv3.Client, keys claims.Storage, groupResource schema.GroupResource) storage.Interface {
	return &freshGets{Interface: cached, client: client, keys: keys, groupResource: groupResource}
}

type freshGets struct {
	storage.Interface
	client        *clientv3.Client
	keys          claims.Storage
	groupResource schema.GroupResource
}

// Get implements storage.Interface.
func (s *freshGets) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	if opts.ResourceVersion != "" {
		// The cache answers these itself, at least as fresh as asked.
		return s.Interface.Get(ctx, key, opts, out)
	}
	etcdKey, err := s.keys.Key(key)
	if err != nil {
		return s.Interface.Get(ctx, key, opts, out)
	}
	start := time.Now()
	resp, err := s.client.Get(ctx, etcdKey, clientv3.WithKeysOnly())
	// Counted as the etcd3 store counts its reads (etcd_request_duration_seconds, etcd_requests_total).
	metrics.RecordEtcdRequest("get", s.groupResource, err, start)
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(out)
		}
		return storage.NewKeyNotFoundError(etcdKey, 0)
	}
	revision := strconv.FormatInt(resp.Kvs[0].ModRevision, 10)
	if err := s.Interface.Get(ctx, key, storage.GetOptions{ResourceVersion: "0", IgnoreNotFound: true}, out); err == nil {
		if accessor, err := meta.Accessor(out); err == nil && accessor.GetResourceVersion() == revision {
			// The cache answers a copy that shares its maps and slices with the object it holds. Callers of a
			// GET without a resourceVersion (the store's delete among them) were written for etcd's fresh
			// object and may change it in place, so they get one of their own.
			return copyInto(out, out.DeepCopyObject())
		}
	}
	return s.Interface.Get(ctx, key, opts, out)
}

func copyInto(out, copied runtime.Object) error {
	into, err := conversion.EnforcePtr(out)
	if err != nil {
		return err
	}
	from, err := conversion.EnforcePtr(copied)
	if err != nil {
		return err
	}
	into.Set(from)
	return nil
}
