package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// StatusFunc receives the status of a bundle each time it changes, with its StatusHash. When it returns an
// error the Watcher calls it again later, with backoff, until it accepts the status.
type StatusFunc func(ctx context.Context, bundleID string, generation int64, status *protocol.ManifestBundleStatus, hash string) error

// Watcher watches the objects of the bundles it tracks and calls back with a bundle's status whenever the
// status changes: when an object is added, changed or deleted, never on a timer. Objects the agent owns
// are watched by BundleLabel, with one informer per resource for all bundles; the few it does not own
// (ReadOnly, or CreateOnly that found them) are watched one by one, by name.
type Watcher struct {
	client   dynamic.Interface
	onStatus StatusFunc
	queue    workqueue.TypedRateLimitingInterface[string]
	owned    dynamicinformer.DynamicSharedInformerFactory
	// onOwnedGone, when set, is told the bundle of each labelled object that is deleted or loses the label.
	onOwnedGone func(bundleID string)

	mu sync.Mutex
	// ctx is Run's; nil until Run starts, so informers added before are started by Run.
	ctx context.Context
	// ownedResources are the resources whose labelled objects are watched.
	ownedResources map[schema.GroupVersionResource]*ownedResource
	named          map[objectRef]*namedInformer
	bundles        map[string]*trackedBundle
}

type trackedBundle struct {
	// version counts Track calls, so a status built from an older Track is not recorded.
	version    int
	generation int64
	bundle     *protocol.ManifestBundle
	applied    []AppliedResource
	status     *protocol.ManifestBundleStatus
	hash       string
	// sentHash is the hash of the last status onStatus accepted.
	sentHash string
	// inputs names the objects, at their resource versions, that status was built from: an event that
	// changes none of them (the watch catching up with an apply) needs no new status.
	inputs string
	// trackedAt is when Track was called; for writeTrust after it, what Apply wrote stands for what the
	// informers have not seen yet.
	trackedAt time.Time
}

// ownedResource is what the Watcher knows of a resource's informer on labelled objects.
type ownedResource struct {
	informer cache.SharedIndexInformer
	refusal  *refusal
	// handled is the newest resource version the event handlers have seen: the informer's store holds
	// every change up to it, where its LastSyncResourceVersion may run ahead of the store.
	handled string
}

type objectRef struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

type namedInformer struct {
	informer cache.SharedIndexInformer
	refusal  *refusal
	cancel   context.CancelFunc
	bundles  sets.Set[string]
}

// writeTrust is how long an object as Apply returned it stands for one the informers have not seen yet:
// long enough for a watch event to arrive, short enough that an event the watch missed (it broke, and
// the object came and went meanwhile) does not leave a status wrong for long.
const writeTrust = 10 * time.Second

// errNotSynced asks for a later try: an informer has not listed its objects yet.
var errNotSynced = errors.New("informers not synced yet")

// NewWatcher returns a Watcher on the cluster cfg reaches; it does nothing until Run.
func NewWatcher(cfg *rest.Config, onStatus StatusFunc) (*Watcher, error) {
	client, err := newWatchingClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Watcher{
		client:   client,
		onStatus: onStatus,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "maestro_agent_status"}),
		owned: dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, metav1.NamespaceAll,
			func(o *metav1.ListOptions) { o.LabelSelector = BundleLabel }),
		ownedResources: map[schema.GroupVersionResource]*ownedResource{},
		named:          map[objectRef]*namedInformer{},
		bundles:        map[string]*trackedBundle{},
	}, nil
}

// Run starts the informers and the given number of status workers, and blocks until ctx ends.
func (w *Watcher) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer w.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting the bundle status watcher")
	defer logger.Info("Stopped the bundle status watcher")

	w.mu.Lock()
	w.ctx = ctx
	w.owned.Start(ctx.Done())
	for _, n := range w.named {
		w.startNamedLocked(n)
	}
	w.mu.Unlock()

	for range workers {
		go wait.UntilWithContext(ctx, w.runWorker, time.Second)
	}
	<-ctx.Done()
	w.owned.Shutdown()
}

