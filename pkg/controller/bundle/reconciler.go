// Package bundle is the one loop that delivers objects of every delivered kind (HCPClusters, NodePools,
// and what comes next) to their management clusters through the Maestro source. It owns what is the same
// for every kind: publishing, the index of the agents' reports, the offer to the source at start,
// finalizers, deletion on the management cluster, and writing status. A kind plugs in an Adapter: where
// an object goes, what it is rendered into, and how a report becomes its status.
//
// An object's bundle is keyed by its UID with its generation as version, so a spec change is a new
// generation of the same bundle. The reconciler gives the source every bundle again when it starts (the
// source keeps nothing across restarts), and tells it when it has: only then may the source have agents
// delete bundles it does not know. Reports flow one way: the source hands each to the reconciler's queue,
// which keeps the newest per object and never asks the source back.
package bundle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// ByUID is the informer index reports are routed by: a bundle is keyed by the UID of its object.
const ByUID = "uid"

// IndexByUID indexes an object by its UID.
func IndexByUID(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	return []string{string(m.GetUID())}, nil
}

// Reconciler delivers the objects of one kind.
type Reconciler[T Object[T]] struct {
	name string
	// suffix follows the UID in the bundle IDs of a Secondary adapter.
	suffix    string
	informer  cache.SharedIndexInformer
	indexer   cache.Indexer
	adapter   Adapter[T]
	publisher Publisher
	queue     *queue.Queue
	synced    []cache.InformerSynced

	mu sync.Mutex
	// reports holds the newest report of each object's bundle, by UID.
	reports map[string]source.BundleStatus
	// deleted holds the UIDs whose bundles the agent reported deleted, until their objects are let go.
	deleted sets.Set[string]
	// published is what was last published of each object, by UID: the bundle is rendered again only
	// when it changes, and the consumer is where to delete it when the object's placement is gone.
	published map[string]publication
}

type publication struct {
	consumer   string
	generation int64
	input      string
}

// New returns the reconciler of the kind whose objects informer holds; name names it in logs and in the
// managed fields of what it writes. synced are the other informers the adapter reads.
func New[T Object[T]](name string, informer cache.SharedIndexInformer, adapter Adapter[T], publisher Publisher,
	synced ...cache.InformerSynced) (*Reconciler[T], error) {
	r := &Reconciler[T]{
		name: name, informer: informer, indexer: informer.GetIndexer(), adapter: adapter, publisher: publisher,
		synced:  append([]cache.InformerSynced{informer.HasSynced}, synced...),
		reports: map[string]source.BundleStatus{}, deleted: sets.New[string](), published: map[string]publication{},
	}
	if secondary, ok := adapter.(Secondary); ok {
		r.suffix = secondary.BundleSuffix()
	}
	r.queue = queue.New(name, r.Sync)
	if _, ok := r.indexer.GetIndexers()[ByUID]; !ok {
		if err := informer.AddIndexers(cache.Indexers{ByUID: IndexByUID}); err != nil {
			return nil, err
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.queue.Enqueue,
		UpdateFunc: func(_, obj any) { r.queue.Enqueue(obj) },
		DeleteFunc: r.forget,
	}); err != nil {
		return nil, err
	}
	publisher.AddStatusHandler(r.OnReport)
	return r, nil
}

// forget drops what is held of an object that is gone, however it went.
func (r *Reconciler[T]) forget(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		r.mu.Lock()
		r.deleted.Delete(string(m.GetUID()))
		delete(r.reports, string(m.GetUID()))
		delete(r.published, string(m.GetUID()))
		r.mu.Unlock()
		// Kept after a restart and gone without a delete of its own (its placement went first): the
		// agent's next resync deletes it.
		r.publisher.Forget(string(m.GetUID()) + r.suffix)
	}
}

// Enqueue queues an object (or tombstone) of the kind, for an adapter that watches what its objects
// depend on.
func (r *Reconciler[T]) Enqueue(obj any) { r.queue.Enqueue(obj) }

