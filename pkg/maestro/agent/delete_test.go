package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

func testForegroundDelete(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-foreground"
	createNamespace(t, mc, ns)
	id := newBundleID()
	if _, err := newApplier(t, mc).Apply(ctx, id, 1, newBundle(t, configMap(ns, "kept-in-bundle", nil), configMap(ns, "leftover", nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Dynamic.Resource(configMaps).Namespace(ns).Create(ctx, configMap(ns, "not-ours", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A restarted agent deletes generation 2, which no longer lists "leftover": the label finds it.
	a := newApplier(t, mc)
	generation2 := newBundle(t, configMap(ns, "kept-in-bundle", nil))
	if err := a.Delete(ctx, id, generation2); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, name := range []string{"kept-in-bundle", "leftover"} {
		obj := get(t, mc, configMaps, ns, name)
		if obj.GetDeletionTimestamp() == nil || !slices.Contains(obj.GetFinalizers(), "foregroundDeletion") {
			t.Errorf("%s was not deleted in the foreground: deletionTimestamp %v, finalizers %v", name, obj.GetDeletionTimestamp(), obj.GetFinalizers())
		}
	}
	if get(t, mc, configMaps, ns, "not-ours").GetDeletionTimestamp() != nil {
		t.Error("Delete deleted an object without the bundle's label")
	}
	if gone, err := a.Gone(ctx, id, generation2); err != nil || gone {
		t.Errorf("Gone = %v, %v while the objects wait for their dependents", gone, err)
	}

	// The agent waits on its informers, not on requests: they hold the objects until the last is gone, and
	// tell of each that goes.
	w, gone := goneWatcher(t, mc)
	resources, err := a.resourcesOf(ctx, id, generation2)
	if err != nil {
		t.Fatal(err)
	}
	waitHolds(t, w, id, resources, true)
	removeFinalizers(t, mc, configMaps, ns, "kept-in-bundle")
	waitGoneEvent(t, gone, id)
	waitHolds(t, w, id, resources, true)
	removeFinalizers(t, mc, configMaps, ns, "leftover")
	waitGoneEvent(t, gone, id)
	waitHolds(t, w, id, resources, false)
	if gone, err := a.Gone(ctx, id, generation2); err != nil || !gone {
		t.Errorf("Gone = %v, %v once the objects are gone", gone, err)
	}

	// A bundle deleted when the delete_request carries no manifests: what this process applied is found.
	id = newBundleID()
	if _, err := a.Apply(ctx, id, 1, newBundle(t, configMap(ns, "remembered", nil))); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	if get(t, mc, configMaps, ns, "remembered").GetDeletionTimestamp() == nil {
		t.Error("Delete without manifests missed an object this agent applied")
	}
}

func testOrphanDelete(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-orphan"
	createNamespace(t, mc, ns)
	a := newApplier(t, mc)

	id := newBundleID()
	bundle := newBundle(t, configMap(ns, "owner", nil))
	applied, err := a.Apply(ctx, id, 1, bundle)
	if err != nil {
		t.Fatal(err)
	}
	// A dependent of the bundle's object, as a controller on the cluster would make one.
	dependent := configMap(ns, "dependent", nil)
	dependent.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: applied[0].Object.GetUID()}})
	if _, err := mc.Dynamic.Resource(configMaps).Namespace(ns).Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bundle.DeleteOption = &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}
	if err := a.Delete(ctx, id, bundle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, name := range []string{"owner", "dependent"} {
		obj := get(t, mc, configMaps, ns, name)
		if obj.GetDeletionTimestamp() != nil {
			t.Errorf("Orphan deleted %s", name)
		}
		if obj.GetLabels()[BundleLabel] != "" || obj.GetAnnotations()[GenerationAnnotation] != "" {
			t.Errorf("%s still carries the bundle's marks: %v %v", name, obj.GetLabels(), obj.GetAnnotations())
		}
	}
	// Let go of, the objects are no longer the bundle's: the informers hold none of them.
	w, _ := goneWatcher(t, mc)
	waitHolds(t, w, id, []schema.GroupVersionResource{configMaps}, false)
	if gone, err := a.Gone(ctx, id, bundle); err != nil || !gone {
		t.Errorf("Gone after Orphan = %v, %v", gone, err)
	}

	// SelectivelyOrphan keeps what its rules name and deletes the rest.
	id = newBundleID()
	bundle = newBundle(t, configMap(ns, "selected", nil), configMap(ns, "not-selected", nil))
	if _, err := a.Apply(ctx, id, 1, bundle); err != nil {
		t.Fatal(err)
	}
	bundle.DeleteOption = &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationSelectivelyOrphan,
		SelectivelyOrphan: &protocol.SelectivelyOrphan{OrphaningRules: []protocol.ResourceIdentifier{{Resource: "configmaps", Name: "selected", Namespace: ns}}}}
	if err := a.Delete(ctx, id, bundle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if obj := get(t, mc, configMaps, ns, "selected"); obj.GetDeletionTimestamp() != nil || obj.GetLabels()[BundleLabel] != "" {
		t.Errorf("the orphaned object was deleted or kept the label: %v", obj.Object["metadata"])
	}
	if obj := get(t, mc, configMaps, ns, "not-selected"); obj.GetDeletionTimestamp() == nil {
		t.Error("SelectivelyOrphan did not delete the object its rules do not name")
	}
}

// goneWatcher runs a Watcher and returns it with the bundles its informers say lost an object.
func goneWatcher(t *testing.T, mc *framework.ManagementCluster) (*Watcher, <-chan string) {
	t.Helper()
	w, err := NewWatcher(mc.Config, func(context.Context, string, int64, *protocol.ManifestBundleStatus, string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan string, 100)
	w.onOwnedGone = func(id string) { gone <- id }
	go w.Run(testContext(t), 1)
	return w, gone
}

// waitHolds waits until the Watcher's informers have listed and say whether they hold an object of bundle id.
func waitHolds(t *testing.T, w *Watcher, id string, resources []schema.GroupVersionResource, want bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		holds, known := w.holdsObjectsOf(id, resources)
		if known && holds == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informers say they hold objects of the bundle: %v (listed: %v); want %v", holds, known, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGoneEvent waits for the informers to tell that an object of bundle id went.
func waitGoneEvent(t *testing.T, gone <-chan string, id string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-gone:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatal("no deletion of the bundle's objects was told 30s after one went")
		}
	}
}