// Track watches the objects of generation of a bundle, as Apply returned them, and reports its status now
// and whenever it changes. A later Track of the same bundle replaces the earlier one.
func (w *Watcher) Track(bundleID string, generation int64, bundle *protocol.ManifestBundle, applied []AppliedResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.bundles[bundleID]
	if t == nil {
		t = &trackedBundle{}
		w.bundles[bundleID] = t
	}
	t.version++
	t.generation, t.bundle, t.applied, t.inputs, t.trackedAt = generation, bundle, applied, "", time.Now()

	named := sets.New[objectRef]()
	for _, r := range applied {
		if !watched(r) {
			continue
		}
		if r.Owned {
			w.watchOwnedLocked(gvrOf(r.Meta))
			continue
		}
		ref := refOf(r.Meta)
		named.Insert(ref)
		w.watchNamedLocked(ref, bundleID)
	}
	w.releaseNamedLocked(bundleID, named)
	w.queue.Add(bundleID)
	// Once the write no longer stands for the object, the informers alone say what it is.
	w.queue.AddAfter(bundleID, writeTrust)
}

// Forget stops reporting the status of a bundle, once it is deleted.
func (w *Watcher) Forget(bundleID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.bundles, bundleID)
	w.releaseNamedLocked(bundleID, nil)
}

// Requeue builds the status of every tracked bundle again, at once, and reports those not accepted yet:
// after the connection to the source comes back, a status that failed to go out need not wait out its
// backoff. An unchanged status that was accepted is not reported again.
func (w *Watcher) Requeue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for bundleID := range w.bundles {
		w.queue.Add(bundleID)
	}
}

// Status returns the last status built for a bundle and its hash; ok is false for a bundle not tracked
// or whose status is not built yet.
func (w *Watcher) Status(bundleID string) (status *protocol.ManifestBundleStatus, hash string, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.bundles[bundleID]
	if t == nil || t.status == nil {
		return nil, "", false
	}
	return t.status, t.hash, true
}

func (w *Watcher) runWorker(ctx context.Context) {
	for w.processNextWorkItem(ctx) {
	}
}

func (w *Watcher) processNextWorkItem(ctx context.Context) bool {
	bundleID, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(bundleID)
	if err := w.sync(ctx, bundleID); err != nil {
		if !errors.Is(err, errNotSynced) {
			utilruntime.HandleErrorWithContext(ctx, err, "Reporting the status of a bundle", "bundle", bundleID)
		}
		w.queue.AddRateLimited(bundleID)
		return true
	}
	w.queue.Forget(bundleID)
	return true
}

