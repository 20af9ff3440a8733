package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Applier writes the manifests of bundles to the management cluster and deletes them again. It is safe for
// concurrent use by several bundles; the caller applies and deletes one bundle at a time.
type Applier struct {
	client dynamic.Interface
	// metadata is the client server-side applies go through: it reads the answer as the object's metadata,
	// in protobuf, where the dynamic client decodes the whole object from JSON (a HostedCluster's managed
	// fields included), which was a fifth of the agent's CPU per bundle. The watch brings the rest.
	metadata metadata.Interface
	mapper   *restMapper
	// inspector reads the views of inspection bundles.
	inspector *inspector
	// cached, when set, answers the read before a server-side apply from the agent's informers; the
	// management cluster is asked only while they have not synced.
	cached func(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool)

	mu sync.Mutex
	// bundles remembers what this process applied per bundle: the newest generation, and every resource the
	// bundle wrote to, so that Delete also looks at kinds a later generation dropped.
	bundles map[string]*bundleRecord
}

type bundleRecord struct {
	generation int64
	resources  sets.Set[schema.GroupVersionResource]
}

// AppliedResource is what Apply did with one manifest.
type AppliedResource struct {
	Meta protocol.ManifestResourceMeta
	// Strategy is how the manifest was written.
	Strategy protocol.UpdateStrategyType
	// Owned says the object is (or, once written, will be) labelled as this bundle's: the agent watches it
	// by that label and deletes it with the bundle. ReadOnly objects, and CreateOnly objects that already
	// existed, are not owned.
	Owned bool
	// Object is the object after the apply, as the server returned it; nil when it does not exist or the
	// apply failed. After a server-side apply it holds the object's apiVersion, kind and metadata only,
	// without its managed fields (MetadataOnly).
	Object *unstructured.Unstructured
	// MetadataOnly says Object has nothing but the object's apiVersion, kind and metadata.
	MetadataOnly bool
	// Err is why the manifest was not applied; nil when it was.
	Err error
	// Inspection is the answer to the manifest's Inspection rule, read by this apply; nil for a manifest
	// without one. An inspected object is not watched: its status is what the apply read, so that an
	// inspection costs one read per generation, whatever the object does meanwhile.
	Inspection *protocol.FeedbackValue
	// Refused says that the inspection bundle was refused whole (Err says why): nothing of it was read.
	Refused bool
}

// StaleGenerationError is returned by Apply for a bundle generation older than one already applied; such
// a spec is dropped, not retried.
type StaleGenerationError struct {
	BundleID   string
	Generation int64
	// Applied is the newer generation already applied, found on Object (empty when this process
	// remembered it).
	Applied int64
	Object  string
}

func (e *StaleGenerationError) Error() string {
	where := "by this agent"
	if e.Object != "" {
		where = "to " + e.Object
	}
	return fmt.Sprintf("bundle %s generation %d is older than generation %d already applied %s; not applied",
		e.BundleID, e.Generation, e.Applied, where)
}

// IsStaleGeneration says whether err refuses an old generation.
func IsStaleGeneration(err error) bool {
	var stale *StaleGenerationError
	return errors.As(err, &stale)
}

// NewApplier returns an Applier for the cluster that cfg reaches.
func NewApplier(cfg *rest.Config) (*Applier, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Applier{client: client, metadata: meta, mapper: newRESTMapper(disco), inspector: &inspector{kube: kube, dynamic: client},
		bundles: map[string]*bundleRecord{}}, nil
}

