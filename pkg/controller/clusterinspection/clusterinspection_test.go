package clusterinspection

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const consumer = "mc-1"

// world is a cluster stuck in Provisioning, placed on mc-1, and an inspection of its events made now.
type world struct {
	cluster    *v1alpha1.HCPCluster
	inspection *v1alpha1.ClusterInspection
}

func newWorld() world {
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateProvisioning
	cluster.Status.ManagementCluster = consumer
	cluster.Status.ClusterID = "11111111-2222-3333-4444-555555555555"
	ci := &v1alpha1.ClusterInspection{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev-abcde", UID: types.UID("uid-1"), Generation: 1,
			CreationTimestamp: metav1.Now(), Finalizers: []string{v1alpha1.DeliveryFinalizer}},
		Spec: v1alpha1.ClusterInspectionSpec{ClusterName: "dev", View: v1alpha1.InspectionViewEvents,
			Reason: "stuck in Provisioning", TTLSeconds: ptr.To[int64](900)},
		Status: v1alpha1.ClusterInspectionStatus{Phase: v1alpha1.ClusterInspectionPhasePending,
			ExpirationTimestamp: &metav1.Time{Time: time.Now().Add(15 * time.Minute)}},
	}
	return world{cluster: cluster, inspection: ci}
}

type harness struct {
	r           *bundle.Reconciler[*v1alpha1.ClusterInspection]
	client      *fake.Clientset
	publisher   *controllertest.RecordingPublisher
	inspections interface{ Update(any) error }
}

