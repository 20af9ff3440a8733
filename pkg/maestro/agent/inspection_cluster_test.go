package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/testutil"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// inspected is a hosted cluster to inspect: a HostedCluster with a status and NodePools in one
// namespace, and its control plane's Pods and Events in another, as HyperShift lays them out.
type inspected struct {
	clusters, controlPlane string
}

// The values a view must not show: they stand for what could be a secret.
const (
	podEnvValue       = "env-s3cret-value"
	podAnnotation     = "annotation-s3cret-value"
	clusterSpecMarker = "quay.io/openshift-release-dev/ocp-release"
	nodePoolVMSize    = "Standard_D8s_v3"
)

func setUpInspected(t *testing.T, mc *framework.ManagementCluster, prefix string) inspected {
	t.Helper()
	ctx := testContext(t)
	in := inspected{clusters: prefix + "-clusters", controlPlane: prefix + "-mycluster"}
	createNamespace(t, mc, in.clusters)
	createNamespace(t, mc, in.controlPlane)

	for _, obj := range hostedClusterManifests(t, in.clusters) {
		if obj.GetKind() != "HostedCluster" {
			continue
		}
		created, err := mc.Dynamic.Resource(hostedClusters).Namespace(in.clusters).Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Object["status"] = map[string]any{
			"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "AsExpected",
				"message": "The hosted control plane is available", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
			"controlPlaneEndpoint": map[string]any{"host": "api.example.com", "port": int64(443)},
		}
		if _, err := mc.Dynamic.Resource(hostedClusters).Namespace(in.clusters).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, cluster := range map[string]string{"mycluster-b": "mycluster", "mycluster-a": "mycluster", "other-workers": "other"} {
		np := framework.HyperShiftExample(t, "aro-hcp-style-minimal-nodepool.yaml", "NodePool")
		np.SetName(name)
		np.SetNamespace(in.clusters)
		if err := unstructured.SetNestedField(np.Object, cluster, "spec", "clusterName"); err != nil {
			t.Fatal(err)
		}
		if _, err := mc.Dynamic.Resource(nodePools).Namespace(in.clusters).Create(ctx, np, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The ServiceAccount admission wants the default account, which no controller makes here.
	if _, err := mc.Kube.CoreV1().ServiceAccounts(in.controlPlane).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ name, container string }{{"kube-apiserver-1", "kube-apiserver"}, {"etcd-0", "etcd"}, {"kube-apiserver-0", "kube-apiserver"}} {
		createPod(t, mc, in.controlPlane, p.name, p.container)
	}

	// Events at known times: the newest has no time but its creation, which is now.
	base := time.Now().Add(-5 * time.Hour).Truncate(time.Second)
	for _, e := range []corev1.Event{
		{ObjectMeta: metav1.ObjectMeta{Name: "early"}, LastTimestamp: metav1.NewTime(base), FirstTimestamp: metav1.NewTime(base)},
		{ObjectMeta: metav1.ObjectMeta{Name: "late"}, LastTimestamp: metav1.NewTime(base.Add(2 * time.Hour)), FirstTimestamp: metav1.NewTime(base), Count: 3},
		{ObjectMeta: metav1.ObjectMeta{Name: "middle"}, EventTime: metav1.NewMicroTime(base.Add(time.Hour)),
			ReportingController: "example.com/controller", ReportingInstance: "controller-0", Action: "Scale"},
		{ObjectMeta: metav1.ObjectMeta{Name: "undated"}},
	} {
		createEvent(t, mc, in.controlPlane, e, "Started container")
	}
	return in
}

func createPod(t *testing.T, mc *framework.ManagementCluster, ns, name, container string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": container}, Annotations: map[string]string{"secret": podAnnotation}},
		// On a node no kubelet serves: kube-apiserver refuses its log.
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
			Name: container, Image: "registry.example.com/" + container + ":v1",
			Env: []corev1.EnvVar{{Name: "PASSWORD", Value: podEnvValue}},
		}}},
	}
	if _, err := mc.Kube.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createEvent(t *testing.T, mc *framework.ManagementCluster, ns string, e corev1.Event, message string) {
	t.Helper()
	e.Namespace = ns
	e.InvolvedObject = corev1.ObjectReference{Kind: "Pod", Name: "kube-apiserver-0", Namespace: ns}
	e.Reason, e.Message, e.Type = "Started", message, corev1.EventTypeNormal
	e.Source = corev1.EventSource{Component: "kubelet", Host: "node-1"}
	if _, err := mc.Kube.CoreV1().Events(ns).Create(t.Context(), &e, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// inspectionBundle asks for view around a manifest that names only obj, with strategy.
func inspectionBundle(t *testing.T, obj *unstructured.Unstructured, gvr schema.GroupVersionResource, strategy protocol.UpdateStrategyType, view protocol.InspectionView) *protocol.ManifestBundle {
	t.Helper()
	b := newBundle(t, obj)
	configure(b, gvr, obj.GetNamespace(), obj.GetName(), &protocol.UpdateStrategy{Type: strategy},
		protocol.FeedbackRule{Type: protocol.FeedbackInspection, Inspection: &view})
	return b
}

func hostedClusterRef(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster", "metadata": map[string]any{"name": name, "namespace": namespace},
	}}
}

