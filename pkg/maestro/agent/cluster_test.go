package agent

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// The subtests share one management cluster, a real kube-apiserver with the HyperShift CRDs, and each
// works in namespaces of its own. Nothing else runs on it: no garbage collector, so an object deleted in
// the foreground keeps its foregroundDeletion finalizer until a test removes it, as the collector would.
func TestOnManagementCluster(t *testing.T) {
	mc := framework.StartManagementCluster(t)
	t.Run("server-side apply of a HostedCluster bundle is idempotent", func(t *testing.T) { testServerSideApply(t, mc) })
	t.Run("forced server-side apply takes fields back from another manager", func(t *testing.T) { testForcedApply(t, mc) })
	t.Run("Update, CreateOnly and ReadOnly", func(t *testing.T) { testUpdateStrategies(t, mc) })
	t.Run("an older generation is refused", func(t *testing.T) { testStaleGeneration(t, mc) })
	t.Run("a kind installed after the agent started is found", func(t *testing.T) { testLateCRD(t, mc) })
	t.Run("Foreground delete finds leftovers by label and is gone only when they are", func(t *testing.T) { testForegroundDelete(t, mc) })
	t.Run("Orphan and SelectivelyOrphan keep objects and let go of them", func(t *testing.T) { testOrphanDelete(t, mc) })
	t.Run("the watcher reports status changes", func(t *testing.T) { testWatcher(t, mc) })
	t.Run("a kind the agent may not read is reported, not waited for", func(t *testing.T) { testForbiddenKind(t, mc) })
	t.Run("the agent applies, reports and deletes what a source sends, also across a restart", func(t *testing.T) { testAgent(t, mc) })
	t.Run("a bundle costs about one request to the management cluster", func(t *testing.T) { testRequestsPerBundle(t, mc) })
	t.Run("record Secrets are updated whole, and keep what someone else changed", func(t *testing.T) { testRecordSecretsUpdatedWhole(t, mc) })
	t.Run("an agent whose role may not update its records patches them", func(t *testing.T) { testRecordsWithoutUpdate(t, mc) })
	t.Run("a delete sent again while the objects wait costs no request", func(t *testing.T) { testRepeatedDeletes(t, mc) })
	t.Run("inspection views answer trimmed objects", func(t *testing.T) { testInspectionViews(t, mc) })
	t.Run("an inspection answer too big is truncated", func(t *testing.T) { testInspectionTruncated(t, mc) })
	t.Run("a forged inspection bundle is refused whole", func(t *testing.T) { testInspectionRefused(t, mc) })
	t.Run("the agent answers inspections in the status, across a resync and a restart", func(t *testing.T) { testInspectionByAgent(t, mc) })
	t.Run("the agent's ClusterRole lets every view read", func(t *testing.T) { testInspectionRBAC(t, mc) })
}

var (
	configMaps     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	hostedClusters = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
)

func newApplier(t *testing.T, mc *framework.ManagementCluster) *Applier {
	t.Helper()
	a, err := NewApplier(mc.Config)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newBundleID() string { return uuid.NewString() }

// newBundle makes a bundle of objs, in order.
func newBundle(t *testing.T, objs ...*unstructured.Unstructured) *protocol.ManifestBundle {
	t.Helper()
	b := &protocol.ManifestBundle{}
	for _, obj := range objs {
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.Manifests = append(b.Manifests, raw)
	}
	return b
}

// configure adds a manifest config for an object of the bundle.
func configure(b *protocol.ManifestBundle, gvr schema.GroupVersionResource, namespace, name string, strategy *protocol.UpdateStrategy, rules ...protocol.FeedbackRule) {
	b.ManifestConfigs = append(b.ManifestConfigs, protocol.ManifestConfigOption{
		ResourceIdentifier: protocol.ResourceIdentifier{Group: gvr.Group, Resource: gvr.Resource, Name: name, Namespace: namespace},
		UpdateStrategy:     strategy,
		FeedbackRules:      rules,
	})
}

func configMap(namespace, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"data":       data,
	}}
}

func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}

// createNamespace makes a namespace for a test outside any bundle.
func createNamespace(t *testing.T, mc *framework.ManagementCluster, name string) {
	t.Helper()
	_, err := mc.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// hostedClusterManifests reads the ARO HCP-style example (Namespace, pull Secret, HostedCluster) into namespace ns.
func hostedClusterManifests(t *testing.T, ns string) []*unstructured.Unstructured {
	t.Helper()
	objs := framework.HyperShiftExamples(t, "aro-hcp-style-minimal-hostedcluster.yaml")
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			obj.SetName(ns)
		} else {
			obj.SetNamespace(ns)
		}
	}
	return objs
}

func get(t *testing.T, mc *framework.ManagementCluster, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := mc.Dynamic.Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return obj
}

func exists(t *testing.T, mc *framework.ManagementCluster, gvr schema.GroupVersionResource, ns, name string) bool {
	t.Helper()
	_, err := mc.Dynamic.Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func data(obj *unstructured.Unstructured, key string) string {
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v
}

// removeFinalizers does what the garbage collector would once an object's dependents are gone.
func removeFinalizers(t *testing.T, mc *framework.ManagementCluster, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := mc.Dynamic.Resource(gvr).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