// sync builds the status of a bundle from the informers' caches and hands it on if it changed.
func (w *Watcher) sync(ctx context.Context, bundleID string) error {
	w.mu.Lock()
	t := w.bundles[bundleID]
	if t == nil {
		w.mu.Unlock()
		return nil
	}
	version, generation, bundle, applied, previous, previousInputs := t.version, t.generation, t.bundle, t.applied, t.status, t.inputs
	trustWrite := time.Since(t.trackedAt) < writeTrust
	accepted := t.status != nil && t.hash == t.sentHash
	sources := w.sourcesLocked(applied)
	w.mu.Unlock()

	// An informer that may not list its resource never syncs: the manifests it would read are reported with
	// the management cluster's refusal, not waited for without a word (a ClusterRole missing a kind).
	unreadable := map[protocol.ManifestResourceMeta]error{}
	for m, s := range sources {
		if s.informer.HasSynced() {
			continue
		}
		if err := s.refusal.get(); err != nil {
			unreadable[m] = err
			continue
		}
		return errNotSynced
	}
	// While some cannot be read, the status is built again with backoff, to follow once they can.
	done := func() error {
		if len(unreadable) > 0 {
			return errNotSynced
		}
		return nil
	}
	written := map[protocol.ManifestResourceMeta]*unstructured.Unstructured{}
	for _, r := range applied {
		if !r.Owned || r.Object == nil {
			continue
		}
		if r.MetadataOnly {
			// A server-side apply answers with metadata only: until the watch brings the object as written,
			// there is no status to tell. Its event queues the bundle again, and Track queued it for when
			// writeTrust is over, should the event never come.
			if s, watched := sources[r.Meta]; trustWrite && watched && s.owned && !seenWrite(s.handled, cachedObject(s, r.Meta), r.Object) {
				return nil
			}
			continue
		}
		written[r.Meta] = r.Object
	}
	get := func(m protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
		if err, refused := unreadable[m]; refused {
			return nil, err
		}
		s, ok := sources[m]
		if !ok {
			return nil, nil
		}
		item, exists, err := s.informer.GetStore().GetByKey(cache.NewObjectName(m.Namespace, m.Name).String())
		if err != nil {
			return nil, err
		}
		var obj *unstructured.Unstructured
		if exists {
			obj = item.(*unstructured.Unstructured)
		}
		if w := written[m]; s.owned && w != nil && trustWrite && !seenWrite(s.handled, obj, w) {
			// The apply's answer is newer than what the informer holds: a status from the informer would
			// say the object is missing, or is as it was, until the watch catches up and says otherwise.
			return w, nil
		}
		if obj == nil {
			return nil, nil
		}
		if s.owned && bundleOf(obj) != bundleID {
			// Another bundle's object of that name is not this bundle's.
			return nil, nil
		}
		return obj, nil
	}
	objects, inputs := readObjects(applied, get)
	if accepted && inputs == previousInputs {
		return done()
	}
	status := BuildStatus(generation, bundle, applied, objects.get, previous)
	hash, err := StatusHash(status)
	if err != nil {
		return err
	}

	w.mu.Lock()
	if w.bundles[bundleID] != t || t.version != version {
		// Tracked anew meanwhile, which queued the bundle again.
		w.mu.Unlock()
		return nil
	}
	t.status, t.hash, t.inputs = status, hash, inputs
	changed := hash != t.sentHash
	w.mu.Unlock()
	if !changed {
		return done()
	}

	if err := w.onStatus(ctx, bundleID, generation, status, hash); err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Reported bundle status", "bundle", bundleID, "generation", generation, "statusHash", hash)
	w.mu.Lock()
	if w.bundles[bundleID] == t && t.version == version {
		t.sentHash = hash
	}
	w.mu.Unlock()
	return done()
}

// refusal remembers that an informer's list or watch was refused as forbidden, until it fails otherwise.
type refusal struct {
	err atomic.Pointer[error]
}

// record is the informer's watch error handler: it logs as the default one does.
func (r *refusal) record(ctx context.Context, reflector *cache.Reflector, err error) {
	if apierrors.IsForbidden(err) {
		r.err.Store(&err)
	} else {
		r.err.Store(nil)
	}
	cache.DefaultWatchErrorHandler(ctx, reflector, err)
}

// get is the refusal, nil if there is none.
func (r *refusal) get() error {
	if r == nil {
		return nil
	}
	if err := r.err.Load(); err != nil {
		return *err
	}
	return nil
}

// newRefusal remembers the refusals of informer, which must not have started.
func newRefusal(informer cache.SharedIndexInformer) *refusal {
	r := &refusal{}
	if err := informer.SetWatchErrorHandlerWithContext(r.record); err != nil {
		utilruntime.HandleError(err)
	}
	return r
}

// cachedObject is the object of m in the source's informer, nil when it holds none.
func cachedObject(s source, m protocol.ManifestResourceMeta) *unstructured.Unstructured {
	item, exists, err := s.informer.GetStore().GetByKey(cache.NewObjectName(m.Namespace, m.Name).String())
	if err != nil || !exists {
		return nil
	}
	obj, _ := item.(*unstructured.Unstructured)
	return obj
}

// readObjects reads the object of each applied manifest once, for BuildStatus, and names what it read:
// the objects' UIDs and resource versions, or why there is none.
func readObjects(applied []AppliedResource, get ObjectGetter) (objectsRead, string) {
	read := objectsRead{}
	var names strings.Builder
	for _, r := range applied {
		obj, err := get(r.Meta)
		read[r.Meta] = objectRead{obj, err}
		switch {
		case err != nil:
			names.WriteString("error;")
		case obj == nil:
			names.WriteString("none;")
		default:
			names.WriteString(string(obj.GetUID()) + "@" + obj.GetResourceVersion() + ";")
		}
	}
	return read, names.String()
}

type objectRead struct {
	obj *unstructured.Unstructured
	err error
}

type objectsRead map[protocol.ManifestResourceMeta]objectRead