// inspect applies an inspection bundle of one manifest and returns its answer and the raw JSON of it.
func inspect(t *testing.T, a *Applier, bundle *protocol.ManifestBundle) (protocol.InspectionAnswer, string) {
	t.Helper()
	applied, err := a.Apply(testContext(t), newBundleID(), 1, bundle)
	if err != nil || len(applied) != 1 || applied[0].Err != nil {
		t.Fatalf("Apply: %+v, %v; want the inspection applied", applied, err)
	}
	return answerValue(t, applied[0].Inspection)
}

// answerValue decodes a feedback value that carries an answer.
func answerValue(t *testing.T, v *protocol.FeedbackValue) (protocol.InspectionAnswer, string) {
	t.Helper()
	if v == nil || v.Name != protocol.InspectionFeedbackName || v.Value.Type != protocol.ValueJSONRaw || v.Value.JSONRaw == nil {
		t.Fatalf("the inspection is answered with %+v, want a JsonRaw value named %s", v, protocol.InspectionFeedbackName)
	}
	raw := *v.Value.JSONRaw
	return answerOf(t, []byte(raw), MaxJSONRawLength), raw
}

// itemsOf decodes the items of an answer.
func itemsOf(t *testing.T, answer protocol.InspectionAnswer) []map[string]any {
	t.Helper()
	items := make([]map[string]any, len(answer.Items))
	for i, raw := range answer.Items {
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			t.Fatal(err)
		}
	}
	return items
}

func names(items []map[string]any) []string {
	var n []string
	for _, item := range items {
		metadata, _ := item["metadata"].(map[string]any)
		n = append(n, fmt.Sprint(metadata["name"]))
	}
	return n
}

// assertKeys checks that m has no key but those allowed.
func assertKeys(t *testing.T, what string, m map[string]any, allowed ...string) {
	t.Helper()
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s has %s; a view keeps only %v", what, k, allowed)
		}
	}
}