// EnqueueAll queues every object of the kind (after a change of what all of them are rendered from).
func (r *Reconciler[T]) EnqueueAll() {
	for _, key := range r.indexer.ListKeys() {
		r.queue.Add(key)
	}
}

// EnqueueKey queues the object of a namespace/name key, for an adapter whose objects depend on objects
// that name them (a cluster's external auth).
func (r *Reconciler[T]) EnqueueKey(key string) { r.queue.Add(key) }

// FollowChanges queues, on every change of an object of what (an HCPCluster, say), the objects of the
// kind that depend on it: those for which dependsOn returns its namespace/name key. A node pool or a
// credential waits for its cluster, and goes with it. Call it before the informers start.
func (r *Reconciler[T]) FollowChanges(what cache.SharedIndexInformer, dependsOn func(T) string) error {
	index := r.name + "/depends-on"
	err := r.informer.AddIndexers(cache.Indexers{index: func(obj any) ([]string, error) {
		if o, ok := obj.(T); ok {
			return []string{dependsOn(o)}, nil
		}
		return nil, nil
	}})
	if err != nil {
		return err
	}
	enqueue := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		dependents, _ := r.indexer.ByIndex(index, key)
		for _, d := range dependents {
			r.queue.Enqueue(d)
		}
	}
	_, err = what.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	return err
}

// Run gives the source every object's bundle, tells it so, and delivers until ctx ends.
func (r *Reconciler[T]) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), r.synced...) {
		return
	}
	for _, obj := range r.indexer.List() {
		// Errors are retried by the queue; what counts here is that every bundle the source should hold
		// was offered to it before it may delete unknown ones.
		if o, ok := obj.(T); ok {
			r.offer(o)
		}
		r.queue.Enqueue(obj)
	}
	r.publisher.SetSynced()
	r.queue.Run(ctx, workers)
}

// offer publishes an object's bundle, or its delete, without writing status.
func (r *Reconciler[T]) offer(obj T) {
	consumer, err := r.adapter.Consumer(obj)
	if err != nil || consumer == "" {
		return
	}
	if obj.GetDeletionTimestamp() != nil {
		if r.suffix == "" {
			_ = r.publisher.Delete(consumer, r.bundleID(obj))
		}
		return
	}
	// A bundle withdrawn is deleted by the agent's next resync; one the object cannot be rendered into
	// now (or whose plan failed, to be retried) stays there as it is.
	plan, err := r.adapter.Plan(obj, consumer)
	switch {
	case err == nil && (plan.Withdraw || plan.Delete):
	case err != nil || plan.Wait != nil:
		_ = r.keep(obj, consumer)
	default:
		_ = r.publish(obj, consumer, plan)
	}
}

// keep has the source leave what the agent holds of an object's bundle as it is while the object has
// nothing to publish: it waits for something, its version is not resolved, or its spec does not render.
// Were it not offered at all after a restart, the agent's next resync would delete the bundle, and with
// it everything it applied: a control plane, a pool's machines.
func (r *Reconciler[T]) keep(obj T, consumer string) error {
	id := r.bundleID(obj)
	if err := r.publisher.Keep(consumer, id); err != nil {
		return err
	}
	// The object may have gone meanwhile, its forget run before this keep: the informer drops it from the
	// indexer before it tells forget, so looking again after keeping leaves nothing kept for nobody.
	if objs, err := r.indexer.ByIndex(ByUID, string(obj.GetUID())); err == nil && len(objs) == 0 {
		r.publisher.Forget(id)
	}
	return nil
}

// OnReport is the source's status handler. It runs on the MQTT reader, so it only notes the report and
// queues its object; a report of a bundle no object of this kind has is another kind's, or late.
func (r *Reconciler[T]) OnReport(report source.BundleStatus) {
	uid, ours := strings.CutSuffix(report.ResourceID, r.suffix)
	if !ours {
		return
	}
	objs, err := r.indexer.ByIndex(ByUID, uid)
	if err != nil || len(objs) == 0 {
		return
	}
	r.mu.Lock()
	switch held, ok := r.reports[uid]; {
	case report.Deleted:
		r.deleted.Insert(uid)
		delete(r.reports, uid)
	case ok && (report.Generation < held.Generation || report.Generation == held.Generation && report.SequenceID < held.SequenceID):
		// Older than what is held: the source drops those, but a resync may race a status update.
		r.mu.Unlock()
		return
	default:
		r.reports[uid] = report
	}
	r.mu.Unlock()
	for _, obj := range objs {
		r.queue.Enqueue(obj)
	}
}

