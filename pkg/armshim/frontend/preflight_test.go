package frontend

import (
	"encoding/json"
	"strings"
	"testing"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// TestPreflight checks what preflight decides before the API: that the dry run writes nothing is for
// the test against the real server (the fake clientset ignores dryRun).
func TestPreflight(t *testing.T) {
	resource := func(typ, name, body string) string {
		var r map[string]any
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		r["type"], r["name"], r["apiVersion"] = typ, name, testAPI
		raw, _ := json.Marshal(r)
		return string(raw)
	}
	tests := []struct {
		name      string
		resources []string
		status    string
		target    string
	}{
		{name: "nothing to check", status: "Succeeded"},
		{name: "a valid cluster", resources: []string{resource(names.ClusterType, "c1", minimalClusterBody)}, status: "Succeeded"},
		{name: "a cluster in another region", status: "Failed", target: "location",
			resources: []string{resource(names.ClusterType, "c1", strings.Replace(minimalClusterBody, "East US", "westus", 1))}},
		{name: "a template expression is the deployment's to evaluate", status: "Succeeded",
			resources: []string{resource(names.ClusterType, "c1", strings.Replace(minimalClusterBody, "East US", "[parameters('location')]", 1))}},
		{name: "other types and api-versions are not ours", status: "Succeeded",
			resources: []string{`{"type":"Microsoft.Storage/storageAccounts","name":"x","apiVersion":"2023-01-01","properties":7}`,
				`{"type":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","name":"c","apiVersion":"2019-01-01","properties":7}`}},
		{name: "a node pool of a cluster in the same deployment", status: "Succeeded",
			resources: []string{resource(names.NodePoolType, "c1/np1", minimalNodePoolBody)}},
		{name: "a node pool without properties", status: "Failed", target: "properties",
			resources: []string{resource(names.NodePoolType, "c1/np1", `{"location":"eastus"}`)}},
		{name: "two failures", status: "Failed",
			resources: []string{resource(names.NodePoolType, "c1/np1", `{"location":"eastus"}`), resource(names.ClusterType, "c1", `{"location":"westus"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version="+testAPI,
				`{"resources":[`+strings.Join(tt.resources, ",")+`]}`)
			var got preflightResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if got.Status != tt.status {
				t.Fatalf("status %q, want %q: %s", got.Status, tt.status, rec.Body)
			}
			if tt.target != "" && (got.Error == nil || got.Error.Target != tt.target) {
				t.Errorf("error %+v, want target %q", got.Error, tt.target)
			}
			if len(tt.resources) == 2 && tt.status == "Failed" && (got.Error == nil || got.Error.Code != CodeMultipleErrorsOccurred) {
				t.Errorf("two failures: %+v", got.Error)
			}
		})
	}
}