func testInspectionViews(t *testing.T, mc *framework.ManagementCluster) {
	in := setUpInspected(t, mc, "agent-inspect")
	a := newApplier(t, mc)
	readOnly := protocol.UpdateStrategyReadOnly
	before := time.Now().Add(-time.Second)

	t.Run("hostedcluster", func(t *testing.T) {
		answer, raw := inspect(t, a, inspectionBundle(t, hostedClusterRef(in.clusters, "mycluster"), hostedClusters, readOnly,
			protocol.InspectionView{View: protocol.ViewHostedCluster}))
		if answer.View != protocol.ViewHostedCluster || answer.ReadAt.Time.Before(before) || answer.Error != "" || answer.Truncated {
			t.Errorf("answer %s", raw)
		}
		items := itemsOf(t, answer)
		if len(items) != 1 {
			t.Fatalf("%d HostedClusters in %s", len(items), raw)
		}
		hc := items[0]
		assertKeys(t, "the HostedCluster", hc, "apiVersion", "kind", "metadata", "status")
		assertKeys(t, "the HostedCluster's metadata", hc["metadata"].(map[string]any), "name", "namespace", "generation", "creationTimestamp", "deletionTimestamp", "labels")
		if strings.Contains(raw, clusterSpecMarker) {
			t.Errorf("the HostedCluster's spec is in the answer: %s", raw)
		}
		if !strings.Contains(raw, `"host":"api.example.com"`) || !strings.Contains(raw, "The hosted control plane is available") {
			t.Errorf("the HostedCluster's status is not in the answer: %s", raw)
		}
		if got := get(t, mc, hostedClusters, in.clusters, "mycluster"); got.GetLabels()[BundleLabel] != "" {
			t.Errorf("the inspected HostedCluster is labelled %v: an inspection writes nothing", got.GetLabels())
		}
	})

	t.Run("nodepools", func(t *testing.T) {
		answer, raw := inspect(t, a, inspectionBundle(t, hostedClusterRef(in.clusters, "mycluster"), hostedClusters, readOnly,
			protocol.InspectionView{View: protocol.ViewNodePools}))
		items := itemsOf(t, answer)
		if got := names(items); !slices.Equal(got, []string{"mycluster-a", "mycluster-b"}) {
			t.Errorf("NodePools %v, want those of mycluster by name", got)
		}
		for _, np := range items {
			assertKeys(t, "a NodePool", np, "apiVersion", "kind", "metadata", "spec", "status")
			assertKeys(t, "a NodePool's spec", np["spec"].(map[string]any), "replicas", "release")
		}
		if strings.Contains(raw, nodePoolVMSize) || !strings.Contains(raw, `"replicas":2`) || !strings.Contains(raw, clusterSpecMarker) {
			t.Errorf("the NodePools are not trimmed to their replicas and release: %s", raw)
		}
	})

	t.Run("controlplane-pods", func(t *testing.T) {
		answer, raw := inspect(t, a, inspectionBundle(t, namespace(in.controlPlane), namespaces, readOnly,
			protocol.InspectionView{View: protocol.ViewControlPlanePods}))
		items := itemsOf(t, answer)
		if got := names(items); !slices.Equal(got, []string{"etcd-0", "kube-apiserver-0", "kube-apiserver-1"}) {
			t.Errorf("Pods %v, want all three by name", got)
		}
		for _, s := range []string{podEnvValue, "PASSWORD", podAnnotation, "volumes", "kube-api-access"} {
			if strings.Contains(raw, s) {
				t.Errorf("the answer holds %q: %s", s, raw)
			}
		}
		pod := items[0]
		assertKeys(t, "a Pod", pod, "metadata", "spec", "status")
		assertKeys(t, "a Pod's metadata", pod["metadata"].(map[string]any), "name", "namespace", "creationTimestamp", "deletionTimestamp", "labels")
		if !strings.Contains(raw, `"containers":[{"name":"etcd","image":"registry.example.com/etcd:v1"}]`) || !strings.Contains(raw, `"phase":"Pending"`) {
			t.Errorf("the Pods' containers and phase are not in the answer: %s", raw)
		}
	})

	t.Run("events", func(t *testing.T) {
		answer, raw := inspect(t, a, inspectionBundle(t, namespace(in.controlPlane), namespaces, readOnly,
			protocol.InspectionView{View: protocol.ViewEvents}))
		items := itemsOf(t, answer)
		if got := names(items); !slices.Equal(got, []string{"undated", "late", "middle", "early"}) {
			t.Errorf("Events %v, want the newest first", got)
		}
		for _, e := range items {
			assertKeys(t, "an Event", e, "metadata", "involvedObject", "reason", "message", "type", "count", "firstTimestamp", "lastTimestamp", "eventTime", "source")
		}
		if !strings.Contains(raw, `"involvedObject":{"kind":"Pod","name":"kube-apiserver-0","namespace":"`+in.controlPlane+`"}`) ||
			!strings.Contains(raw, `"source":{"component":"kubelet","host":"node-1"}`) || !strings.Contains(raw, `"count":3`) {
			t.Errorf("the Events' fields are not in the answer: %s", raw)
		}
	})

	t.Run("logs", func(t *testing.T) {
		// No kubelet serves logs here: kube-apiserver refuses, and the answer says so.
		answer, raw := inspect(t, a, inspectionBundle(t, namespace(in.controlPlane), namespaces, readOnly,
			protocol.InspectionView{View: protocol.ViewLogs, Container: "kube-apiserver", TailLines: 50}))
		if answer.Log != "" || !strings.HasPrefix(answer.Error, "reading the log of container kube-apiserver of pod "+in.controlPlane+"/kube-apiserver-0 on node node-1: ") {
			t.Errorf("a log with no kubelet to serve it is answered %s", raw)
		}
		answer, raw = inspect(t, a, inspectionBundle(t, namespace(in.controlPlane), namespaces, readOnly,
			protocol.InspectionView{View: protocol.ViewLogs, Container: "oauth-server"}))
		if answer.Log != "" || answer.Error != "no pod in namespace "+in.controlPlane+" has a container oauth-server" {
			t.Errorf("the log of a missing container is answered %s", raw)
		}
	})

	t.Run("a missing object", func(t *testing.T) {
		bundle := inspectionBundle(t, namespace("agent-inspect-missing"), namespaces, readOnly, protocol.InspectionView{View: protocol.ViewEvents})
		id := newBundleID()
		applied, err := a.Apply(testContext(t), id, 1, bundle)
		if err != nil {
			t.Fatal(err)
		}
		answer, raw := answerValue(t, applied[0].Inspection)
		if answer.Error != "Namespace agent-inspect-missing is not on the management cluster" || len(answer.Items) != 0 {
			t.Errorf("an inspection of a missing Namespace is answered %s", raw)
		}
		// The bundle is applied; the manifest's object is not available, and its answer says why.
		status := BuildStatus(1, bundle, applied, func(protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
			t.Error("the status of an inspection reads the object again")
			return nil, nil
		}, nil)
		assertCondition(t, status.Conditions, ConditionApplied, "True", "AppliedManifestWorkComplete")
		assertCondition(t, status.ResourceStatus[0].Conditions, ConditionAvailable, "False", "ResourceNotAvailable")
		if got := feedbackValue(status.ResourceStatus[0].StatusFeedback.Values, protocol.InspectionFeedbackName); got.JSONRaw == nil || *got.JSONRaw != raw {
			t.Errorf("the status reports %+v, want the answer", got)
		}
	})
}