// Apply writes the manifests of generation of the bundle bundleID, in order, each by its update strategy
// (ServerSideApply unless its manifest config says otherwise). It returns what happened to each manifest,
// and an error joining the manifests' errors, so that the caller retries with backoff. A generation older
// than one already applied is refused as a whole, before anything is written, with a StaleGenerationError.
//
// An inspection bundle (protocol.ManifestBundle.IsInspection) only reads: Apply refuses it whole, before
// anything is read, with an InspectionRefusedError and every manifest Refused, unless every manifest is
// ReadOnly and the object its view reads around; else it reads each manifest's view into its Inspection.
// A view that cannot be read is answered with its error, not failed.
func (a *Applier) Apply(ctx context.Context, bundleID string, generation int64, bundle *protocol.ManifestBundle) ([]AppliedResource, error) {
	if err := validateBundleID(bundleID); err != nil {
		return nil, err
	}
	if bundle == nil {
		return nil, fmt.Errorf("bundle %s generation %d has no manifests to apply", bundleID, generation)
	}
	if last := a.lastGeneration(bundleID); generation < last {
		return nil, &StaleGenerationError{BundleID: bundleID, Generation: generation, Applied: last}
	}

	manifests := decodeManifests(ctx, a.mapper, bundle)
	var views []protocol.InspectionView
	if bundle.IsInspection() {
		var err error
		if views, err = checkInspection(bundle, manifests); err != nil {
			var refused *InspectionRefusedError
			if errors.As(err, &refused) {
				inspectionsRefused.WithLabelValues(refused.Rule).Inc()
			}
			return refusedResults(manifests, err), err
		}
	}
	results := make([]AppliedResource, len(manifests))
	strategies := make([]strategy, len(manifests))
	existing := make([]*unstructured.Unstructured, len(manifests))
	// Read everything first: one object holding a newer generation refuses the whole bundle before
	// anything is written.
	for i, m := range manifests {
		results[i].Meta = m.meta
		if m.err != nil {
			results[i].Err = m.err
			continue
		}
		st, err := strategyOf(configFor(bundle.ManifestConfigs, m.meta))
		if err != nil {
			results[i].Err = fmt.Errorf("%s: %w", describeMeta(m.meta), err)
			continue
		}
		strategies[i], results[i].Strategy = st, st.typ
		if views != nil {
			existing[i], results[i].Inspection = a.inspect(ctx, m, views[i])
			continue
		}
		obj, err := a.read(ctx, m, st)
		if err != nil {
			results[i].Err = fmt.Errorf("reading %s: %w", describeMeta(m.meta), err)
			continue
		}
		if err := checkGeneration(obj, bundleID, generation, m.meta); err != nil {
			return nil, err
		}
		existing[i] = obj
	}
	a.remember(bundleID, generation, manifests)

	logger := klog.FromContext(ctx).WithValues("bundle", bundleID, "generation", generation)
	var errs []error
	for i, m := range manifests {
		r := &results[i]
		if r.Err == nil {
			r.Object, r.Owned, r.Err = a.write(ctx, bundleID, generation, m, strategies[i], existing[i])
			r.MetadataOnly = r.Err == nil && r.Strategy == protocol.UpdateStrategyServerSideApply
		}
		if r.Err != nil {
			if IsStaleGeneration(r.Err) {
				return nil, r.Err
			}
			errs = append(errs, r.Err)
			continue
		}
		logger.V(4).Info("Applied manifest", "manifest", describeMeta(m.meta), "strategy", r.Strategy)
	}
	return results, utilerrors.NewAggregate(errs)
}

// checkGeneration refuses to write generation over an object that a newer generation of the same bundle wrote.
func checkGeneration(obj *unstructured.Unstructured, bundleID string, generation int64, m protocol.ManifestResourceMeta) error {
	if obj == nil || bundleOf(obj) != bundleID {
		return nil
	}
	if applied := generationOf(obj); applied > generation {
		return &StaleGenerationError{BundleID: bundleID, Generation: generation, Applied: applied, Object: describeMeta(m)}
	}
	return nil
}

