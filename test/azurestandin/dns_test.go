package azurestandin

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
)

const dnsAPIVersion = "2018-05-01"

// dnsClient calls Azure DNS as a client built on azcore does, there being no SDK module for it.
type dnsClient struct {
	t        *testing.T
	srv      *Server
	pipeline runtime.Pipeline
	zoneID   string
}

func newDNSClient(t *testing.T, srv *Server, zoneID string) *dnsClient {
	opts := srv.clientOptions()
	opts.Retry = policy.RetryOptions{MaxRetries: -1}
	bearer := runtime.NewBearerTokenPolicy(srv.credential(t), []string{audience + ".default"}, nil)
	return &dnsClient{
		t: t, srv: srv, zoneID: zoneID,
		pipeline: runtime.NewPipeline("azurestandin-test", "v0.0.0", runtime.PipelineOptions{PerRetry: []policy.Policy{bearer}}, &opts),
	}
}

// do sends a request for a record set (or, with name empty, the record sets of a type) and returns
// the status and decoded body.
func (c *dnsClient) do(method, recordType, name string, headers map[string]string, body any) (int, map[string]any) {
	c.t.Helper()
	u := c.srv.URL + c.zoneID + "/" + recordType
	if name != "" {
		u += "/" + name
	}
	req, err := runtime.NewRequest(context.Background(), method, u+"?api-version="+dnsAPIVersion)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range headers {
		req.Raw().Header.Set(k, v)
	}
	if body != nil {
		if err := runtime.MarshalAsJSON(req, body); err != nil {
			c.t.Fatal(err)
		}
	}
	resp, err := c.pipeline.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	var out map[string]any
	if raw, err := runtime.Payload(resp); err == nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			c.t.Fatalf("%s %s answered %d with a body that is not JSON: %s", method, u, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, out
}

func errorCodeOf(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func aRecord(ip string) map[string]any {
	return map[string]any{"properties": map[string]any{"TTL": 300, "ARecords": []any{map[string]any{"ipv4Address": ip}}}}
}

func TestDNSRecordSetsHonourETags(t *testing.T) {
	srv := start(t, Options{})
	zoneID := "/subscriptions/" + subscription + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/hcp.example.com"
	srv.AddZone(zoneID)
	dns := newDNSClient(t, srv, zoneID)

	status, created := dns.do(http.MethodPut, "A", "api.c1", map[string]string{"If-None-Match": "*"}, aRecord("10.0.0.1"))
	if status != http.StatusCreated {
		t.Fatalf("creating A api.c1: %d %v", status, created)
	}
	etag := created["etag"].(string)
	if status, body := dns.do(http.MethodPut, "A", "api.c1", map[string]string{"If-None-Match": "*"}, aRecord("10.0.0.2")); status != http.StatusPreconditionFailed || errorCodeOf(body) != "PreconditionFailed" {
		t.Errorf("creating it again with If-None-Match: * answered %d %v, want 412 PreconditionFailed", status, body)
	}
	if status, body := dns.do(http.MethodPut, "A", "api.c1", map[string]string{"If-Match": "stale"}, aRecord("10.0.0.2")); status != http.StatusPreconditionFailed || errorCodeOf(body) != "PreconditionFailed" {
		t.Errorf("replacing it with a stale If-Match answered %d %v, want 412 PreconditionFailed", status, body)
	}
	status, replaced := dns.do(http.MethodPut, "A", "api.c1", map[string]string{"If-Match": etag}, aRecord("10.0.0.2"))
	if status != http.StatusOK || replaced["etag"] == etag {
		t.Errorf("replacing it with its etag answered %d %v, want 200 and a new etag", status, replaced)
	}
	if status, body := dns.do(http.MethodPut, "CNAME", "*.apps.c1", nil, map[string]any{
		"properties": map[string]any{"TTL": 300, "CNAMERecord": map[string]any{"cname": "router.c1.example.net"}},
	}); status != http.StatusCreated {
		t.Errorf("creating the wildcard CNAME *.apps.c1 answered %d %v", status, body)
	}

	status, got := dns.do(http.MethodGet, "A", "api.c1", nil, nil)
	props, _ := got["properties"].(map[string]any)
	if status != http.StatusOK || props["fqdn"] != "api.c1.hcp.example.com." || props["TTL"] != float64(300) {
		t.Errorf("GET A api.c1 answered %d %v", status, got)
	}
	if status, list := dns.do(http.MethodGet, "A", "", nil, nil); status != http.StatusOK || len(list["value"].([]any)) != 1 {
		t.Errorf("listing A record sets answered %d %v, want the one", status, list)
	}
	sets := srv.RecordSets(zoneID)
	if a, ok := sets["A/api.c1"]; !ok || a.TTL != 300 || a.ETag != replaced["etag"] {
		t.Errorf("A/api.c1 read back as %+v", a)
	}
	if _, ok := sets["CNAME/*.apps.c1"]; !ok || len(sets) != 2 {
		t.Errorf("record sets read back: %v, want A/api.c1 and CNAME/*.apps.c1", sets)
	}

	if status, _ := dns.do(http.MethodDelete, "A", "api.c1", map[string]string{"If-Match": etag}, nil); status != http.StatusPreconditionFailed {
		t.Errorf("deleting with a stale If-Match answered %d, want 412", status)
	}
	if status, _ := dns.do(http.MethodDelete, "A", "api.c1", map[string]string{"If-Match": replaced["etag"].(string)}, nil); status != http.StatusOK {
		t.Errorf("deleting with its etag answered %d, want 200", status)
	}
	if status, body := dns.do(http.MethodGet, "A", "api.c1", nil, nil); status != http.StatusNotFound {
		t.Errorf("GET after the deletion answered %d %v, want 404", status, body)
	}
	if status, _ := dns.do(http.MethodDelete, "A", "api.c1", nil, nil); status != http.StatusNoContent {
		t.Errorf("deleting a record set that is not there answered %d, want 204", status)
	}

	other := newDNSClient(t, srv, "/subscriptions/"+subscription+"/resourceGroups/dns/providers/Microsoft.Network/dnszones/other.example.com")
	if status, body := other.do(http.MethodPut, "A", "api", nil, aRecord("10.0.0.1")); status != http.StatusNotFound || errorCodeOf(body) != "ResourceNotFound" {
		t.Errorf("a record set in a zone never made: %d %v, want 404 ResourceNotFound", status, body)
	}
}

func TestRequestsTheDocumentsRefuseAreRecorded(t *testing.T) {
	srv := start(t, Options{AllowViolations: true})
	zoneID := "/subscriptions/" + subscription + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/hcp.example.com"
	srv.AddZone(zoneID)
	dns := newDNSClient(t, srv, zoneID)

	for _, tc := range []struct {
		name       string
		client     *dnsClient
		recordType string
		body       any
		code       string
		mentions   string
	}{
		{
			name: "a TTL that is a string", client: dns, recordType: "A",
			body: map[string]any{"properties": map[string]any{"TTL": "300", "ARecords": []any{map[string]any{"ipv4Address": "10.0.0.1"}}}},
			code: "InvalidRequestContent", mentions: "TTL",
		},
		{name: "a record type the document does not name", client: dns, recordType: "BOGUS", body: aRecord("10.0.0.1"), code: "InvalidParameter", mentions: "recordType"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.ClearViolations()
			status, body := tc.client.do(http.MethodPut, tc.recordType, "api", nil, tc.body)
			if status != http.StatusBadRequest || errorCodeOf(body) != tc.code || !strings.Contains(body["error"].(map[string]any)["message"].(string), tc.mentions) {
				t.Errorf("answered %d %v, want 400 %s about %s", status, body, tc.code, tc.mentions)
			}
			if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0].String(), tc.mentions) {
				t.Errorf("violations %v, want the one about %s", v, tc.mentions)
			}
		})
	}
	t.Run("a resource group name its pattern refuses", func(t *testing.T) {
		srv.ClearViolations()
		groups, err := armresources.NewResourceGroupsClient(subscription, srv.credential(t), srv.armOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = groups.CreateOrUpdate(t.Context(), "managed!c1", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil)
		if code := errorCode(err); code != "InvalidParameter" {
			t.Errorf("got %v, want InvalidParameter", err)
		}
		if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0].String(), "resourceGroupName") {
			t.Errorf("violations %v, want the one about resourceGroupName", v)
		}
		if _, ok := srv.ResourceGroup("/subscriptions/" + subscription + "/resourceGroups/managed!c1"); ok {
			t.Error("the refused group was made")
		}
	})
	t.Run("an api-version that is not the document's", func(t *testing.T) {
		srv.ClearViolations()
		req, err := runtime.NewRequest(t.Context(), http.MethodGet, srv.URL+zoneID+"?api-version=2023-07-01-preview")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := dns.pipeline.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusBadRequest || len(srv.Violations()) != 1 || srv.Violations()[0].Problems[0].Code != "InvalidApiVersionParameter" {
			t.Errorf("answered %d, violations %v; want 400 and InvalidApiVersionParameter", resp.StatusCode, srv.Violations())
		}
	})
	if got := len(srv.RecordSets(zoneID)); got != 0 {
		t.Errorf("refused requests left %d record sets", got)
	}
}