func testInspectionTruncated(t *testing.T, mc *framework.ManagementCluster) {
	const ns, events = "agent-inspect-many-events", 250
	createNamespace(t, mc, ns)
	base := time.Now().Add(-time.Duration(events) * time.Minute).Truncate(time.Second)
	message := strings.Repeat("Back-off restarting failed container. ", 12)
	for i := range events {
		createEvent(t, mc, ns, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("event-%03d", i)},
			LastTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Minute))}, message)
	}
	answer, raw := inspect(t, newApplier(t, mc), inspectionBundle(t, namespace(ns), namespaces, protocol.UpdateStrategyReadOnly,
		protocol.InspectionView{View: protocol.ViewEvents}))
	if !answer.Truncated || answer.Omitted == 0 || len(answer.Items)+answer.Omitted != events || len(raw) > MaxJSONRawLength {
		t.Fatalf("%d events kept of %d, %d omitted, truncated %v, %d bytes; want the answer cut to %d bytes, and saying so",
			len(answer.Items), events, answer.Omitted, answer.Truncated, len(raw), MaxJSONRawLength)
	}
	got := names(itemsOf(t, answer))
	for i, name := range got {
		if want := fmt.Sprintf("event-%03d", events-1-i); name != want {
			t.Fatalf("event %d of the answer is %s, want %s: the newest are kept", i, name, want)
		}
	}
	t.Logf("%d events: %d kept in %d bytes, %d omitted", events, len(got), len(raw), answer.Omitted)
}

