package frontend

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// fuzzTargets are the shapes of ARM request paths the frontend serves, with a place ({}) for an ID the
// fuzzer chooses and a body it chooses.
var fuzzTargets = []string{
	testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/{}",
	testCluster + "/nodePools/{}",
	testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/{}/nodePools/workers",
	"/subscriptions/{}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/dev",
	"/subscriptions/" + testSub + "/resourceGroups/{}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/dev",
	testCluster + "/{}",
	"/subscriptions/{}",
	"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/{}",
	"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationResults/{}",
	"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/{}/hcpOpenShiftVersions",
	"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions/{}",
	testRGPath + "/providers/Microsoft.RedHatOpenShift/deployments/{}/preflight",
	testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters?{}",
	testCluster + "/externalAuths/{}",
	testCluster + "/externalAuths?{}",
}

var fuzzMethods = []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost}

// FuzzARMRequest sends the frontend requests as ARM forwards them, with a path ID, a query, a method
// and a body of the fuzzer's choosing, against a registered subscription holding one cluster. Whatever
// the request, the frontend answers without panicking, never with a 5xx (the fake API behind it fails
// nothing), and a refusal is a CloudError with a code and a message.
func FuzzARMRequest(f *testing.F) {
	for i := range fuzzTargets {
		for m := range fuzzMethods {
			f.Add(uint8(i), uint8(m), "Dev-Cluster", "api-version="+testAPI, []byte(minimalClusterBody))
		}
	}
	f.Add(uint8(1), uint8(1), "workers", "api-version="+testAPI, []byte(minimalNodePoolBody))
	f.Add(uint8(1), uint8(2), "workers", "api-version="+testAPI, []byte(`{"properties":{"replicas":1e1,"version":null}}`))
	f.Add(uint8(0), uint8(2), "Dev-Cluster", "api-version="+testAPI, []byte(`{"tags":{"":"x"},"properties":{"platform":{"subnetId":null}}}`))
	f.Add(uint8(6), uint8(1), strings.ToLower(testSub), "api-version=2.0", []byte(`{"state":"Registered","properties":{"tenantId":"not-a-guid"}}`))
	f.Add(uint8(11), uint8(4), "d1", "api-version="+testAPI, []byte(`{"resources":[{"type":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","name":"x","apiVersion":"`+testAPI+`","location":"eastus","properties":{}}]}`))
	f.Add(uint8(3), uint8(0), "..", "api-version="+testAPI, []byte(nil))
	f.Add(uint8(7), uint8(0), "%25", "api-version="+testAPI, []byte(nil))
	f.Add(uint8(13), uint8(1), "entra", "api-version="+testAPI, []byte(minimalExternalAuthBody))
	f.Add(uint8(13), uint8(2), "entra", "api-version=2024-06-10-preview", []byte(`{"properties":{"issuer":null,"condition":{},"clients":[{}]}}`))
	f.Add(uint8(14), uint8(0), "", "api-version="+testAPI+"&$top=1&$skipToken=x", []byte(nil))
	f.Add(uint8(0), uint8(1), "x", "api-version="+testAPI, []byte(`{"properties":`+strings.Repeat("[", 2000)+strings.Repeat("]", 2000)+`}`))

	f.Fuzz(func(t *testing.T, target, method uint8, id, query string, body []byte) {
		if int(target) >= len(fuzzTargets) || int(method) >= len(fuzzMethods) || strings.ContainsAny(id, "/?#") || strings.ContainsAny(query, "#") {
			return
		}
		path := strings.Replace(fuzzTargets[target], "{}", id, 1)
		if !strings.Contains(path, "?") {
			path += "?" + query
		}
		if !validRequestTarget(path) {
			return
		}
		fr, _ := newTestFrontend(t, subscription("Registered"))
		seed := call(fr, http.MethodPut, testCluster+"?api-version="+testAPI, minimalClusterBody)
		if seed.Code >= 500 {
			t.Fatalf("creating the seed cluster answered %d: %s", seed.Code, seed.Body)
		}
		rec := call(fr, fuzzMethods[method], path, string(body))
		if rec.Code >= 500 {
			t.Fatalf("%s %q with body %q answered %d: %s", fuzzMethods[method], path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var ce CloudError
			if err := json.Unmarshal(rec.Body.Bytes(), &ce); err != nil || ce.Body.Code == "" || ce.Body.Message == "" {
				t.Fatalf("%s %q answered %d without a CloudError: %s", fuzzMethods[method], path, rec.Code, rec.Body)
			}
		}
	})
}

// validRequestTarget says whether httptest.NewRequest takes the target, which panics on what no HTTP
// client could send.
func validRequestTarget(target string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := http.ReadRequest(bufioReader("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"))
	return err == nil
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
