package agent

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

func testServerSideApply(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-ssa"
	id := newBundleID()
	objs := append(hostedClusterManifests(t, ns), configMap(ns, "settings", map[string]any{"mode": "one"}))
	bundle := newBundle(t, objs...)
	a := newApplier(t, mc)

	applied, err := a.Apply(ctx, id, 1, bundle)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	wantMeta := []protocol.ManifestResourceMeta{
		{Ordinal: 0, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: ns},
		{Ordinal: 1, Version: "v1", Kind: "Secret", Resource: "secrets", Name: "pull-secret", Namespace: ns},
		{Ordinal: 2, Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster", Resource: "hostedclusters", Name: "mycluster", Namespace: ns},
		{Ordinal: 3, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "settings", Namespace: ns},
	}
	if len(applied) != len(wantMeta) {
		t.Fatalf("Apply returned %d results for %d manifests", len(applied), len(wantMeta))
	}
	versions := map[string]string{}
	for i, r := range applied {
		if r.Meta != wantMeta[i] {
			t.Errorf("manifest %d: resource meta %+v, want %+v", i, r.Meta, wantMeta[i])
		}
		if r.Err != nil || !r.Owned || r.Strategy != protocol.UpdateStrategyServerSideApply || r.Object == nil {
			t.Errorf("manifest %d: %+v, want owned, applied server-side, no error", i, r)
			continue
		}
		obj := get(t, mc, gvrOf(r.Meta), r.Meta.Namespace, r.Meta.Name)
		if obj.GetLabels()[BundleLabel] != id || obj.GetAnnotations()[GenerationAnnotation] != "1" {
			t.Errorf("%s is not marked as generation 1 of bundle %s: labels %v, annotations %v", describeMeta(r.Meta), id, obj.GetLabels(), obj.GetAnnotations())
		}
		if !appliedBy(obj, FieldManager) {
			t.Errorf("%s has no server-side apply entry of %s in its managed fields", describeMeta(r.Meta), FieldManager)
		}
		// The answer stands for the written object until the watch brings it; its managed fields are left out.
		if r.Object.GetResourceVersion() != obj.GetResourceVersion() || r.Object.GetLabels()[BundleLabel] != id || r.Object.GetManagedFields() != nil {
			t.Errorf("%s: the apply answered resourceVersion %s, labels %v and %d managed fields entries; want %s, the bundle's label and none",
				describeMeta(r.Meta), r.Object.GetResourceVersion(), r.Object.GetLabels(), len(r.Object.GetManagedFields()), obj.GetResourceVersion())
		}
		versions[describeMeta(r.Meta)] = obj.GetResourceVersion()
	}
	hc := get(t, mc, hostedClusters, ns, "mycluster")
	if image, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image"); image != "quay.io/openshift-release-dev/ocp-release:4.20.8-multi" {
		t.Errorf("the HostedCluster's release image is %q", image)
	}
	if hc.GetLabels()["api.openshift.com/id"] == "" {
		t.Error("the manifest's own labels were lost")
	}

	// Applying the same generation again writes nothing.
	if _, err := a.Apply(ctx, id, 1, bundle); err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	for i, r := range applied {
		if rv := get(t, mc, gvrOf(r.Meta), r.Meta.Namespace, r.Meta.Name).GetResourceVersion(); rv != versions[describeMeta(r.Meta)] {
			t.Errorf("manifest %d: re-applying the same bundle changed %s (resourceVersion %s -> %s)", i, describeMeta(r.Meta), versions[describeMeta(r.Meta)], rv)
		}
	}

	// A new generation changes what changed.
	objs[3] = configMap(ns, "settings", map[string]any{"mode": "two"})
	if _, err := a.Apply(ctx, id, 2, newBundle(t, objs...)); err != nil {
		t.Fatalf("Apply generation 2: %v", err)
	}
	cm := get(t, mc, configMaps, ns, "settings")
	if data(cm, "mode") != "two" || cm.GetAnnotations()[GenerationAnnotation] != "2" {
		t.Errorf("after generation 2 the ConfigMap has mode %q, generation %q", data(cm, "mode"), cm.GetAnnotations()[GenerationAnnotation])
	}
}