func testInspectionRefused(t *testing.T, mc *framework.ManagementCluster) {
	RegisterMetrics()
	const ns = "agent-inspect-refused"
	createNamespace(t, mc, ns)
	counter := &requestCounter{n: map[string]int{}}
	cfg := rest.CopyConfig(mc.Config)
	cfg.Wrap(counter.wrap)
	a, err := NewApplier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	events := protocol.InspectionView{View: protocol.ViewEvents}
	for _, tc := range []struct {
		name   string
		bundle *protocol.ManifestBundle
		// rule is the rule broken; message the bundle's Applied message; absent an object that must
		// not be created.
		rule, message string
		absent        func() bool
	}{
		{
			name:    "a Secret",
			bundle:  inspectionBundle(t, secret(ns, "creds", "s3cret"), secrets, protocol.UpdateStrategyReadOnly, events),
			rule:    ruleKind,
			message: "Refused the inspection bundle: manifests[0] (Secret " + ns + "/creds) is a v1 Secret, but view events reads around a v1 Namespace",
			absent:  func() bool { return !exists(t, mc, secrets, ns, "creds") },
		},
		{
			name:    "server-side apply",
			bundle:  inspectionBundle(t, namespace("agent-inspect-ssa"), namespaces, protocol.UpdateStrategyServerSideApply, events),
			rule:    ruleReadOnly,
			message: "Refused the inspection bundle: manifests[0] (Namespace agent-inspect-ssa) has update strategy ServerSideApply, which writes: an inspection bundle only reads (ReadOnly)",
			absent:  func() bool { return !exists(t, mc, namespaces, "", "agent-inspect-ssa") },
		},
		{
			name:    "Update",
			bundle:  inspectionBundle(t, configMap(ns, "settings", map[string]any{"a": "1"}), configMaps, protocol.UpdateStrategyUpdate, events),
			rule:    ruleReadOnly,
			message: "Refused the inspection bundle: manifests[0] (ConfigMap " + ns + "/settings) has update strategy Update, which writes: an inspection bundle only reads (ReadOnly)",
			absent:  func() bool { return !exists(t, mc, configMaps, ns, "settings") },
		},
		{
			name:    "an unknown view",
			bundle:  inspectionBundle(t, namespace("agent-inspect-view"), namespaces, protocol.UpdateStrategyReadOnly, protocol.InspectionView{View: "secrets"}),
			rule:    ruleView,
			message: `Refused the inspection bundle: manifests[0] (Namespace agent-inspect-view) asks for view "secrets", which is none of [hostedcluster nodepools controlplane-pods events logs]`,
			absent:  func() bool { return !exists(t, mc, namespaces, "", "agent-inspect-view") },
		},
		{
			name: "a second manifest without config",
			bundle: func() *protocol.ManifestBundle {
				b := inspectionBundle(t, namespace(ns), namespaces, protocol.UpdateStrategyReadOnly, events)
				b.Manifests = append(b.Manifests, newBundle(t, secret(ns, "extra", "s3cret")).Manifests...)
				return b
			}(),
			rule:    ruleConfig,
			message: "Refused the inspection bundle: manifests[1] (Secret " + ns + "/extra) has no manifest config: each manifest of an inspection bundle is ReadOnly and has one Inspection rule",
			absent:  func() bool { return !exists(t, mc, secrets, ns, "extra") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusals, err := testutil.GetCounterMetricValue(inspectionsRefused.WithLabelValues(tc.rule))
			if err != nil {
				t.Fatal(err)
			}
			requests := counter.counts()
			applied, err := a.Apply(testContext(t), newBundleID(), 1, tc.bundle)
			var refused *InspectionRefusedError
			if !errors.As(err, &refused) || refused.Rule != tc.rule {
				t.Fatalf("Apply returned %v, want a refusal by rule %s", err, tc.rule)
			}
			if len(applied) != len(tc.bundle.Manifests) {
				t.Fatalf("%d results for %d manifests", len(applied), len(tc.bundle.Manifests))
			}
			for _, r := range applied {
				if !r.Refused || r.Err == nil || r.Object != nil || r.Inspection != nil {
					t.Errorf("manifest %d: %+v, want it refused, not read", r.Meta.Ordinal, r)
				}
			}
			if after := counter.counts(); after["GET secrets"] != requests["GET secrets"] || after["GET configmaps"] != requests["GET configmaps"] {
				t.Errorf("a refused bundle read the management cluster: %v, then %v", requests, after)
			}
			if !tc.absent() {
				t.Error("a refused bundle wrote its object")
			}
			if got, err := testutil.GetCounterMetricValue(inspectionsRefused.WithLabelValues(tc.rule)); err != nil || got != refusals+1 {
				t.Errorf("%v refusals by rule %s counted, want %v", got, tc.rule, refusals+1)
			}

			status := BuildStatus(1, tc.bundle, applied, func(protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
				t.Error("the status of a refused bundle reads an object")
				return nil, nil
			}, nil)
			assertCondition(t, status.Conditions, ConditionApplied, "False", ReasonInspectionRefused)
			for _, c := range status.Conditions {
				if c.Type == ConditionApplied && c.Message != tc.message {
					t.Errorf("the bundle's Applied message is\n%q, want\n%q", c.Message, tc.message)
				}
			}
			for _, mc := range status.ResourceStatus {
				assertCondition(t, mc.Conditions, ConditionApplied, "False", ReasonInspectionRefused)
				if len(mc.StatusFeedback.Values) != 0 {
					t.Errorf("a refused manifest reports %+v", mc.StatusFeedback.Values)
				}
			}
		})
	}
}

