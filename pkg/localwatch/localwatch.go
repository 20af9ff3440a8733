// Package localwatch feeds the server's own informers (its controllers' and admission plugins') from its
// stores, in its own process, instead of through its loopback client.
//
// Through the loopback, every change of every object was encoded by the server for the informers' watch,
// framed, sent and decoded again by them. Here an informer's list and watch are the stores' own (served
// from the watch cache), and it gets a copy of each object, converted to v1alpha1: copying an object costs
// a fraction of encoding and decoding it. The informers hold their own copies, as they did: nothing they
// hold is the watch cache's.
package localwatch

import (
	"context"
	"fmt"
	"sync"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"
)

// Stores are the server's stores by resource, once it has made them.
type Stores struct {
	mu      sync.RWMutex
	storage map[string]rest.Storage
}

// Serve makes the stores available to the informers; until then their lists fail and are retried.
func (s *Stores) Serve(storage map[string]rest.Storage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storage = storage
}

func (s *Stores) store(resource string) (rest.Storage, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.storage == nil {
		return nil, fmt.Errorf("the server has no stores yet")
	}
	store, ok := s.storage[resource]
	if !ok {
		return nil, fmt.Errorf("the server has no store of %s", resource)
	}
	return store, nil
}

// ListerWatcher lists and watches resource in the stores, cluster-wide, and converts what they return to
// version with scheme.
func (s *Stores) ListerWatcher(scheme *runtime.Scheme, version schema.GroupVersion, resource string) cache.ListerWatcher {
	return &listerWatcher{stores: s, scheme: scheme, version: version, resource: resource}
}

type listerWatcher struct {
	stores   *Stores
	scheme   *runtime.Scheme
	version  schema.GroupVersion
	resource string
}

var (
	_ cache.ListerWatcherWithContext = &listerWatcher{}
	_ cache.ListerWatcher            = &listerWatcher{}
)

// The server's loopback client authenticates as this user; the stores see the same.
var loopbackUser = &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup}}

// requestContext is ctx as a cluster-wide request of the loopback user looks to a store.
func requestContext(ctx context.Context) context.Context {
	return genericapirequest.WithUser(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), loopbackUser)
}

func internalOptions(options metav1.ListOptions) (*metainternalversion.ListOptions, error) {
	internal := &metainternalversion.ListOptions{}
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&options, internal, nil); err != nil {
		return nil, err
	}
	return internal, nil
}

// storeAs is the resource's store as the interface a verb needs of it, and the options as it takes them.
func storeAs[I any](lw *listerWatcher, verb string, options metav1.ListOptions) (I, *metainternalversion.ListOptions, error) {
	var none I
	store, err := lw.stores.store(lw.resource)
	if err != nil {
		return none, nil, err
	}
	s, ok := store.(I)
	if !ok {
		return none, nil, fmt.Errorf("the store of %s cannot %s", lw.resource, verb)
	}
	internal, err := internalOptions(options)
	if err != nil {
		return none, nil, err
	}
	return s, internal, nil
}

func (lw *listerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lister, internal, err := storeAs[rest.Lister](lw, "list", options)
	if err != nil {
		return nil, err
	}
	list, err := lister.List(requestContext(ctx), internal)
	if err != nil {
		return nil, err
	}
	// The list's items are the watch cache's: the conversion copies them.
	return lw.scheme.ConvertToVersion(list, lw.version)
}

func (lw *listerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	watcher, internal, err := storeAs[rest.Watcher](lw, "watch", options)
	if err != nil {
		return nil, err
	}
	w, err := watcher.Watch(requestContext(ctx), internal)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, lw.convertEvent), nil
}

// convertEvent converts a copy of the object of an event to the informer's version; an error event
// carries a Status, which needs neither. The watch cache wraps the objects it sends (to share their
// encodings between watchers), and the wrapper gives a copy of its object. An object that does not
// convert ends the informer's watch with an error event, as one it could not decode would, and it lists
// again.
func (lw *listerWatcher) convertEvent(event watch.Event) (watch.Event, bool) {
	if event.Type == watch.Error {
		return event, true
	}
	var converted runtime.Object
	var err error
	if wrapped, ok := event.Object.(runtime.CacheableObject); ok {
		converted, err = lw.scheme.UnsafeConvertToVersion(wrapped.GetObject(), lw.version)
	} else {
		converted, err = lw.scheme.ConvertToVersion(event.Object, lw.version)
	}
	if err != nil {
		return watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
			Message: fmt.Sprintf("converting a watch event of %s: %v", lw.resource, err)}}, true
	}
	event.Object = converted
	return event, true
}

func (lw *listerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

func (lw *listerWatcher) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}