// write writes one manifest by its strategy; existing is the object as read before, nil if missing.
func (a *Applier) write(ctx context.Context, bundleID string, generation int64, m manifest, st strategy,
	existing *unstructured.Unstructured) (obj *unstructured.Unstructured, owned bool, err error) {
	if existing != nil && st.overwrites() {
		// Two bundles writing one object would undo each other forever; make the clash visible instead.
		if other := bundleOf(existing); other != "" && other != bundleID {
			return nil, false, fmt.Errorf("%s belongs to bundle %s; bundle %s does not take it over", describeMeta(m.meta), other, bundleID)
		}
	}
	var desired *unstructured.Unstructured
	if st.typ == protocol.UpdateStrategyServerSideApply {
		// The apply sends the manifest as it came with the marked metadata (applyBody): only the head is
		// copied, to be marked.
		desired = &unstructured.Unstructured{Object: maps.Clone(m.object.Object)}
		desired.Object["metadata"] = runtime.DeepCopyJSONValue(m.object.Object["metadata"])
	} else if desired, err = m.wholeObject(); err != nil {
		return nil, false, fmt.Errorf("decoding %s: %w", describeMeta(m.meta), err)
	}
	markOwned(desired, bundleID, generation)
	resource := a.resource(m)

	switch st.typ {
	case protocol.UpdateStrategyServerSideApply:
		obj, err = a.apply(ctx, m, desired, st)
		owned = true
	case protocol.UpdateStrategyUpdate:
		obj, err = update(ctx, resource, desired, existing, bundleID, generation, m.meta)
		owned = true
	case protocol.UpdateStrategyCreateOnly:
		obj = existing
		if obj == nil {
			obj, err = resource.Create(ctx, desired, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) {
				obj, err = resource.Get(ctx, desired.GetName(), metav1.GetOptions{})
			}
		}
		owned = obj != nil && bundleOf(obj) == bundleID
	case protocol.UpdateStrategyReadOnly:
		obj = existing
	}
	if err != nil {
		return nil, owned, fmt.Errorf("applying %s (%s): %w", describeMeta(m.meta), st.typ, err)
	}
	return obj, owned, nil
}

// update replaces the object with desired, or creates it, retrying on conflicts with a fresh read.
func update(ctx context.Context, resource dynamic.ResourceInterface, desired, existing *unstructured.Unstructured,
	bundleID string, generation int64, m protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
	var result *unstructured.Unstructured
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	current, fresh := existing, true
	err := retry.OnError(retry.DefaultRetry, retriable, func() error {
		if !fresh {
			obj, err := resource.Get(ctx, desired.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				current = nil
			case err != nil:
				return err
			default:
				current = obj
			}
			if err := checkGeneration(current, bundleID, generation, m); err != nil {
				return err
			}
		}
		fresh = false
		var err error
		if current == nil {
			result, err = resource.Create(ctx, desired, metav1.CreateOptions{FieldManager: FieldManager})
		} else {
			result, err = resource.Update(ctx, mergeForUpdate(desired, current), metav1.UpdateOptions{FieldManager: FieldManager})
		}
		return err
	})
	return result, err
}

// mergeForUpdate returns desired as an update of existing: what the manifest does not say about metadata
// (other labels and annotations, finalizers, owner references) and the status are kept, so that an
// update does not undo what controllers on the cluster added.
func mergeForUpdate(desired, existing *unstructured.Unstructured) *unstructured.Unstructured {
	obj := desired.DeepCopy()
	obj.SetResourceVersion(existing.GetResourceVersion())
	labels := maps.Clone(existing.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, desired.GetLabels())
	obj.SetLabels(labels)
	annotations := maps.Clone(existing.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, desired.GetAnnotations())
	obj.SetAnnotations(annotations)
	if len(obj.GetFinalizers()) == 0 {
		obj.SetFinalizers(existing.GetFinalizers())
	}
	if len(obj.GetOwnerReferences()) == 0 {
		obj.SetOwnerReferences(existing.GetOwnerReferences())
	}
	if status, ok := existing.Object["status"]; ok {
		if _, set := obj.Object["status"]; !set {
			obj.Object["status"] = status
		}
	}
	return obj
}