// testInspectionByAgent runs inspections through the agent: answered in the status, the same answer on a
// status resync, a fresh read after a restart, and a forged bundle refused with a status that says why.
func testInspectionByAgent(t *testing.T, mc *framework.ManagementCluster) {
	const consumer = "mc-inspect"
	in := setUpInspected(t, mc, "agent-inspect-by-agent")
	s := setUpAgent(t, mc, consumer)
	src := s.source
	mark := src.mark()
	stop := s.start(t)
	src.waitFor(t, mark, "spec resync request on connect", isResyncRequest)

	id := newBundleID()
	bundle := inspectionBundle(t, namespace(in.controlPlane), namespaces, protocol.UpdateStrategyReadOnly, protocol.InspectionView{View: protocol.ViewControlPlanePods})
	mark = src.mark()
	src.publish(t, protocol.ActionCreateRequest, consumer, id, 1, bundle)
	first := src.waitFor(t, mark, "status of the inspection", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionApplied, metav1.ConditionTrue, 1)))
	answer := answerInStatus(t, first)
	if got := names(itemsOf(t, answer)); !slices.Equal(got, []string{"etcd-0", "kube-apiserver-0", "kube-apiserver-1"}) {
		t.Errorf("the agent answers Pods %v", got)
	}

	// A status resync sends the status the agent holds, not a new read.
	mark = src.mark()
	request, err := protocol.NewStatusResyncRequest(testSource, consumer, []protocol.ResourceStatusHash{{ResourceID: id, StatusHash: "outdated"}})
	if err != nil {
		t.Fatal(err)
	}
	src.send(t, request)
	resent := src.waitFor(t, mark, "status resync response", statusOf(t, protocol.StatusResyncResponse, id, observed(ConditionApplied, metav1.ConditionTrue, 1)))
	if resent.StatusHash() != first.StatusHash() || !answerInStatus(t, resent).ReadAt.Time.Equal(answer.ReadAt.Time) {
		t.Errorf("the resync response has hash %s, the status %s: a resync reads the view again", resent.StatusHash(), first.StatusHash())
	}

	// A forged bundle: refused, its status says why, and its Secret is not written.
	forged := newBundleID()
	src.publish(t, protocol.ActionCreateRequest, consumer, forged, 1,
		inspectionBundle(t, secret(in.controlPlane, "creds", "s3cret"), secrets, protocol.UpdateStrategyServerSideApply, protocol.InspectionView{View: protocol.ViewEvents}))
	refused := src.waitFor(t, mark, "status of the forged bundle", statusOf(t, protocol.StatusUpdateRequest, forged, observed(ConditionApplied, metav1.ConditionFalse, 1)))
	status, err := refused.ManifestBundleStatus()
	if err != nil {
		t.Fatal(err)
	}
	assertCondition(t, status.Conditions, ConditionApplied, "False", ReasonInspectionRefused)
	if exists(t, mc, secrets, in.controlPlane, "creds") {
		t.Error("the forged bundle's Secret was written")
	}

	// A restart takes the bundle up again with a fresh read.
	stop()
	createPod(t, mc, in.controlPlane, "kube-apiserver-2", "kube-apiserver")
	mark = src.mark()
	s.start(t)
	again := src.waitFor(t, mark, "status after the restart", statusOf(t, protocol.StatusUpdateRequest, id, func(status *protocol.ManifestBundleStatus) bool {
		return observed(ConditionApplied, metav1.ConditionTrue, 1)(status) && strings.Contains(feedbackJSON(status), "kube-apiserver-2")
	}))
	if got := names(itemsOf(t, answerInStatus(t, again))); !slices.Equal(got, []string{"etcd-0", "kube-apiserver-0", "kube-apiserver-1", "kube-apiserver-2"}) {
		t.Errorf("after a restart the agent answers Pods %v", got)
	}
}

