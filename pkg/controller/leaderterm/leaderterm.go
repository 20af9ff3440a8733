// Package leaderterm lends the server's shared informers to the controllers of one leadership term, and
// takes back what those controllers added when the term ends.
package leaderterm

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Informers lend the server's shared informers (those the admission plugins read) to the controllers
// of one leadership term: the controllers and the plugins then hold one copy of each object and one
// watch per resource between them, not two. What a term's controllers add to the informers goes when
// the term ends: their event handlers are removed, so that a later term's controllers are the only ones
// called. Their indexers stay, as an informer cannot drop one; a later term adding an index of the same
// name finds it there and keeps it (every index is a pure function of the object, named for its
// controller).
type Informers struct {
	mu            sync.Mutex
	registrations []registration
}

type registration struct {
	informer cache.SharedIndexInformer
	handle   cache.ResourceEventHandlerRegistration
}

// New returns the lender for the term that ctx spans.
func New(ctx context.Context) *Informers {
	t := &Informers{}
	context.AfterFunc(ctx, t.end)
	return t
}

func (t *Informers) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.registrations {
		_ = r.informer.RemoveEventHandler(r.handle)
	}
	t.registrations = nil
}

func (t *Informers) remember(informer cache.SharedIndexInformer, handle cache.ResourceEventHandlerRegistration, err error) (cache.ResourceEventHandlerRegistration, error) {
	if err == nil {
		t.mu.Lock()
		t.registrations = append(t.registrations, registration{informer, handle})
		t.mu.Unlock()
	}
	return handle, err
}

// Lend returns informer as the term's controllers see it, with the lister they read through.
func Lend[L any](t *Informers, informer interface {
	Informer() cache.SharedIndexInformer
	Lister() L
}) Lent[L] {
	return Lent[L]{informer: termInformer{SharedIndexInformer: informer.Informer(), term: t}, lister: informer.Lister()}
}

// Lent is a generated informer (HCPClusterInformer and the like) for one term.
type Lent[L any] struct {
	informer cache.SharedIndexInformer
	lister   L
}

func (l Lent[L]) Informer() cache.SharedIndexInformer { return l.informer }
func (l Lent[L]) Lister() L                           { return l.lister }

// termInformer is a shared informer whose handlers the term removes when it ends.
type termInformer struct {
	cache.SharedIndexInformer
	term *Informers
}

func (i termInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	handle, err := i.SharedIndexInformer.AddEventHandler(handler)
	return i.term.remember(i.SharedIndexInformer, handle, err)
}

func (i termInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	handle, err := i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(handler, resync)
	return i.term.remember(i.SharedIndexInformer, handle, err)
}

func (i termInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	handle, err := i.SharedIndexInformer.AddEventHandlerWithOptions(handler, options)
	return i.term.remember(i.SharedIndexInformer, handle, err)
}

// AddIndexers adds the indexes the informer does not have yet: those of an earlier term stay.
func (i termInformer) AddIndexers(indexers cache.Indexers) error {
	existing := i.GetIndexer().GetIndexers()
	missing := cache.Indexers{}
	for name, index := range indexers {
		if _, found := existing[name]; !found {
			missing[name] = index
		}
	}
	return i.SharedIndexInformer.AddIndexers(missing)
}