func (o objectsRead) get(m protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
	return o[m].obj, o[m].err
}

// seenWrite says whether an informer has caught up with an object as a write returned it: its store holds
// that object at that resource version or a later one, or its handlers have seen a later event of the
// resource (handled), so that an object it lacks was deleted since. Resource versions that do not
// compare leave it to the informer.
func seenWrite(handled string, cached, written *unstructured.Unstructured) bool {
	if cached != nil && cached.GetUID() == written.GetUID() {
		if c, err := resourceversion.CompareResourceVersion(cached.GetResourceVersion(), written.GetResourceVersion()); err != nil || c >= 0 {
			return true
		}
	}
	c, err := resourceversion.CompareResourceVersion(handled, written.GetResourceVersion())
	return err != nil || c >= 0
}

// source is where a manifest's object is seen: owned objects among all the labelled ones of their resource.
type source struct {
	informer cache.SharedIndexInformer
	refusal  *refusal
	owned    bool
	// handled is the ownedResource's, when the status is built.
	handled string
}

func (w *Watcher) sourcesLocked(applied []AppliedResource) map[protocol.ManifestResourceMeta]source {
	sources := map[protocol.ManifestResourceMeta]source{}
	for _, r := range applied {
		switch {
		case !watched(r):
		case r.Owned:
			owned := w.watchOwnedLocked(gvrOf(r.Meta))
			sources[r.Meta] = source{informer: owned.informer, refusal: owned.refusal, owned: true, handled: owned.handled}
		case w.named[refOf(r.Meta)] != nil:
			n := w.named[refOf(r.Meta)]
			sources[r.Meta] = source{informer: n.informer, refusal: n.refusal}
		}
	}
	return sources
}

// cachedOwned returns, from the informers, the object of a resource that some bundle owns (labelled
// BundleLabel), nil if none of that name is; ok is false while the resource's informer has not listed
// its objects yet, which this call starts if needed. It is how the Applier reads before it applies
// without a request to the management cluster.
func (w *Watcher) cachedOwned(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, ok bool) {
	w.mu.Lock()
	informer := w.watchOwnedLocked(gvr).informer
	w.mu.Unlock()
	if !informer.HasSynced() {
		return nil, false
	}
	item, exists, err := informer.GetStore().GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil {
		return nil, false
	}
	if !exists {
		return nil, true
	}
	return item.(*unstructured.Unstructured), true
}

// holdsObjectsOf says whether the informers hold an object labelled as bundleID's among resources; known is
// false while one of them has not listed its objects yet (this call starts those not running). It lets a
// bundle waiting for its objects to go be checked without a request to the management cluster.
func (w *Watcher) holdsObjectsOf(bundleID string, resources []schema.GroupVersionResource) (holds, known bool) {
	for _, informer := range w.ownedInformers(resources) {
		if !informer.HasSynced() {
			return false, false
		}
		objs, err := informer.GetIndexer().ByIndex(bundleIndex, bundleID)
		if err != nil {
			return false, false
		}
		if len(objs) > 0 {
			return true, true
		}
	}
	return false, true
}

// waitOwnedListed waits until the informers of resources have listed their objects; false if ctx ends first.
func (w *Watcher) waitOwnedListed(ctx context.Context, resources []schema.GroupVersionResource) bool {
	var synced []cache.InformerSynced
	for _, informer := range w.ownedInformers(resources) {
		synced = append(synced, informer.HasSynced)
	}
	return cache.WaitForCacheSync(ctx.Done(), synced...)
}

// ownedInformers returns the informers on the labelled objects of resources, started if they were not.
func (w *Watcher) ownedInformers(resources []schema.GroupVersionResource) []cache.SharedIndexInformer {
	w.mu.Lock()
	defer w.mu.Unlock()
	informers := make([]cache.SharedIndexInformer, 0, len(resources))
	for _, gvr := range resources {
		informers = append(informers, w.watchOwnedLocked(gvr).informer)
	}
	return informers
}

// bundleIndex indexes the labelled objects by the bundle they belong to.
const bundleIndex = "bundle"

func indexByBundle(obj any) ([]string, error) {
	if u := asUnstructured(obj); u != nil {
		if id := bundleOf(u); id != "" {
			return []string{id}, nil
		}
	}
	return nil, nil
}