// bundleID is the ID of an object's bundle at the source.
func (r *Reconciler[T]) bundleID(obj T) string { return string(obj.GetUID()) + r.suffix }

// Sync delivers the object of key: the queue calls it, and tests may.
func (r *Reconciler[T]) Sync(ctx context.Context, key string) (time.Duration, error) {
	item, exists, err := r.indexer.GetByKey(key)
	if err != nil || !exists {
		return 0, err
	}
	obj, ok := item.(T)
	if !ok {
		return 0, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		if r.suffix != "" {
			return 0, r.withdraw(ctx, obj, "")
		}
		return 0, r.syncDelete(ctx, obj)
	}
	consumer, err := r.adapter.Consumer(obj)
	if err != nil {
		return 0, err
	}
	plan, err := r.adapter.Plan(obj, consumer)
	if err != nil {
		return 0, err
	}
	if plan.Delete {
		uid := obj.GetUID()
		err := r.adapter.Client(obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err == nil {
			klog.FromContext(ctx).V(2).Info("Deleted an object that served its time", "controller", r.name, "object", klog.KObj(obj))
		}
		return 0, ignoreNotFound(err)
	}
	if plan.Wait != nil {
		if consumer != "" {
			if err := r.keep(obj, consumer); err != nil {
				return 0, err
			}
		}
		return 0, r.updateStatus(ctx, obj, plan.Wait)
	}
	if plan.Withdraw {
		if err := r.withdraw(ctx, obj, consumer); err != nil {
			return 0, err
		}
		return r.applyReport(ctx, obj, consumer, plan)
	}
	var failed renderError
	switch err := r.publish(obj, consumer, plan); {
	case errors.As(err, &failed):
		return 0, r.updateStatus(ctx, obj, func(obj T) { plan.RenderFailed(obj, failed.err) })
	case err != nil:
		return 0, err
	}
	return r.applyReport(ctx, obj, consumer, plan)
}

// applyReport writes the object's newest report into its status.
func (r *Reconciler[T]) applyReport(ctx context.Context, obj T, consumer string, plan Plan[T]) (time.Duration, error) {
	if plan.Report == nil || consumer == "" {
		return 0, nil
	}
	report, reported := r.report(string(obj.GetUID()))
	var after time.Duration
	err := r.updateStatus(ctx, obj, func(obj T) { after = plan.Report(obj, report, reported) })
	return after, err
}

// withdraw deletes the bundle of an object that needs none (any more), once: when this process published
// it, when an agent reported holding it, or while the object keeps the finalizer that says its bundle may
// be out there. The finalizer goes once the agent reported the bundle deleted. A Secondary adapter's
// object is withdrawn on deletion too, with the consumer it was published to.
func (r *Reconciler[T]) withdraw(ctx context.Context, obj T, consumer string) error {
	uid := string(obj.GetUID())
	r.mu.Lock()
	published, reported := r.published[uid], r.reports[uid]
	done := r.deleted.Has(uid)
	r.mu.Unlock()
	finalized := r.suffix == "" && slices.Contains(obj.GetFinalizers(), v1alpha1.DeliveryFinalizer)
	if consumer == "" {
		consumer = published.consumer
	}
	if consumer == "" {
		consumer = reported.Consumer
	}
	switch {
	case done && finalized:
		return r.removeFinalizer(ctx, obj)
	case done || consumer == "":
		return nil
	case published.consumer != "" || reported.Consumer != "" || finalized:
		// The report of the delete queues the object again.
		return r.publisher.Delete(consumer, r.bundleID(obj))
	}
	// Neither sent nor reported on here, but maybe kept since a restart: the agent's next resync deletes it.
	r.publisher.Forget(r.bundleID(obj))
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

type renderError struct{ err error }

func (e renderError) Error() string { return e.err.Error() }

// publish hands the source the object's bundle unless what it is rendered from is what was published
// last: a report does not render the bundle again.
func (r *Reconciler[T]) publish(obj T, consumer string, plan Plan[T]) error {
	if consumer == "" {
		return nil
	}
	if plan.Render == nil {
		return r.keep(obj, consumer)
	}
	uid := string(obj.GetUID())
	want := publication{consumer: consumer, generation: obj.GetGeneration(), input: plan.Input}
	r.mu.Lock()
	same := r.published[uid] == want
	r.mu.Unlock()
	if same {
		return nil
	}
	bundle, err := plan.Render()
	if err != nil {
		if err := r.keep(obj, consumer); err != nil {
			return err
		}
		return renderError{err}
	}
	if err := r.publisher.Apply(consumer, r.bundleID(obj), want.generation, bundle); err != nil {
		return err
	}
	r.mu.Lock()
	r.published[uid] = want
	r.mu.Unlock()
	return nil
}

func (r *Reconciler[T]) report(uid string) (source.BundleStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	report, ok := r.reports[uid]
	return report, ok
}

// updateStatus writes the status mutate makes of a copy of obj, unless it changes nothing. A conflict
// comes back as an error: the queue retries with the informer's newer copy.
func (r *Reconciler[T]) updateStatus(ctx context.Context, obj T, mutate func(T)) error {
	updated := obj.DeepCopy()
	mutate(updated)
	if apiequality.Semantic.DeepEqual(updated, obj) {
		return nil
	}
	_, err := r.adapter.Client(obj.GetNamespace()).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: r.name})
	return err
}

