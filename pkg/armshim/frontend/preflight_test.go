package frontend

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

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
		// target is the target of the resource's field error, a detail of its failure.
		target string
		// failedID is the resource ID a single failure names.
		failedID string
	}{
		{name: "nothing to check", status: "Succeeded"},
		{name: "a valid cluster", resources: []string{resource(names.ClusterType, "c1", minimalClusterBody)}, status: "Succeeded"},
		{name: "a cluster in another region", status: "Failed", target: "location", failedID: testRGPath + "/providers/" + names.ClusterType + "/c1",
			resources: []string{resource(names.ClusterType, "c1", strings.Replace(minimalClusterBody, "East US", "westus", 1))}},
		{name: "a template expression is the deployment's to evaluate", status: "Succeeded",
			resources: []string{resource(names.ClusterType, "c1", strings.Replace(minimalClusterBody, "East US", "[parameters('location')]", 1))}},
		{name: "other types and api-versions are not ours", status: "Succeeded",
			resources: []string{`{"type":"Microsoft.Storage/storageAccounts","name":"x","apiVersion":"2023-01-01","properties":7}`,
				`{"type":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","name":"c","apiVersion":"2019-01-01","properties":7}`}},
		{name: "a node pool of a cluster in the same deployment", status: "Succeeded",
			resources: []string{resource(names.NodePoolType, "c1/np1", minimalNodePoolBody)}},
		{name: "a node pool without properties", status: "Failed", target: "properties",
			failedID:  testRGPath + "/providers/" + names.ClusterType + "/c1/nodePools/np1",
			resources: []string{resource(names.NodePoolType, "c1/np1", `{"location":"eastus"}`)}},
		{name: "an external auth of a cluster in the same deployment", status: "Succeeded",
			resources: []string{resource(names.ExternalAuthType, "c1/entra", minimalExternalAuthBody)}},
		{name: "an external auth without properties", status: "Failed", target: "properties",
			failedID:  testRGPath + "/providers/" + names.ClusterType + "/c1/externalAuths/entra",
			resources: []string{resource(names.ExternalAuthType, "c1/entra", `{}`)}},
		{name: "a resource that cannot be read is the deployment's", status: "Succeeded",
			resources: []string{`"x"`, `{"type":7}`}},
		{name: "two failures", status: "Failed",
			resources: []string{resource(names.NodePoolType, "c1/np1", `{"location":"eastus"}`), resource(names.ClusterType, "c1", `{"location":"westus"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			// ARM's own api-version: each resource names its own.
			rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version=2020-06-01",
				`{"resources":[`+strings.Join(tt.resources, ",")+`]}`)
			var got preflightResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if got.Status != tt.status {
				t.Fatalf("status %q, want %q: %s", got.Status, tt.status, rec.Body)
			}
			// As the public frontend words it: each failing resource is "Content validation failed for
			// '<its name>'" at its resource ID, with its errors as details.
			if tt.failedID != "" {
				e := got.Error
				if e == nil || e.Target != tt.failedID || !strings.HasPrefix(e.Message, "Content validation failed for 'c1") ||
					len(e.Details) != 1 || e.Details[0].Target != tt.target || e.Details[0].Code != e.Code {
					t.Errorf("error %+v, want the failure of %s with one detail at %q", e, tt.failedID, tt.target)
				}
			}
			if len(tt.resources) == 2 && tt.status == "Failed" {
				e := got.Error
				if e == nil || e.Code != CodeMultipleErrorsOccurred || e.Message != "Preflight validation failed on multiple resources" ||
					len(e.Details) != 2 || e.Details[0].Message != "Content validation failed for 'c1/np1'" || e.Details[1].Message != "Content validation failed for 'c1'" {
					t.Errorf("two failures: %+v", e)
				}
			}
		})
	}
}

// TestPreflightBounds checks what one preflight can cost: ARM's limit of 800 resources a deployment, a
// resource named twice checked once, and a node pool's cluster read once for all its node pools.
func TestPreflightBounds(t *testing.T) {
	resources := func(n int, name func(i int) (string, string)) string {
		var rs []string
		for i := range n {
			typ, nm := name(i)
			body := minimalClusterBody
			if typ == names.NodePoolType {
				body = minimalNodePoolBody
			}
			rs = append(rs, `{"type":"`+typ+`","name":"`+nm+`","apiVersion":"`+testAPI+`",`+strings.TrimPrefix(body, "{"))
		}
		return `{"resources":[` + strings.Join(rs, ",") + `]}`
	}
	distinct := func(i int) (string, string) { return names.ClusterType, fmt.Sprintf("c%d", i) }
	tests := []struct {
		name string
		body string
		// status is the HTTP status, 200 whatever the content; preflight is the verdict, none for a
		// deployment refused whole.
		status    int
		preflight string
		// maxCalls bounds the requests to the API, the subscription's read included.
		maxCalls int
	}{
		{name: "800 clusters", body: resources(800, distinct), status: 200, preflight: "Succeeded", maxCalls: 1 + 2*800},
		{name: "801 clusters", body: resources(801, distinct), status: 200, maxCalls: 1},
		{name: "a body that is not a deployment", body: `{"resources": 7}`, status: 200, maxCalls: 1},
		{name: "one cluster 800 times", body: resources(800, func(int) (string, string) { return names.ClusterType, "same" }),
			status: 200, preflight: "Succeeded", maxCalls: 1 + 2},
		{name: "800 node pools of a cluster not yet created", body: resources(800, func(i int) (string, string) {
			return names.NodePoolType, fmt.Sprintf("c1/np%d", i)
		}), status: 200, preflight: "Succeeded", maxCalls: 1 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, client := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version="+testAPI, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %.500s", rec.Code, tt.status, rec.Body)
			}
			if tt.preflight != "" {
				var got preflightResponse
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Status != tt.preflight {
					t.Errorf("preflight %q, want %q: %.500s", got.Status, tt.preflight, rec.Body)
				}
			} else if ce := cloudError(t, rec); ce.Code != CodeInvalidRequestContent || strings.Contains(rec.Body.String(), `"status"`) {
				t.Errorf("a deployment refused whole: %s, want InvalidRequestContent and no verdict", rec.Body)
			}
			if n := len(client.Actions()); n > tt.maxCalls {
				t.Errorf("%d requests to the API, want at most %d", n, tt.maxCalls)
			}
		})
	}
}

// BenchmarkPreflight800 measures the shim's own cost of a preflight at ARM's limit, 800 distinct
// clusters, against the fake clientset (the API's own cost is TestPreflightCost's).
func BenchmarkPreflight800(b *testing.B) {
	var rs []string
	for i := range maxDeploymentResources {
		rs = append(rs, fmt.Sprintf(`{"type":%q,"name":"c%d","apiVersion":%q,`, names.ClusterType, i, testAPI)+strings.TrimPrefix(minimalClusterBody, "{"))
	}
	body := `{"resources":[` + strings.Join(rs, ",") + `]}`
	for b.Loop() {
		f, err := New(Config{Client: newFakeClient(subscription(hcpv1alpha1.ARMSubscriptionRegistered)), Location: "eastus"})
		if err != nil {
			b.Fatal(err)
		}
		if rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version="+testAPI, body); rec.Code != 200 {
			b.Fatalf("%d %.300s", rec.Code, rec.Body)
		}
	}
}

// TestPreflightThrottledIsNotAVerdict: the API throttling preflight's dry runs is the service's state, not
// the template's: ARM hears 429 and retries, where a Failed verdict would fail the deployment.
func TestPreflightThrottledIsNotAVerdict(t *testing.T) {
	f, client := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	client.PrependReactor("create", "hcpclusters", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewTooManyRequests("slow down", 3)
	})
	body := `{"resources":[{"type":"` + names.ClusterType + `","name":"c1","apiVersion":"` + testAPI + `",` + strings.TrimPrefix(minimalClusterBody, "{") + `]}`
	rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version="+testAPI, body)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "3" || strings.Contains(rec.Body.String(), `"status"`) {
		t.Errorf("%d Retry-After %q %s; want 429 with the API's Retry-After and no verdict", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
}
