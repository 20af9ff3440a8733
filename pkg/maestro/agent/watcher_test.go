package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

type report struct {
	bundleID   string
	generation int64
	status     *protocol.ManifestBundleStatus
	hash       string
}

func testWatcher(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns = "agent-watch"
	reports := make(chan report, 100)
	var calls atomic.Int32
	w := startWatcher(t, ctx, mc.Config, func(_ context.Context, bundleID string, generation int64, status *protocol.ManifestBundleStatus, hash string) error {
		if calls.Add(1) == 1 {
			return errors.New("the broker is unreachable")
		}
		reports <- report{bundleID, generation, status, hash}
		return nil
	})

	id := newBundleID()
	objs := append(hostedClusterManifests(t, ns), configMap(ns, "settings", nil), configMap(ns, "made-by-someone-else", nil))
	bundle := newBundle(t, objs...)
	configure(bundle, hostedClusters, ns, "mycluster", nil, protocol.FeedbackRule{Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{
		{Name: "status", Path: ".status"},
		{Name: "available", Path: `.status.conditions[?(@.type=="Available")].status`},
	}})
	configure(bundle, configMaps, ns, "made-by-someone-else", &protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly})
	applied, err := newApplier(t, mc).Apply(ctx, id, 1, bundle)
	if err != nil {
		t.Fatal(err)
	}
	w.Track(id, 1, bundle, applied)

	first := nextReport(t, reports)
	if first.bundleID != id || first.generation != 1 {
		t.Fatalf("report for bundle %s generation %d, want %s generation 1", first.bundleID, first.generation, id)
	}
	if calls.Load() < 2 {
		t.Errorf("the status was reported after %d calls, want a retry after the failed first", calls.Load())
	}
	assertCondition(t, first.status.Conditions, ConditionApplied, "True", "AppliedManifestWorkComplete")
	assertCondition(t, first.status.Conditions, ConditionAvailable, "False", "ResourcesNotAvailable")
	readOnly := manifestStatus(t, first.status, "made-by-someone-else")
	assertCondition(t, readOnly.Conditions, ConditionAvailable, "False", "ResourceNotAvailable")
	if hc := manifestStatus(t, first.status, "mycluster"); len(hc.StatusFeedback.Values) != 0 {
		t.Errorf("a HostedCluster without status reported %+v", hc.StatusFeedback.Values)
	}

	// The HyperShift operator would write this.
	hc := get(t, mc, hostedClusters, ns, "mycluster")
	hc.Object["status"] = map[string]any{
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "AsExpected", "message": "",
			"lastTransitionTime": "2026-01-01T00:00:00Z"}},
		"controlPlaneEndpoint": map[string]any{"host": "api.example.com", "port": int64(443)},
	}
	if _, err := mc.Dynamic.Resource(hostedClusters).Namespace(ns).UpdateStatus(ctx, hc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := nextReport(t, reports)
	if second.hash == first.hash {
		t.Error("a new status kept the hash")
	}
	values := manifestStatus(t, second.status, "mycluster").StatusFeedback.Values
	if got := feedbackValue(values, "available"); got.Type != protocol.ValueString || got.String == nil || *got.String != "True" {
		t.Errorf("the value available is %+v, want the String True", got)
	}
	if got := feedbackValue(values, "status"); got.Type != protocol.ValueJSONRaw || got.JSONRaw == nil || !strings.Contains(*got.JSONRaw, `"host":"api.example.com"`) {
		t.Errorf("the value status is %+v, want the JSON of the whole status", got)
	}

	// A change that leaves the status as it was is not reported.
	patch := []byte(`{"metadata":{"labels":{"touched":"yes"}}}`)
	if _, err := mc.Dynamic.Resource(hostedClusters).Namespace(ns).Patch(ctx, "mycluster", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expectNoReport(t, reports)
	if _, hash, ok := w.Status(id); !ok || hash != second.hash {
		t.Errorf("Status returned hash %q, %v; want the last reported %q", hash, ok, second.hash)
	}

	// The ReadOnly object appears: it is watched by name, as the agent never labels it.
	if _, err := mc.Dynamic.Resource(configMaps).Namespace(ns).Create(ctx, configMap(ns, "made-by-someone-else", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	third := nextReport(t, reports)
	assertCondition(t, manifestStatus(t, third.status, "made-by-someone-else").Conditions, ConditionAvailable, "True", "ResourceAvailable")
	assertCondition(t, third.status.Conditions, ConditionAvailable, "True", "ResourcesAvailable")

	// An applied object deleted behind the agent's back.
	if err := mc.Dynamic.Resource(configMaps).Namespace(ns).Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fourth := nextReport(t, reports)
	assertCondition(t, manifestStatus(t, fourth.status, "settings").Conditions, ConditionAvailable, "False", "ResourceNotAvailable")

	// A forgotten bundle is not reported anymore.
	w.Forget(id)
	hc = get(t, mc, hostedClusters, ns, "mycluster")
	if err := unstructured.SetNestedField(hc.Object, "api.changed.example.com", "status", "controlPlaneEndpoint", "host"); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Dynamic.Resource(hostedClusters).Namespace(ns).UpdateStatus(ctx, hc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectNoReport(t, reports)
}

// startWatcher runs a Watcher on the cluster cfg reaches, with two status workers, until the test ends.
func startWatcher(t *testing.T, ctx context.Context, cfg *rest.Config, onStatus StatusFunc) *Watcher {
	t.Helper()
	w, err := NewWatcher(cfg, onStatus)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); w.Run(runCtx, 2) }()
	t.Cleanup(func() { stop(); <-stopped })
	return w
}

func nextReport(t *testing.T, reports <-chan report) report {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no status reported within 30s")
		return report{}
	}
}

// expectNoReport checks, for a few seconds, that nothing is reported.
func expectNoReport(t *testing.T, reports <-chan report) {
	t.Helper()
	select {
	case r := <-reports:
		t.Errorf("an unchanged status was reported: hash %s", r.hash)
	case <-time.After(3 * time.Second):
	}
}

func manifestStatus(t *testing.T, status *protocol.ManifestBundleStatus, name string) protocol.ManifestCondition {
	t.Helper()
	for _, mc := range status.ResourceStatus {
		if mc.ResourceMeta.Name == name {
			return mc
		}
	}
	t.Fatalf("no status for %s", name)
	return protocol.ManifestCondition{}
}

func feedbackValue(values []protocol.FeedbackValue, name string) protocol.FieldValue {
	for _, v := range values {
		if v.Name == name {
			return v.Value
		}
	}
	return protocol.FieldValue{}
}

// A kind the agent may not read is reported with the management cluster's refusal, not waited for: with
// a ClusterRole missing a kind, the bundle's status says why instead of never coming.
func testForbiddenKind(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	const ns, user = "agent-forbidden", "agent-without-services"
	createNamespace(t, mc, ns)
	// This agent may do anything with ConfigMaps and nothing with Services.
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}}
	if _, err := mc.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := mc.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(mc.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	waitUntilAllowed(t, cfg, ns, "configmaps")

	reports := make(chan report, 10)
	w := startWatcher(t, ctx, cfg, func(_ context.Context, bundleID string, generation int64, status *protocol.ManifestBundleStatus, hash string) error {
		reports <- report{bundleID, generation, status, hash}
		return nil
	})

	a, err := NewApplier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	router := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "router", "namespace": ns}}}
	bundle := newBundle(t, configMap(ns, "settings", nil), router)
	configure(bundle, schema.GroupVersionResource{Version: "v1", Resource: "services"}, ns, "router",
		&protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly})
	id := newBundleID()
	applied, err := a.Apply(ctx, id, 1, bundle)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("Apply: %v; want the Service's read refused", err)
	}
	w.Track(id, 1, bundle, applied)

	r := nextReport(t, reports)
	assertCondition(t, manifestStatus(t, r.status, "settings").Conditions, ConditionAvailable, "True", "ResourceAvailable")
	service := manifestStatus(t, r.status, "router")
	available := meta.FindStatusCondition(service.Conditions, ConditionAvailable)
	if available == nil || available.Status != metav1.ConditionUnknown || !strings.Contains(available.Message, "forbidden") {
		t.Fatalf("the Service the agent may not read is reported %+v; want Available Unknown with the refusal", service.Conditions)
	}
}