// watchOwnedLocked makes sure the labelled objects of a resource are watched.
func (w *Watcher) watchOwnedLocked(gvr schema.GroupVersionResource) *ownedResource {
	if r := w.ownedResources[gvr]; r != nil {
		return r
	}
	informer := w.owned.ForResource(gvr).Informer()
	r := &ownedResource{informer: informer, refusal: newRefusal(informer)}
	if err := r.informer.AddIndexers(cache.Indexers{bundleIndex: indexByBundle}); err != nil {
		utilruntime.HandleError(err)
		return r
	}
	enqueue := func(obj any) {
		u := asUnstructured(obj)
		if u == nil {
			return
		}
		handled := u.GetResourceVersion()
		if _, unknown := obj.(cache.DeletedFinalStateUnknown); unknown {
			// Found gone by a new list, which the store now holds.
			handled = r.informer.LastSyncResourceVersion()
		}
		w.mu.Lock()
		if c, err := resourceversion.CompareResourceVersion(handled, r.handled); err == nil && c > 0 || r.handled == "" {
			r.handled = handled
		}
		w.mu.Unlock()
		w.enqueueTracked(bundleOf(u))
	}
	_, err := r.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(old, obj any) { enqueue(old); enqueue(obj) },
		DeleteFunc: func(obj any) {
			enqueue(obj)
			// An object that loses the label leaves the selection: the watch reports it deleted too.
			if u := asUnstructured(obj); u != nil && w.onOwnedGone != nil {
				w.onOwnedGone(bundleOf(u))
			}
		},
	})
	if err != nil {
		utilruntime.HandleError(err)
		return r
	}
	w.ownedResources[gvr] = r
	if w.ctx != nil {
		w.owned.Start(w.ctx.Done())
	}
	return r
}

// watchNamedLocked makes sure one object the agent does not own is watched for bundleID.
func (w *Watcher) watchNamedLocked(ref objectRef, bundleID string) {
	if n := w.named[ref]; n != nil {
		n.bundles.Insert(bundleID)
		return
	}
	n := &namedInformer{bundles: sets.New(bundleID)}
	n.informer = dynamicinformer.NewFilteredDynamicInformer(w.client, ref.gvr, ref.namespace, 0, cache.Indexers{},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.name).String()
		}).Informer()
	n.refusal = newRefusal(n.informer)
	enqueue := func(any) {
		w.mu.Lock()
		bundles := n.bundles.UnsortedList()
		w.mu.Unlock()
		for _, id := range bundles {
			w.queue.Add(id)
		}
	}
	_, err := n.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	w.named[ref] = n
	if w.ctx != nil {
		w.startNamedLocked(n)
	}
}

// releaseNamedLocked stops watching for bundleID the objects not in keep, and stops the informers no
// bundle needs anymore.
func (w *Watcher) releaseNamedLocked(bundleID string, keep sets.Set[objectRef]) {
	for ref, n := range w.named {
		if keep.Has(ref) || !n.bundles.Has(bundleID) {
			continue
		}
		n.bundles.Delete(bundleID)
		if n.bundles.Len() == 0 {
			if n.cancel != nil {
				n.cancel()
			}
			delete(w.named, ref)
		}
	}
}

func (w *Watcher) startNamedLocked(n *namedInformer) {
	if n.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(w.ctx)
	n.cancel = cancel
	go n.informer.RunWithContext(ctx)
}

func (w *Watcher) enqueueTracked(bundleID string) {
	if bundleID == "" {
		return
	}
	w.mu.Lock()
	_, tracked := w.bundles[bundleID]
	w.mu.Unlock()
	if tracked {
		w.queue.Add(bundleID)
	}
}

func asUnstructured(obj any) *unstructured.Unstructured {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// watched says whether the object of an applied manifest is watched for its status: not when it maps to
// no resource, when its status is what the apply read (an inspection), nor when nothing of it may be
// read (a refused inspection).
func watched(r AppliedResource) bool {
	return r.Meta.Resource != "" && r.Inspection == nil && !r.Refused
}

func refOf(m protocol.ManifestResourceMeta) objectRef {
	return objectRef{gvr: gvrOf(m), namespace: m.Namespace, name: m.Name}
}
