package maestro

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// TestInspection sends the maestro-agent binary an inspection as the server renders it, and two forged
// ones: one that reads a Secret, one that writes. The first is answered with the namespace's events; the
// forged ones are refused whole, say why in their status, and neither reads nor writes anything.
func TestInspection(t *testing.T) {
	h := newHarness(t, embeddedBroker)
	const ns = "ocm-dev-cluster-9-dev"
	if _, err := h.mc.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.mc.Kube.CoreV1().Events(ns).Create(t.Context(), &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "kube-apiserver.backoff", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "kube-apiserver-0", Namespace: ns},
		Reason:         "BackOff", Message: "Back-off restarting failed container kube-apiserver", Type: corev1.EventTypeWarning, Count: 3,
		LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "kubelet"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	inspection, err := render.Inspection("", "", ns, protocol.InspectionView{View: protocol.ViewEvents})
	if err != nil {
		t.Fatal(err)
	}
	const asked = "4a6c1b1e-0000-4000-8000-0000000000a1"
	h.apply(asked, 1, inspection)
	st := h.waitStatus(asked, "with the events answer", func(st source.BundleStatus) bool {
		_, ok := feedback(st, "Namespace", protocol.InspectionFeedbackName)
		return ok
	})
	v, _ := feedback(st, "Namespace", protocol.InspectionFeedbackName)
	var answer protocol.InspectionAnswer
	if v.JSONRaw == nil || json.Unmarshal([]byte(*v.JSONRaw), &answer) != nil || answer.View != protocol.ViewEvents ||
		len(answer.Items) != 1 || !strings.Contains(string(answer.Items[0]), "Back-off restarting failed container kube-apiserver") {
		t.Errorf("the answer to the events view is %s, want the namespace's one event", describe(st))
	}

	// A Secret dressed up as an inspection, and an inspection that would write its namespace.
	secretRead := forgedInspection(t, inspection, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"pull-secret","namespace":"`+ns+`"},"data":{"x":"eA=="}}`,
		"secrets", "pull-secret", ns, protocol.UpdateStrategyReadOnly)
	namespaceWrite := forgedInspection(t, inspection, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`","labels":{"owned":"yes"}}}`,
		"namespaces", ns, "", protocol.UpdateStrategyServerSideApply)
	for id, tc := range map[string]struct {
		bundle *protocol.ManifestBundle
		why    string
	}{
		"4a6c1b1e-0000-4000-8000-0000000000a2": {secretRead, "Secret"},
		"4a6c1b1e-0000-4000-8000-0000000000a3": {namespaceWrite, "ServerSideApply"},
	} {
		h.apply(id, 1, tc.bundle)
		st := h.waitStatus(id, "refused", func(st source.BundleStatus) bool {
			return st.Status != nil && meta.FindStatusCondition(st.Status.Conditions, agent.ConditionApplied) != nil
		})
		applied := meta.FindStatusCondition(st.Status.Conditions, agent.ConditionApplied)
		if applied.Status != metav1.ConditionFalse || applied.Reason != agent.ReasonInspectionRefused || !strings.Contains(applied.Message, tc.why) {
			t.Errorf("a forged inspection (%s) was not refused with the reason: %s", tc.why, describe(st))
		}
		if _, ok := feedback(st, "Secret", protocol.InspectionFeedbackName); ok {
			t.Errorf("a forged inspection of a Secret was answered: %s", describe(st))
		}
	}
	if _, err := h.mc.Kube.CoreV1().Secrets(ns).Get(t.Context(), "pull-secret", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the forged Secret: %v, want it never written", err)
	}
	if got, err := h.mc.Kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil || got.Labels["owned"] != "" {
		t.Errorf("the namespace a forged inspection would write: labels %v, %v; want it untouched", got.Labels, err)
	}
}

// forgedInspection is bundle with its one manifest replaced by raw, of resource name/namespace, applied
// with strategy: what a source that is not the server's inspection path could send.
func forgedInspection(t *testing.T, bundle *protocol.ManifestBundle, raw, resource, name, namespace string, strategy protocol.UpdateStrategyType) *protocol.ManifestBundle {
	t.Helper()
	forged := &protocol.ManifestBundle{
		Manifests:       []json.RawMessage{json.RawMessage(raw)},
		DeleteOption:    bundle.DeleteOption,
		ManifestConfigs: []protocol.ManifestConfigOption{bundle.ManifestConfigs[0]},
	}
	forged.ManifestConfigs[0].ResourceIdentifier = protocol.ResourceIdentifier{Resource: resource, Name: name, Namespace: namespace}
	forged.ManifestConfigs[0].UpdateStrategy = &protocol.UpdateStrategy{Type: strategy}
	return forged
}