// feedbackJSON is the JSON of the first manifest's feedback, "" when there is none.
func feedbackJSON(status *protocol.ManifestBundleStatus) string {
	if len(status.ResourceStatus) == 0 {
		return ""
	}
	raw, _ := json.Marshal(status.ResourceStatus[0].StatusFeedback)
	return string(raw)
}

// answerInStatus decodes the answer of the first manifest of a status event.
func answerInStatus(t *testing.T, e protocol.Event) protocol.InspectionAnswer {
	t.Helper()
	status, err := e.ManifestBundleStatus()
	if err != nil || len(status.ResourceStatus) != 1 {
		t.Fatalf("status %+v, %v; want one manifest", status, err)
	}
	values := status.ResourceStatus[0].StatusFeedback.Values
	if len(values) != 1 {
		t.Fatalf("feedback %+v, want the answer alone", values)
	}
	answer, _ := answerValue(t, &values[0])
	return answer
}

// testInspectionRBAC runs every view as the agent's ServiceAccount bound to the ClusterRole of
// artifacts/agent: nothing a view reads is forbidden, and the role writes none of what only views read.
func testInspectionRBAC(t *testing.T, mc *framework.ManagementCluster) {
	ctx := testContext(t)
	in := setUpInspected(t, mc, "agent-inspect-rbac")
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "artifacts", "agent", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := framework.DecodeObjects(raw)
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	for _, obj := range objs {
		if obj.GetKind() == "ClusterRole" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
				t.Fatal(err)
			}
		}
	}
	readOnly := sets.New("pods", "events", "pods/log", "services")
	for _, rule := range role.Rules {
		for _, resource := range rule.Resources {
			if readOnly.Has(resource) && !sets.New("get", "list", "watch").IsSuperset(sets.New(rule.Verbs...)) {
				t.Errorf("the agent's ClusterRole allows %v on %s; an inspection only reads", rule.Verbs, resource)
			}
		}
	}

	const ns, account = "agent-inspect-rbac-agent", "maestro-agent"
	createNamespace(t, mc, ns)
	role.Name, role.ResourceVersion = "agent-inspect-rbac", ""
	if _, err := mc.Kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: ns}},
	}
	if _, err := mc.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := mc.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, account, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(mc.Config)
	cfg.BearerToken = token.Status.Token
	a, err := NewApplier(cfg)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		gvr  schema.GroupVersionResource
		view protocol.InspectionView
	}{
		{hostedClusterRef(in.clusters, "mycluster"), hostedClusters, protocol.InspectionView{View: protocol.ViewHostedCluster}},
		{hostedClusterRef(in.clusters, "mycluster"), hostedClusters, protocol.InspectionView{View: protocol.ViewNodePools}},
		{namespace(in.controlPlane), namespaces, protocol.InspectionView{View: protocol.ViewControlPlanePods}},
		{namespace(in.controlPlane), namespaces, protocol.InspectionView{View: protocol.ViewEvents}},
		{namespace(in.controlPlane), namespaces, protocol.InspectionView{View: protocol.ViewLogs, Container: "etcd"}},
	} {
		// The RBAC authorizer takes a moment to see a new binding: the first view waits for it.
		var answer protocol.InspectionAnswer
		var raw string
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, eventTimeout, true, func(context.Context) (bool, error) {
			answer, raw = inspect(t, a, inspectionBundle(t, tc.obj, tc.gvr, protocol.UpdateStrategyReadOnly, tc.view))
			return !strings.Contains(answer.Error, "forbidden"), nil
		})
		switch {
		case tc.view.View == protocol.ViewLogs:
			// Allowed, and refused for want of a kubelet: the error is not forbidden.
			if answer.Error == "" || strings.Contains(answer.Error, "forbidden") {
				t.Errorf("the logs view as the agent is answered %s", raw)
			}
		case answer.Error != "" || len(answer.Items) == 0:
			t.Errorf("the %s view as the agent is answered %s", tc.view.View, raw)
		}
	}
}
