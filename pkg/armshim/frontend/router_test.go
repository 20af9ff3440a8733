package frontend

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapiserver "k8s.io/apiserver/pkg/server"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
)

// TestPathNames sends names ARM would never pass on (sent as a client would, percent-encoded where
// they must be): each is the caller's 400 or 404 in ARM's codes, and none reaches the API, whose names
// take fewer characters and whose client refuses some before sending.
func TestPathNames(t *testing.T) {
	const (
		rg     = "/resourceGroups/Dev-RG"
		cl     = "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev-Cluster"
		subURL = "/subscriptions/" + testSub
		ops    = subURL + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/"
	)
	api := "?api-version=" + testAPI
	tests := []struct {
		name   string
		method string
		target string
		status int
		code   string
	}{
		{"subscription %", "GET", "/subscriptions/%25" + rg + cl + api, 400, CodeInvalidSubscriptionID},
		{"subscription .", "GET", "/subscriptions/." + rg + cl + api, 400, CodeInvalidSubscriptionID},
		{"subscription ..", "GET", "/subscriptions/.." + rg + cl + api, 400, CodeInvalidSubscriptionID},
		{"subscription not a GUID", "PUT", "/subscriptions/not-a-guid?api-version=2.0", 400, CodeInvalidSubscriptionID},
		{"subscription GUID in braces", "GET", "/subscriptions/%7B" + testSub + "%7D" + rg + cl + api, 400, CodeInvalidSubscriptionID},
		{"resource group .", "GET", subURL + "/resourceGroups/." + cl + api, 400, CodeInvalidResourceGroupName},
		{"resource group ..", "GET", subURL + "/resourceGroups/.." + cl + api, 400, CodeInvalidResourceGroupName},
		{"resource group %", "GET", subURL + "/resourceGroups/%25" + cl + api, 400, CodeInvalidResourceGroupName},
		{"resource group ending in a period", "GET", subURL + "/resourceGroups/rg." + cl + api, 400, CodeInvalidResourceGroupName},
		{"resource group of 91 characters", "GET", subURL + "/resourceGroups/" + strings.Repeat("r", 91) + cl + api, 400, CodeInvalidResourceGroupName},
		{"resource group list %", "GET", subURL + "/resourceGroups/%25/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + api, 400, CodeInvalidResourceGroupName},
		{"cluster .", "GET", subURL + rg + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/." + api, 400, CodeInvalidResourceName},
		{"cluster %", "PUT", subURL + rg + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/%25" + api, 400, CodeInvalidResourceName},
		{"node pool ..", "GET", subURL + rg + cl + "/nodePools/.." + api, 400, CodeInvalidResourceName},
		{"node pools of cluster ..", "GET", subURL + rg + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/../nodePools" + api, 400, CodeInvalidResourceName},
		{"operation .", "GET", ops + "." + api, 404, CodeNotFound},
		{"operation ..", "GET", ops + ".." + api, 404, CodeNotFound},
		{"operation %", "GET", ops + "%25" + api, 404, CodeNotFound},
		{"operation in upper case is not a GUID", "GET", ops + "NOT-AN-OPERATION" + api, 404, CodeNotFound},
		{"operation result ..", "GET", subURL + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationResults/.." + api, 404, CodeNotFound},
		{"deployment %", "POST", subURL + rg + "/providers/Microsoft.RedHatOpenShift/deployments/%25/preflight" + api, 400, CodeInvalidResourceName},
		{"deployment of 65 characters", "POST", subURL + rg + "/providers/Microsoft.RedHatOpenShift/deployments/" + strings.Repeat("d", 65) + "/preflight" + api, 400, CodeInvalidResourceName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, client := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			body := ""
			if tt.method != "GET" {
				body = `{"resources":[]}`
			}
			rec := call(f, tt.method, tt.target, body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if ce := cloudError(t, rec); ce.Code != tt.code {
				t.Errorf("code = %q, want %q: %s", ce.Code, tt.code, ce.Message)
			}
			if actions := client.Actions(); len(actions) > 0 {
				t.Errorf("the request reached the API: %v", actions)
			}
		})
	}

	// Names ARM takes still pass.
	f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	for _, target := range []string{
		strings.ToLower(subURL) + "/resourceGroups/My_RG(1).x-y/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + api,
		subURL + "/resourceGroups/" + strings.Repeat("r", 90) + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + api,
		subURL + "/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + api,
	} {
		if rec := call(f, "GET", target, ""); rec.Code != 200 {
			t.Errorf("GET %s = %d: %s", target, rec.Code, rec.Body)
		}
	}
}

// TestBodyLimits checks the limits a body meets before anything decodes it: its size, under the API's
// own limit so that a body the shim takes is one the API takes, and its nesting.
func TestBodyLimits(t *testing.T) {
	apiLimit := genericapiserver.NewConfig(serializer.NewCodecFactory(runtime.NewScheme())).MaxRequestBodyBytes
	if maxBodyBytes >= apiLimit {
		t.Errorf("the shim takes bodies of %d bytes, hcp-apiserver only %d", maxBodyBytes, apiLimit)
	}
	nested := func(depth int) string {
		return `{"location":"eastus","tags":{},"properties":{"version":{"id":"4.20"},"platform":{"subnetId":"s","networkSecurityGroupId":"n"}},"x":` +
			strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{name: "at the size limit", body: atSize(`{"location":"eastus","properties":{"version":{"id":"4.20"},"platform":{"subnetId":"s","networkSecurityGroupId":"n"}},"x":"`,
			`"}`, maxBodyBytes), status: 201},
		{name: "over the size limit", body: `{"x":"` + strings.Repeat("x", maxBodyBytes) + `"}`, status: 400, code: CodeInvalidResource},
		{name: "nesting at the limit", body: nested(jsonlimit.MaxDepth), status: 201},
		{name: "nesting over the limit", body: nested(jsonlimit.MaxDepth + 1), status: 400, code: CodeInvalidRequestContent},
		{name: "nesting far over the limit", body: strings.Repeat("[", 100000), status: 400, code: CodeInvalidRequestContent},
		{name: "brackets in strings do not nest", body: strings.Replace(nested(2), `"eastus"`, `"eastus","y":"`+strings.Repeat("[", 1000)+`"`, 1), status: 201},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			rec := call(f, "PUT", testCluster+"?api-version="+testAPI, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %.300s", rec.Code, tt.status, rec.Body)
			}
			if tt.code != "" {
				if ce := cloudError(t, rec); ce.Code != tt.code {
					t.Errorf("code = %q, want %q: %s", ce.Code, tt.code, ce.Message)
				}
			}
		})
	}
}

// atSize pads a JSON string between prefix and suffix to a body of n bytes.
func atSize(prefix, suffix string, n int) string {
	return prefix + strings.Repeat("x", n-len(prefix)-len(suffix)) + suffix
}
