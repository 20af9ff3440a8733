package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

func TestBuildStatus(t *testing.T) {
	hcMeta := protocol.ManifestResourceMeta{Ordinal: 1, Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster",
		Resource: "hostedclusters", Name: "mycluster", Namespace: "ocm-dev-1"}
	nsMeta := protocol.ManifestResourceMeta{Ordinal: 0, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "ocm-dev-1"}
	bundle := &protocol.ManifestBundle{
		Manifests: []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{}`)},
		ManifestConfigs: []protocol.ManifestConfigOption{{
			ResourceIdentifier: protocol.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Name: "mycluster", Namespace: "ocm-dev-1"},
			FeedbackRules:      []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{{Name: "status", Path: ".status"}}}},
		}},
	}
	applied := []AppliedResource{{Meta: nsMeta, Owned: true}, {Meta: hcMeta, Owned: true}}
	objects := map[string]*unstructured.Unstructured{
		"namespaces": {Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ocm-dev-1"}}},
		"hostedclusters": {Object: map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
			"metadata": map[string]any{"name": "mycluster", "namespace": "ocm-dev-1"},
			"status":   map[string]any{"version": map[string]any{"desired": map[string]any{"version": "4.20.8"}}}}},
	}
	get := func(m protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
		return objects[m.Resource], nil
	}

	first := BuildStatus(3, bundle, applied, get, nil)
	// No manifestBundle: the spec is not echoed back, as the OCM work agent does not.
	want := &protocol.ManifestBundleStatus{
		Conditions: []metav1.Condition{
			{Type: "Applied", Status: "True", ObservedGeneration: 3, Reason: "AppliedManifestWorkComplete", Message: "Apply manifest work complete"},
			{Type: "Available", Status: "True", ObservedGeneration: 3, Reason: "ResourcesAvailable", Message: "All resources are available"},
		},
		ResourceStatus: []protocol.ManifestCondition{{
			ResourceMeta: nsMeta,
			Conditions: []metav1.Condition{
				{Type: "Applied", Status: "True", Reason: "AppliedManifestComplete", Message: "Apply manifest complete"},
				{Type: "Available", Status: "True", Reason: "ResourceAvailable", Message: "Resource is available"},
				{Type: "StatusFeedbackSynced", Status: "True", Reason: "NoStatusFeedbackSynced"},
			},
		}, {
			ResourceMeta: hcMeta,
			StatusFeedback: protocol.StatusFeedbackResult{Values: []protocol.FeedbackValue{{Name: "status",
				Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To(`{"version":{"desired":{"version":"4.20.8"}}}`)}}}},
			Conditions: []metav1.Condition{
				{Type: "Applied", Status: "True", Reason: "AppliedManifestComplete", Message: "Apply manifest complete"},
				{Type: "Available", Status: "True", Reason: "ResourceAvailable", Message: "Resource is available"},
				{Type: "StatusFeedbackSynced", Status: "True", Reason: "StatusFeedbackSynced"},
			},
		}},
	}
	if diff := cmpJSON(t, want, withoutTimes(first)); diff != "" {
		t.Errorf("BuildStatus:\n%s", diff)
	}
	firstHash := mustHash(t, first)

	t.Run("an unchanged status hashes the same, transition times and all", func(t *testing.T) {
		// As if first had been built an hour ago: the conditions keep their times while their status stays.
		earlier := withoutTimes(first)
		hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		setTimes(earlier, hourAgo)
		again := BuildStatus(3, bundle, applied, get, earlier)
		if mustHash(t, again) != mustHash(t, earlier) {
			t.Errorf("the same status hashed differently:\n%s", cmpJSON(t, earlier, again))
		}
	})

	t.Run("a changed status value changes the hash", func(t *testing.T) {
		objects := map[string]*unstructured.Unstructured{"namespaces": objects["namespaces"], "hostedclusters": objects["hostedclusters"].DeepCopy()}
		if err := unstructured.SetNestedField(objects["hostedclusters"].Object, "Completed", "status", "version", "history"); err != nil {
			t.Fatal(err)
		}
		changed := BuildStatus(3, bundle, applied, func(m protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
			return objects[m.Resource], nil
		}, first)
		if mustHash(t, changed) == firstHash {
			t.Error("a changed status value kept the hash")
		}
	})

	t.Run("a new generation changes the hash", func(t *testing.T) {
		if mustHash(t, BuildStatus(4, bundle, applied, get, first)) == firstHash {
			t.Error("generation 4 hashed as generation 3")
		}
	})

	t.Run("a failed apply and a missing object", func(t *testing.T) {
		failed := []AppliedResource{{Meta: nsMeta, Owned: true}, {Meta: hcMeta, Owned: true, Err: errors.New("admission webhook said no")}}
		missing := func(m protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
			if m.Resource == "hostedclusters" {
				return nil, nil
			}
			return objects[m.Resource], nil
		}
		hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		previous := withoutTimes(first)
		setTimes(previous, hourAgo)
		got := BuildStatus(3, bundle, failed, missing, previous)
		assertCondition(t, got.Conditions, "Applied", "False", "AppliedManifestWorkFailed")
		assertCondition(t, got.Conditions, "Available", "False", "ResourcesNotAvailable")
		hc := got.ResourceStatus[1]
		assertCondition(t, hc.Conditions, "Applied", "False", "AppliedManifestFailed")
		if c := meta.FindStatusCondition(hc.Conditions, "Applied"); !strings.Contains(c.Message, "admission webhook said no") {
			t.Errorf("the Applied condition does not say why: %q", c.Message)
		}
		assertCondition(t, hc.Conditions, "Available", "False", "ResourceNotAvailable")
		if len(hc.StatusFeedback.Values) != 0 || meta.FindStatusCondition(hc.Conditions, "StatusFeedbackSynced") != nil {
			t.Errorf("a missing object reported feedback: %+v", hc)
		}
		// Available changed status: its time moved; the namespace's Applied did not change, nor did its time.
		if c := meta.FindStatusCondition(got.Conditions, "Available"); c.LastTransitionTime.Equal(&hourAgo) {
			t.Errorf("Available changed from True to False and kept its transition time %v", hourAgo)
		}
		if c := meta.FindStatusCondition(got.ResourceStatus[0].Conditions, "Applied"); !c.LastTransitionTime.Equal(&hourAgo) {
			t.Errorf("the namespace's Applied stayed True and its transition time moved to %v", c.LastTransitionTime)
		}
	})

	t.Run("a fetch error makes Available unknown", func(t *testing.T) {
		got := BuildStatus(3, bundle, applied, func(protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) {
			return nil, errors.New("connection refused")
		}, nil)
		assertCondition(t, got.Conditions, "Available", "Unknown", "ResourcesStatusUnknown")
		assertCondition(t, got.ResourceStatus[0].Conditions, "Available", "Unknown", "FetchingResourceFailed")
	})

	t.Run("Deleted is added to the last status", func(t *testing.T) {
		deleted := DeletedStatus(3, first)
		assertCondition(t, deleted.Conditions, "Deleted", "True", "ManifestsDeleted")
		if len(deleted.ResourceStatus) != 2 || meta.FindStatusCondition(first.Conditions, "Deleted") != nil {
			t.Errorf("DeletedStatus dropped the resource status or changed the status it was given")
		}
	})
}

func assertCondition(t *testing.T, conditions []metav1.Condition, conditionType, status, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(conditions, conditionType)
	if c == nil {
		t.Errorf("no %s condition in %+v", conditionType, conditions)
		return
	}
	if string(c.Status) != status || c.Reason != reason {
		t.Errorf("%s = %s (%s: %s), want %s (%s)", conditionType, c.Status, c.Reason, c.Message, status, reason)
	}
}

func mustHash(t *testing.T, s *protocol.ManifestBundleStatus) string {
	t.Helper()
	h, err := StatusHash(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 64 {
		t.Fatalf("StatusHash = %q, want 64 hex digits", h)
	}
	return h
}

// withoutTimes returns a copy of s without transition times, to compare with a literal.
func withoutTimes(s *protocol.ManifestBundleStatus) *protocol.ManifestBundleStatus {
	raw, _ := json.Marshal(s)
	out := &protocol.ManifestBundleStatus{}
	_ = json.Unmarshal(raw, out)
	setTimes(out, metav1.Time{})
	return out
}

func setTimes(s *protocol.ManifestBundleStatus, t metav1.Time) {
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = t
	}
	for i := range s.ResourceStatus {
		for j := range s.ResourceStatus[i].Conditions {
			s.ResourceStatus[i].Conditions[j].LastTransitionTime = t
		}
	}
}