// read returns what an apply needs to know of the object a manifest names before writing it. A
// server-side apply needs only the bundle marks of an object it overwrites, to refuse an older generation
// and another bundle's object, and the informers hold every marked object: a missing object and an
// unmarked one are alike to it. The other strategies need the object as it is, and get it.
func (a *Applier) read(ctx context.Context, m manifest, st strategy) (*unstructured.Unstructured, error) {
	if st.typ == protocol.UpdateStrategyServerSideApply && a.cached != nil {
		if obj, ok := a.cached(m.gvr, m.meta.Namespace, m.object.GetName()); ok {
			return obj, nil
		}
	}
	return a.get(ctx, m)
}

// get reads the object a manifest names; nil if it does not exist.
func (a *Applier) get(ctx context.Context, m manifest) (*unstructured.Unstructured, error) {
	obj, err := a.resource(m).Get(ctx, m.object.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// apply server-side applies desired as the dynamic client does, and returns the object's apiVersion, kind
// and metadata from the answer.
func (a *Applier) apply(ctx context.Context, m manifest, desired *unstructured.Unstructured, st strategy) (*unstructured.Unstructured, error) {
	metadata, _ := desired.Object["metadata"].(map[string]any)
	body, err := m.applyBody(metadata)
	if err != nil {
		return nil, err
	}
	answer, err := a.metadata.Resource(m.gvr).Namespace(m.meta.Namespace).Patch(ctx, desired.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: st.fieldManager, Force: &st.force})
	if err != nil {
		return nil, err
	}
	// Nothing reads the answer's managed fields, and they are most of what converting it costs (each
	// entry's field set is marshalled to JSON and read back).
	answer.ManagedFields = nil
	objectMeta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&answer.ObjectMeta)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": desired.GetAPIVersion(), "kind": desired.GetKind(), "metadata": objectMeta}}, nil
}

func (a *Applier) resource(m manifest) dynamic.ResourceInterface {
	return a.client.Resource(m.gvr).Namespace(m.meta.Namespace)
}

func (a *Applier) lastGeneration(bundleID string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.bundles[bundleID]; r != nil {
		return r.generation
	}
	return 0
}

func (a *Applier) remember(bundleID string, generation int64, manifests []manifest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.bundles[bundleID]
	if r == nil {
		r = &bundleRecord{resources: sets.New[schema.GroupVersionResource]()}
		a.bundles[bundleID] = r
	}
	r.generation = max(r.generation, generation)
	for _, m := range manifests {
		if !m.gvr.Empty() {
			r.resources.Insert(m.gvr)
		}
	}
}

// strategy is how one manifest is written.
type strategy struct {
	typ          protocol.UpdateStrategyType
	fieldManager string
	force        bool
}

// strategyOf resolves a manifest's update strategy: server-side apply by FieldManager with force unless
// the manifest config says otherwise.
func strategyOf(cfg *protocol.ManifestConfigOption) (strategy, error) {
	st := strategy{typ: protocol.UpdateStrategyServerSideApply, fieldManager: FieldManager, force: true}
	if cfg == nil || cfg.UpdateStrategy == nil {
		return st, nil
	}
	switch t := cfg.UpdateStrategy.Type; t {
	case "", protocol.UpdateStrategyServerSideApply:
		if ssa := cfg.UpdateStrategy.ServerSideApply; ssa != nil {
			st.force = ssa.Force
			if ssa.FieldManager != "" {
				st.fieldManager = ssa.FieldManager
			}
		}
	case protocol.UpdateStrategyUpdate, protocol.UpdateStrategyCreateOnly, protocol.UpdateStrategyReadOnly:
		st.typ = t
	default:
		return st, fmt.Errorf("unknown update strategy %q: use ServerSideApply, Update, CreateOnly or ReadOnly", t)
	}
	return st, nil
}

// overwrites says whether the strategy writes over an object that exists.
func (s strategy) overwrites() bool {
	return s.typ == protocol.UpdateStrategyServerSideApply || s.typ == protocol.UpdateStrategyUpdate
}
