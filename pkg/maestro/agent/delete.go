package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// orphanPatch takes the bundle's label and generation off an object, which is how the agent lets go of it.
var orphanPatch = fmt.Appendf(nil, `{"metadata":{"labels":{%q:null},"annotations":{%q:null}}}`, BundleLabel, GenerationAnnotation)

// Delete deletes the objects of the bundle bundleID: every object labelled as the bundle's, among the
// resources of the bundle's manifests and those this process applied the bundle to, so that objects a
// later generation no longer lists are found too, also after a restart. bundle is the newest spec known;
// it may be nil, as a delete_request carries no manifests.
//
// The bundle's delete option says how, with OCM's meaning: Foreground (the default) deletes each object
// with foreground propagation, so it is gone only once its dependents are; Orphan leaves every object in
// place and takes the bundle's label off; SelectivelyOrphan orphans the objects its rules name and
// deletes the others. Objects of ReadOnly manifests are never deleted, only let go of. Delete returns once
// the deletes are accepted; Gone tells whether the objects are gone.
func (a *Applier) Delete(ctx context.Context, bundleID string, bundle *protocol.ManifestBundle) error {
	if err := validateBundleID(bundleID); err != nil {
		return err
	}
	resources, err := a.resourcesOf(ctx, bundleID, bundle)
	if err != nil {
		return err
	}
	keep := keptByDelete(bundle)
	var errs []error
	for _, gvr := range resources {
		list, err := a.client.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: bundleSelector(bundleID)})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing the %s of bundle %s: %w", gvr.Resource, bundleID, err))
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if obj.GetDeletionTimestamp() != nil {
				continue
			}
			id := protocol.ResourceIdentifier{Group: gvr.Group, Resource: gvr.Resource, Name: obj.GetName(), Namespace: obj.GetNamespace()}
			if err := a.deleteObject(ctx, gvr, obj, keep(id)); err != nil {
				errs = append(errs, fmt.Errorf("deleting %s %s of bundle %s: %w", gvr.Resource, klog.KObj(obj), bundleID, err))
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// deleteObject deletes obj in the foreground, or orphans it: takes the bundle's marks off and leaves it.
func (a *Applier) deleteObject(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, orphan bool) error {
	logger := klog.FromContext(ctx)
	resource := a.client.Resource(gvr).Namespace(obj.GetNamespace())
	var err error
	if orphan {
		_, err = resource.Patch(ctx, obj.GetName(), types.MergePatchType, orphanPatch, metav1.PatchOptions{FieldManager: FieldManager})
	} else {
		uid, foreground := obj.GetUID(), metav1.DeletePropagationForeground
		// The UID precondition keeps the delete off an object recreated meanwhile.
		err = resource.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &uid}})
	}
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone or replaced already: nothing of the bundle's is left to delete.
		return nil
	case err != nil:
		return err
	}
	logger.V(2).Info("Deleted bundle object", "resource", gvr.Resource, "object", klog.KObj(obj), "orphaned", orphan)
	return nil
}

// Gone says whether no object labelled as the bundle's is left (see Delete for where it looks).
func (a *Applier) Gone(ctx context.Context, bundleID string, bundle *protocol.ManifestBundle) (bool, error) {
	resources, err := a.resourcesOf(ctx, bundleID, bundle)
	if err != nil {
		return false, err
	}
	for _, gvr := range resources {
		list, err := a.client.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: bundleSelector(bundleID), Limit: 1})
		if err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// Forget drops what this process remembers of a bundle, once it is deleted and gone.
func (a *Applier) Forget(bundleID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.bundles, bundleID)
}

// resourcesOf returns the resources where the bundle's objects may be: those of its manifests, last
// first (a namespace after what is in it), then those this process remembers.
func (a *Applier) resourcesOf(ctx context.Context, bundleID string, bundle *protocol.ManifestBundle) ([]schema.GroupVersionResource, error) {
	var resources []schema.GroupVersionResource
	for _, m := range slices.Backward(decodeManifests(ctx, a.mapper, bundle)) {
		switch {
		case !m.gvr.Empty():
			resources = append(resources, m.gvr)
		case m.object != nil && m.meta.Name != "" && !meta.IsNoMatchError(m.err):
			// Discovery failed: looking elsewhere only would miss objects. A kind the cluster does not
			// serve has no objects to find.
			return nil, m.err
		}
	}
	a.mu.Lock()
	if r := a.bundles[bundleID]; r != nil {
		remembered := r.resources.UnsortedList()
		slices.SortFunc(remembered, func(x, y schema.GroupVersionResource) int {
			return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Resource, y.Resource), cmp.Compare(x.Version, y.Version))
		})
		resources = append(resources, remembered...)
	}
	a.mu.Unlock()
	return uniqueGVRs(resources), nil
}

// keptByDelete returns which objects a delete of bundle orphans instead of deleting.
func keptByDelete(bundle *protocol.ManifestBundle) func(protocol.ResourceIdentifier) bool {
	if bundle == nil {
		return func(protocol.ResourceIdentifier) bool { return false }
	}
	var keep []protocol.ResourceIdentifier
	for _, c := range bundle.ManifestConfigs {
		if c.UpdateStrategy != nil && c.UpdateStrategy.Type == protocol.UpdateStrategyReadOnly {
			keep = append(keep, c.ResourceIdentifier)
		}
	}
	policy := protocol.DeletePropagationForeground
	if opt := bundle.DeleteOption; opt != nil && opt.PropagationPolicy != "" {
		policy = opt.PropagationPolicy
		if policy == protocol.DeletePropagationSelectivelyOrphan && opt.SelectivelyOrphan != nil {
			keep = append(keep, opt.SelectivelyOrphan.OrphaningRules...)
		}
	}
	return func(id protocol.ResourceIdentifier) bool {
		return policy == protocol.DeletePropagationOrphan || slices.Contains(keep, id)
	}
}

func uniqueGVRs(gvrs []schema.GroupVersionResource) []schema.GroupVersionResource {
	seen := map[schema.GroupVersionResource]bool{}
	var unique []schema.GroupVersionResource
	for _, gvr := range gvrs {
		if !seen[gvr] {
			seen[gvr] = true
			unique = append(unique, gvr)
		}
	}
	return unique
}