// removeFinalizer lets the object go as far as delivery is concerned.
func (r *Reconciler[T]) removeFinalizer(ctx context.Context, obj T) error {
	updated := obj.DeepCopy()
	updated.SetFinalizers(slices.DeleteFunc(updated.GetFinalizers(), func(f string) bool { return f == v1alpha1.DeliveryFinalizer }))
	if _, err := r.adapter.Client(obj.GetNamespace()).Update(ctx, updated, metav1.UpdateOptions{FieldManager: r.name}); err != nil {
		return fmt.Errorf("removing the finalizer of %s: %w", klog.KObj(obj), err)
	}
	return nil
}

// syncDelete deletes what belongs to a deleted object, has the agent delete its bundle, and removes the
// finalizer once the agent reported it gone. An object never placed has nothing to wait for; one whose
// placement is gone (its objects went with their parent) lets the agent drop its record and goes at once.
func (r *Reconciler[T]) syncDelete(ctx context.Context, obj T) error {
	if !slices.Contains(obj.GetFinalizers(), v1alpha1.DeliveryFinalizer) {
		return nil
	}
	if cleaner, ok := r.adapter.(Cleaner[T]); ok {
		if err := cleaner.Cleanup(ctx, obj); err != nil {
			return err
		}
	}
	consumer, err := r.adapter.Consumer(obj)
	if err != nil {
		return err
	}
	uid := string(obj.GetUID())
	r.mu.Lock()
	done, last := r.deleted.Has(uid), r.published[uid].consumer
	r.mu.Unlock()
	switch {
	case consumer != "" && !done:
		// The report of the delete queues the object again.
		return r.publisher.Delete(consumer, r.bundleID(obj))
	case consumer == "" && last != "":
		// Bundles published before a restart are deleted by the agent's next resync instead.
		if err := r.publisher.Delete(last, r.bundleID(obj)); err != nil {
			return err
		}
	}
	if err := r.removeFinalizer(ctx, obj); err != nil {
		return err
	}
	r.forget(obj)
	klog.FromContext(ctx).V(2).Info("Delivered object deleted", "controller", r.name, "object", klog.KObj(obj))
	return nil
}
