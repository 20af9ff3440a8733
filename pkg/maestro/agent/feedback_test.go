package agent

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

func TestFeedbackValues(t *testing.T) {
	hostedCluster := func(status map[string]any) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hypershift.openshift.io/v1beta1",
			"kind":       "HostedCluster",
			"metadata":   map[string]any{"name": "mycluster", "namespace": "ocm-dev-1"},
		}}
		if status != nil {
			obj.Object["status"] = status
		}
		return obj
	}
	available := map[string]any{
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True"},
			map[string]any{"type": "Degraded", "status": "False"},
		},
		"controlPlaneEndpoint": map[string]any{"host": "api.example.com", "port": int64(443)},
		"ignitionEndpoint":     "ignition.example.com",
		"paused":               false,
		"ratio":                0.5,
	}
	deployment := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "namespace": "default"},
		"status":   map[string]any{"readyReplicas": int64(2), "replicas": int64(3)},
	}}
	jsonPaths := func(paths ...protocol.JSONPath) []protocol.FeedbackRule {
		return []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, JSONPaths: paths}}
	}

	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		rules   []protocol.FeedbackRule
		want    []protocol.FeedbackValue
		wantErr string
	}{{
		name:  "the whole status is JsonRaw, keys sorted",
		obj:   hostedCluster(map[string]any{"version": map[string]any{"desired": "4.20.8"}, "conditions": []any{}}),
		rules: jsonPaths(protocol.JSONPath{Name: "status", Path: ".status"}),
		want:  []protocol.FeedbackValue{{Name: "status", Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To(`{"conditions":[],"version":{"desired":"4.20.8"}}`)}}},
	}, {
		name: "scalars keep their type",
		obj:  hostedCluster(available),
		rules: jsonPaths(
			protocol.JSONPath{Name: "available", Path: `.status.conditions[?(@.type=="Available")].status`},
			protocol.JSONPath{Name: "port", Path: ".status.controlPlaneEndpoint.port"},
			protocol.JSONPath{Name: "ignition", Path: ".status.ignitionEndpoint"},
			protocol.JSONPath{Name: "paused", Path: ".status.paused"},
			protocol.JSONPath{Name: "ratio", Path: ".status.ratio"},
		),
		want: []protocol.FeedbackValue{
			{Name: "available", Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To("True")}},
			{Name: "port", Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: ptr.To[int64](443)}},
			{Name: "ignition", Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To("ignition.example.com")}},
			{Name: "paused", Value: protocol.FieldValue{Type: protocol.ValueBoolean, Boolean: ptr.To(false)}},
			{Name: "ratio", Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To("0.5")}},
		},
	}, {
		name:  "several matches are a JSON list",
		obj:   hostedCluster(available),
		rules: jsonPaths(protocol.JSONPath{Name: "types", Path: ".status.conditions[*].type"}),
		want:  []protocol.FeedbackValue{{Name: "types", Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To(`["Available","Degraded"]`)}}},
	}, {
		name: "a path that finds nothing is left out, without an error",
		obj:  hostedCluster(nil),
		rules: jsonPaths(
			protocol.JSONPath{Name: "status", Path: ".status"},
			protocol.JSONPath{Name: "available", Path: `.status.conditions[?(@.type=="Available")].status`},
		),
	}, {
		name: "a path for another version is an error; the other paths are still reported",
		obj:  hostedCluster(available),
		rules: jsonPaths(
			protocol.JSONPath{Name: "old", Version: "v1alpha1", Path: ".status.ignitionEndpoint"},
			protocol.JSONPath{Name: "ignition", Version: "v1beta1", Path: ".status.ignitionEndpoint"},
		),
		want:    []protocol.FeedbackValue{{Name: "ignition", Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To("ignition.example.com")}}},
		wantErr: "the path old is for version v1alpha1",
	}, {
		name:    "a path that does not parse is an error",
		obj:     hostedCluster(available),
		rules:   jsonPaths(protocol.JSONPath{Name: "broken", Path: ".status.conditions[?(@.type=="}),
		wantErr: "the path .status.conditions[?(@.type== of broken does not parse",
	}, {
		name:    "a value too large to report is an error",
		obj:     hostedCluster(map[string]any{"big": strings.Repeat("x", MaxJSONRawLength)}),
		rules:   jsonPaths(protocol.JSONPath{Name: "status", Path: ".status"}),
		wantErr: "more than the 65536 reported",
	}, {
		name:  "the well-known status of a Deployment",
		obj:   deployment,
		rules: []protocol.FeedbackRule{{Type: protocol.FeedbackWellKnownStatus}},
		want: []protocol.FeedbackValue{
			{Name: "ReadyReplicas", Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: ptr.To[int64](2)}},
			{Name: "Replicas", Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: ptr.To[int64](3)}},
		},
	}, {
		name:    "a kind without a well-known status is an error",
		obj:     hostedCluster(available),
		rules:   []protocol.FeedbackRule{{Type: protocol.FeedbackWellKnownStatus}},
		wantErr: "there is no well-known status for hypershift.openshift.io/v1beta1, Kind=HostedCluster",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FeedbackValues(tc.obj, tc.rules)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("FeedbackValues: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("FeedbackValues error = %v, want one containing %q", err, tc.wantErr)
			}
			if diff := cmpJSON(t, tc.want, got); diff != "" {
				t.Errorf("FeedbackValues:\n%s", diff)
			}
		})
	}
}