// fakeTB stands in for the test that a server is started for, to see that the server fails it.
type fakeTB struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Cleanup(fn func())         { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(string, ...any)     { f.errors = append(f.errors, "error") }
func (f *fakeTB) Skip(args ...any)          { f.TB.Skip(args...) }
func (f *fakeTB) Fatal(args ...any)         { f.TB.Fatal(args...) }
func (f *fakeTB) Fatalf(s string, a ...any) { f.TB.Fatalf(s, a...) }

func TestAViolationFailsTheTest(t *testing.T) {
	tb := &fakeTB{TB: t}
	srv := Start(tb, Options{})
	dns := newDNSClient(t, srv, "/subscriptions/"+subscription+"/resourceGroups/dns/providers/Microsoft.Network/dnszones/hcp.example.com")
	if status, _ := dns.do(http.MethodPut, "A", "api", nil, map[string]any{"properties": map[string]any{"TTL": "300"}}); status != http.StatusBadRequest {
		t.Errorf("answered %d, want 400", status)
	}
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
	if len(tb.errors) != 1 {
		t.Errorf("the test using the server got %d errors at its end, want 1 for the refused request", len(tb.errors))
	}
}

func TestResponsesAreCheckedAgainstTheDocuments(t *testing.T) {
	srv := start(t, Options{})
	op, _ := srv.contract.match(http.MethodGet, "/subscriptions/"+subscription+"/resourcegroups/rg")
	if op == nil || op.id != "ResourceGroups_Get" {
		t.Fatalf("GET of a resource group matched %v, want ResourceGroups_Get", op)
	}
	for _, tc := range []struct {
		status int
		body   string
		valid  bool
	}{
		{http.StatusOK, `{"id":"/subscriptions/s/resourceGroups/rg","name":"rg","location":"eastus","properties":{"provisioningState":"Succeeded"}}`, true},
		{http.StatusOK, `{"location":5}`, false},
		{http.StatusOK, `{"name":"rg"}`, false}, // location is required
		{http.StatusNotFound, `{"error":{"code":"ResourceGroupNotFound","message":"m"}}`, true},
		{http.StatusNotFound, `{"error":{"code":5}}`, false},
	} {
		if problems := op.validateResponse(tc.status, []byte(tc.body)); (len(problems) == 0) != tc.valid {
			t.Errorf("%d %s: problems %v, want valid=%v", tc.status, tc.body, problems, tc.valid)
		}
	}
}

func TestSlowAndFailingAzure(t *testing.T) {
	srv := start(t, Options{})
	zoneID := "/subscriptions/" + subscription + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/hcp.example.com"
	srv.AddZone(zoneID)
	dns := newDNSClient(t, srv, zoneID)

	srv.Unavailable(http.MethodGet, zoneID+"/A", time.Hour)
	if status, body := dns.do(http.MethodGet, "A", "api", nil, nil); status != http.StatusServiceUnavailable || errorCodeOf(body) != "ServiceUnavailable" {
		t.Errorf("while unavailable, answered %d %v; want 503 ServiceUnavailable", status, body)
	}

	srv.Hang(http.MethodPut, zoneID+"/A", 1)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, err := runtime.NewRequest(ctx, http.MethodPut, srv.URL+zoneID+"/A/api?api-version="+dnsAPIVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.MarshalAsJSON(req, aRecord("10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if _, err := dns.pipeline.Do(req); err == nil || ctx.Err() == nil {
		t.Errorf("a hung PUT returned %v before its context ended", err)
	}
	if status, _ := dns.do(http.MethodPut, "A", "api", nil, aRecord("10.0.0.1")); status != http.StatusCreated {
		t.Errorf("the PUT after the hung one answered %d, want 201", status)
	}
}