// start fills the informers and the fake clientset with w, by hand: the tests call Sync themselves.
func start(t *testing.T, w world) *harness {
	t.Helper()
	mc := fixtures.ManagementCluster(consumer)
	client := fake.NewClientset(mc, w.cluster, w.inspection)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	p := controllertest.NewRecordingPublisher()
	r, err := New(client, hcp.ClusterInspections(), hcp.HCPClusters(), hcp.ManagementClusters(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for indexer, obj := range map[interface{ Add(any) error }]runtime.Object{
		hcp.ManagementClusters().Informer().GetIndexer(): mc,
		hcp.HCPClusters().Informer().GetIndexer():        w.cluster,
		hcp.ClusterInspections().Informer().GetIndexer(): w.inspection,
	} {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return &harness{r: r, client: client, publisher: p, inspections: hcp.ClusterInspections().Informer().GetIndexer()}
}

// sync syncs the inspection as stored, the informer seeing what the last sync wrote; nil once deleted.
func (h *harness) sync(t *testing.T) *v1alpha1.ClusterInspection {
	t.Helper()
	get := func() *v1alpha1.ClusterInspection {
		got, err := h.client.HcpV1alpha1().ClusterInspections("ns").Get(context.Background(), "dev-abcde", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	stored := get()
	if stored == nil {
		return nil
	}
	if err := h.inspections.Update(stored); err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.Sync(context.Background(), "ns/dev-abcde"); err != nil {
		t.Fatal(err)
	}
	return get()
}

func answered(t *testing.T, ci *v1alpha1.ClusterInspection) *metav1.Condition {
	t.Helper()
	cond := meta.FindStatusCondition(ci.Status.Conditions, v1alpha1.ConditionAnswered)
	if cond == nil {
		t.Fatalf("inspection has no Answered condition: %+v", ci.Status)
	}
	return cond
}

// reportAnswer is the agent's report of the inspection's bundle with answer as feedback of kind.
func reportAnswer(t *testing.T, kind string, answer protocol.InspectionAnswer) source.BundleStatus {
	t.Helper()
	raw, err := json.Marshal(answer)
	if err != nil {
		t.Fatal(err)
	}
	return source.BundleStatus{Consumer: consumer, ResourceID: "uid-1", Generation: 1, SequenceID: 1, Status: &protocol.ManifestBundleStatus{
		Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		ResourceStatus: []protocol.ManifestCondition{{
			ResourceMeta: protocol.ManifestResourceMeta{Kind: kind},
			StatusFeedback: protocol.StatusFeedbackResult{Values: []protocol.FeedbackValue{{Name: protocol.InspectionFeedbackName,
				Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To(string(raw))}}}},
		}},
	}}
}

func TestInspectionIsAskedAnsweredAndWithdrawn(t *testing.T) {
	w := newWorld()
	h := start(t, w)
	ci := h.sync(t)
	if ci.Status.Phase != v1alpha1.ClusterInspectionPhasePending || answered(t, ci).Reason != "WaitingForAgent" {
		t.Errorf("after delivery: %s %+v, want Pending WaitingForAgent", ci.Status.Phase, answered(t, ci))
	}
	b := h.publisher.Bundles["uid-1"]
	if h.publisher.Applied[consumer+"/uid-1"] != 1 || b == nil || len(b.Manifests) != 1 {
		t.Fatalf("published %v, want the inspection's bundle of one manifest on %s", h.publisher.Applied, consumer)
	}
	cfg := b.ManifestConfigs[0]
	wantNamespace := render.ControlPlaneNamespace(render.DefaultEnvironment, w.cluster)
	if cfg.UpdateStrategy == nil || cfg.UpdateStrategy.Type != protocol.UpdateStrategyReadOnly || cfg.ResourceIdentifier.Resource != "namespaces" ||
		cfg.ResourceIdentifier.Name != wantNamespace || len(cfg.FeedbackRules) != 1 || cfg.FeedbackRules[0].Type != protocol.FeedbackInspection ||
		cfg.FeedbackRules[0].Inspection.View != protocol.ViewEvents {
		t.Errorf("the bundle asks %+v, want a ReadOnly read of namespace %s with the events view", cfg, wantNamespace)
	}

	readAt := metav1.NewTime(time.Now().Truncate(time.Second))
	event := json.RawMessage(`{"reason":"BackOff","message":"Back-off restarting failed container kube-apiserver"}`)
	h.publisher.Report(reportAnswer(t, "Namespace", protocol.InspectionAnswer{View: protocol.ViewEvents, ReadAt: readAt,
		Items: []json.RawMessage{event}, Truncated: true, Omitted: 40}))
	ci = h.sync(t)
	if ci.Status.Phase != v1alpha1.ClusterInspectionPhaseAnswered || answered(t, ci).Status != metav1.ConditionTrue ||
		!ci.Status.ReadAt.Equal(&readAt) || len(ci.Status.Items) != 1 || string(ci.Status.Items[0].Raw) != string(event) ||
		!ci.Status.Truncated || ci.Status.Omitted != 40 || !strings.Contains(answered(t, ci).Message, "truncated") {
		t.Errorf("after the answer: %+v, want Answered at %v with the event, truncated, 40 left out", ci.Status, readAt)
	}

	// Answered: nothing of the inspection stays on the management cluster.
	h.sync(t)
	if !h.publisher.Deleted.Has(consumer + "/uid-1") {
		t.Errorf("the bundle of an answered inspection was not withdrawn: deleted %v", h.publisher.Deleted)
	}
	h.publisher.Report(source.BundleStatus{Consumer: consumer, ResourceID: "uid-1", Generation: 1, Deleted: true})
	if ci = h.sync(t); len(ci.Finalizers) != 0 || ci.Status.Phase != v1alpha1.ClusterInspectionPhaseAnswered || len(ci.Status.Items) != 1 {
		t.Errorf("after the bundle was deleted: finalizers %v, status %+v; want none, still Answered with the event", ci.Finalizers, ci.Status)
	}
}

func TestInspectionFails(t *testing.T) {
	refused := source.BundleStatus{Consumer: consumer, ResourceID: "uid-1", Generation: 1, SequenceID: 1, Status: &protocol.ManifestBundleStatus{
		Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionFalse, Reason: "InspectionRefused",
			Message: "manifest 0 (Secret x) is no object the view reads"}},
	}}
	for _, tc := range []struct {
		name    string
		report  func(t *testing.T) source.BundleStatus
		reason  string
		message string
	}{
		{name: "refused by the agent", report: func(*testing.T) source.BundleStatus { return refused }, reason: "Refused", message: "Secret x"},
		{name: "a view that cannot be read", reason: "ViewUnreadable", message: "no kubelet serves the log",
			report: func(t *testing.T) source.BundleStatus {
				return reportAnswer(t, "Namespace", protocol.InspectionAnswer{View: protocol.ViewLogs, ReadAt: metav1.Now(),
					Error: "no kubelet serves the log"})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, newWorld())
			h.sync(t)
			h.publisher.Report(tc.report(t))
			ci := h.sync(t)
			if ci.Status.Phase != v1alpha1.ClusterInspectionPhaseFailed || answered(t, ci).Reason != tc.reason ||
				!strings.Contains(answered(t, ci).Message, tc.message) {
				t.Errorf("phase %s, Answered %+v; want Failed, %s, saying %q", ci.Status.Phase, answered(t, ci), tc.reason, tc.message)
			}
		})
	}
}

func TestInspectionWaitsForPlacementAndExpires(t *testing.T) {
	w := newWorld()
	w.cluster.Status.ManagementCluster = ""
	h := start(t, w)
	ci := h.sync(t)
	if ci.Status.Phase != v1alpha1.ClusterInspectionPhasePending || answered(t, ci).Reason != "WaitingForCluster" || len(h.publisher.Applied) != 0 {
		t.Errorf("inspection of an unplaced cluster: %s %+v, published %v; want Pending WaitingForCluster, nothing published",
			ci.Status.Phase, answered(t, ci), h.publisher.Applied)
	}

	w = newWorld()
	w.inspection.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(-time.Second)}
	h = start(t, w)
	if ci := h.sync(t); ci != nil && ci.DeletionTimestamp == nil {
		t.Errorf("an expired inspection is still there: %+v", ci.ObjectMeta)
	}
}