func testForcedApply(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-force"
	createNamespace(t, mc, ns)
	id := newBundleID()
	a := newApplier(t, mc)
	bundle := newBundle(t, configMap(ns, "contested", map[string]any{"key": "ours"}))
	if _, err := a.Apply(ctx, id, 1, bundle); err != nil {
		t.Fatal(err)
	}

	// Someone else takes the field with a forced apply of their own.
	theirs := configMap(ns, "contested", map[string]any{"key": "theirs"})
	if _, err := mc.Dynamic.Resource(configMaps).Namespace(ns).Apply(ctx, "contested", theirs, metav1.ApplyOptions{FieldManager: "someone-else", Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, id, 1, bundle); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := data(get(t, mc, configMaps, ns, "contested"), "key"); got != "ours" {
		t.Errorf("after the forced apply the key is %q, want ours", got)
	}

	// Without force, the conflict is reported, not resolved.
	if _, err := mc.Dynamic.Resource(configMaps).Namespace(ns).Apply(ctx, "contested", theirs, metav1.ApplyOptions{FieldManager: "someone-else", Force: true}); err != nil {
		t.Fatal(err)
	}
	configure(bundle, configMaps, ns, "contested", &protocol.UpdateStrategy{Type: protocol.UpdateStrategyServerSideApply,
		ServerSideApply: &protocol.ServerSideApplyConfig{Force: false, FieldManager: FieldManager}})
	applied, err := a.Apply(ctx, id, 1, bundle)
	if err == nil || len(applied) != 1 || !apierrors.IsConflict(applied[0].Err) {
		t.Fatalf("Apply without force over someone else's field: %v, %+v; want a conflict", err, applied)
	}
	if got := data(get(t, mc, configMaps, ns, "contested"), "key"); got != "theirs" {
		t.Errorf("an unforced apply changed the key to %q", got)
	}
}

func testUpdateStrategies(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-strategies"
	createNamespace(t, mc, ns)
	cms := mc.Dynamic.Resource(configMaps).Namespace(ns)
	for name, value := range map[string]string{"found-create-only": "before", "read-only": "before"} {
		if _, err := cms.Create(ctx, configMap(ns, name, map[string]any{"key": value}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	id := newBundleID()
	a := newApplier(t, mc)
	strategy := func(typ protocol.UpdateStrategyType) *protocol.UpdateStrategy {
		return &protocol.UpdateStrategy{Type: typ}
	}
	bundleOfGeneration := func(value string) *protocol.ManifestBundle {
		b := newBundle(t,
			configMap(ns, "updated", map[string]any{"key": value}),
			configMap(ns, "found-create-only", map[string]any{"key": value}),
			configMap(ns, "new-create-only", map[string]any{"key": value}),
			configMap(ns, "read-only", map[string]any{"key": value}),
			configMap(ns, "missing-read-only", map[string]any{"key": value}),
		)
		configure(b, configMaps, ns, "updated", strategy(protocol.UpdateStrategyUpdate))
		configure(b, configMaps, ns, "found-create-only", strategy(protocol.UpdateStrategyCreateOnly))
		configure(b, configMaps, ns, "new-create-only", strategy(protocol.UpdateStrategyCreateOnly))
		configure(b, configMaps, ns, "read-only", strategy(protocol.UpdateStrategyReadOnly))
		configure(b, configMaps, ns, "missing-read-only", strategy(protocol.UpdateStrategyReadOnly))
		return b
	}

	applied, err := a.Apply(ctx, id, 1, bundleOfGeneration("one"))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	wantOwned := []bool{true, false, true, false, false}
	for i, r := range applied {
		if r.Err != nil || r.Owned != wantOwned[i] {
			t.Errorf("%s (%s): owned %v, error %v; want owned %v", describeMeta(r.Meta), r.Strategy, r.Owned, r.Err, wantOwned[i])
		}
	}
	if applied[4].Object != nil {
		t.Errorf("ReadOnly of a missing object returned %v", applied[4].Object)
	}
	for name, want := range map[string]string{"updated": "one", "found-create-only": "before", "new-create-only": "one", "read-only": "before"} {
		obj := get(t, mc, configMaps, ns, name)
		if got := data(obj, "key"); got != want {
			t.Errorf("%s has %q, want %q", name, got, want)
		}
		if owned := obj.GetLabels()[BundleLabel] == id; owned != (want == "one") {
			t.Errorf("%s labelled as the bundle's: %v", name, owned)
		}
	}
	if exists(t, mc, configMaps, ns, "missing-read-only") {
		t.Error("ReadOnly created missing-read-only")
	}

	// Someone edits the updated object; generation 2 puts its own fields back and keeps the others.
	updated := get(t, mc, configMaps, ns, "updated")
	updated.SetLabels(map[string]string{BundleLabel: id, "added-by": "someone-else"})
	if err := unstructured.SetNestedField(updated.Object, "edited", "data", "key"); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, id, 2, bundleOfGeneration("two")); err != nil {
		t.Fatalf("Apply generation 2: %v", err)
	}
	updated = get(t, mc, configMaps, ns, "updated")
	if data(updated, "key") != "two" || updated.GetLabels()["added-by"] != "someone-else" || updated.GetAnnotations()[GenerationAnnotation] != "2" {
		t.Errorf("after an Update the object is %v", updated.Object)
	}
	if got := data(get(t, mc, configMaps, ns, "new-create-only"), "key"); got != "one" {
		t.Errorf("CreateOnly changed an object it had created: %q", got)
	}
	if got := data(get(t, mc, configMaps, ns, "read-only"), "key"); got != "before" {
		t.Errorf("ReadOnly changed an object: %q", got)
	}

	// Deleting the bundle leaves what it did not create alone.
	if err := a.Delete(ctx, id, bundleOfGeneration("two")); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, name := range []string{"found-create-only", "read-only"} {
		if obj := get(t, mc, configMaps, ns, name); obj.GetDeletionTimestamp() != nil {
			t.Errorf("Delete deleted %s, which the bundle did not create", name)
		}
	}
	for _, name := range []string{"updated", "new-create-only"} {
		if obj := get(t, mc, configMaps, ns, name); obj.GetDeletionTimestamp() == nil {
			t.Errorf("Delete did not delete %s", name)
		}
	}
}

func testStaleGeneration(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-stale"
	createNamespace(t, mc, ns)
	id := newBundleID()
	a := newApplier(t, mc)
	if _, err := a.Apply(ctx, id, 5, newBundle(t, configMap(ns, "versioned", map[string]any{"key": "five"}))); err != nil {
		t.Fatal(err)
	}
	older := newBundle(t, configMap(ns, "versioned", map[string]any{"key": "four"}), configMap(ns, "added-in-four", nil))

	_, err := a.Apply(ctx, id, 4, older)
	if !IsStaleGeneration(err) {
		t.Errorf("Apply of generation 4 after 5: %v, want a StaleGenerationError", err)
	}
	// After a restart the applied generation is read from the objects.
	_, err = newApplier(t, mc).Apply(ctx, id, 4, older)
	if !IsStaleGeneration(err) || !strings.Contains(err.Error(), "ConfigMap "+ns+"/versioned") {
		t.Errorf("Apply of generation 4 by a new agent: %v, want a StaleGenerationError naming the ConfigMap", err)
	}
	if got := data(get(t, mc, configMaps, ns, "versioned"), "key"); got != "five" {
		t.Errorf("a refused generation changed the object to %q", got)
	}
	if exists(t, mc, configMaps, ns, "added-in-four") {
		t.Error("a refused generation created an object")
	}
	if _, err := newApplier(t, mc).Apply(ctx, id, 6, older); err != nil {
		t.Errorf("Apply of generation 6: %v", err)
	}
}

func testLateCRD(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-late-crd"
	createNamespace(t, mc, ns)
	a := newApplier(t, mc)
	// The applier discovers the API now, before the CRD exists.
	if _, err := a.Apply(ctx, newBundleID(), 1, newBundle(t, configMap(ns, "first", nil))); err != nil {
		t.Fatal(err)
	}

	crds := mc.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.agent.test"},
		"spec": map[string]any{
			"group": "agent.test", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agent.test/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": ns}, "spec": map[string]any{"size": int64(3)},
	}}
	// The CRD takes a moment to be served; the agent's caller retries, as it does on any API error.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var applied []AppliedResource
		if applied, err = a.Apply(ctx, newBundleID(), 1, newBundle(t, widget)); err == nil {
			if applied[0].Meta.Resource != "widgets" {
				t.Errorf("the Widget maps to %q", applied[0].Meta.Resource)
			}
			break
		}
	}
	if err != nil {
		t.Fatalf("applying a Widget after its CRD was installed: %v", err)
	}
}

// appliedBy says whether manager has server-side applied fields of obj.
func appliedBy(obj *unstructured.Unstructured, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
