package azure

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

func TestDNSRecordSets(t *testing.T) {
	const apiPath = testZonePath + "/A/api.c1"
	f := newFakeAzure(t)
	c := f.clients()
	ctx := context.Background()

	f.handle(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.Header.Get("If-Match") == `"stale"`:
			writeJSON(w, http.StatusPreconditionFailed, map[string]any{"error": map[string]any{
				"code": "PreconditionFailed", "message": "The condition '\"stale\"' in the If-Match header was not satisfied.", "target": "api.c1",
				"details": []any{map[string]string{"code": "EtagMismatch", "message": "etag is \"e2\""}},
			}})
		case r.Method == http.MethodPut:
			var in RecordSet
			_ = json.NewDecoder(r.Body).Decode(&in)
			in.ID, in.Name, in.Type, in.Etag = apiPath, "api.c1", "Microsoft.Network/dnszones/A", "e1"
			in.Properties.FQDN = "api.c1.eastus.hcp.example.com."
			writeJSON(w, http.StatusCreated, in)
		case r.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, RecordSet{ID: apiPath, Name: "api.c1", Etag: "e1", Properties: RecordSetProperties{
				TTL: 300, ARecords: []ARecord{{IPv4Address: "20.1.2.3"}}, Metadata: map[string]string{OwnershipTag: testCluster}}})
		case r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/gone"):
			writeCloudError(w, http.StatusNotFound, "NotFound", "The resource record 'gone' does not exist.")
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		}
	})

	want := RecordSet{Properties: RecordSetProperties{TTL: 300, ARecords: []ARecord{{IPv4Address: "20.1.2.3"}},
		Metadata: map[string]string{OwnershipTag: testCluster}}}
	got, err := c.DNS.PutRecordSet(ctx, testZoneID, RecordTypeA, "api.c1", want, "", true)
	if err != nil {
		t.Fatalf("PutRecordSet: %v", err)
	}
	if got.Etag != "e1" || got.Properties.FQDN != "api.c1.eastus.hcp.example.com." {
		t.Errorf("PutRecordSet returned %+v, want Azure's etag and fqdn", got)
	}
	put := f.sent()[0]
	if put.Method != http.MethodPut || put.Path != apiPath || put.RawQuery != "api-version=2018-05-01" ||
		put.Header.Get("If-None-Match") != "*" || put.Header.Get("If-Match") != "" {
		t.Errorf("create sent %s %s?%s If-None-Match=%q If-Match=%q, want a create-only PUT of %s",
			put.Method, put.Path, put.RawQuery, put.Header.Get("If-None-Match"), put.Header.Get("If-Match"), apiPath)
	}
	if wantBody := `{"properties":{"metadata":{"aro-hcp.cluster-id":"` + testCluster + `"},"TTL":300,"ARecords":[{"ipv4Address":"20.1.2.3"}]}}`; put.Body != wantBody {
		t.Errorf("PUT body\n  %s\nwant\n  %s", put.Body, wantBody)
	}
	if ua := put.Header.Get("User-Agent"); !strings.HasPrefix(ua, "hcp-apiserver-test ") {
		t.Errorf("User-Agent %q does not start with the configured suffix", ua)
	}

	// An update at the etag read: Azure refuses it when someone changed the set since.
	got.Properties.TTL = 60
	_, err = c.DNS.PutRecordSet(ctx, testZoneID, RecordTypeA, "api.c1", got, `"stale"`, false)
	var ce *CloudError
	var re *azcore.ResponseError
	if !IsPreconditionFailed(err) || !errors.As(err, &ce) || !errors.As(err, &re) {
		t.Fatalf("PutRecordSet at a stale etag: %v, want a precondition failure as *CloudError wrapping *azcore.ResponseError", err)
	}
	if ce.StatusCode != 412 || ce.Code != "PreconditionFailed" || ce.Target != "api.c1" || len(ce.Details) != 1 || ce.Details[0].Code != "EtagMismatch" ||
		!strings.Contains(ce.Error(), "If-Match header was not satisfied") {
		t.Errorf("CloudError %+v does not carry Azure's body", ce)
	}
	if h := f.sent()[1].Header; h.Get("If-Match") != `"stale"` || h.Get("If-None-Match") != "" {
		t.Errorf("update sent If-Match=%q If-None-Match=%q", h.Get("If-Match"), h.Get("If-None-Match"))
	}

	rs, err := c.DNS.GetRecordSet(ctx, testZoneID, RecordTypeA, "api.c1")
	if err != nil || rs.Etag != "e1" || rs.Properties.ARecords[0].IPv4Address != "20.1.2.3" || rs.Properties.Metadata[OwnershipTag] != testCluster {
		t.Errorf("GetRecordSet = %+v, %v", rs, err)
	}
	if err := c.DNS.DeleteRecordSet(ctx, testZoneID, RecordTypeA, "api.c1", "e1"); err != nil {
		t.Errorf("DeleteRecordSet: %v", err)
	}
	if err := c.DNS.DeleteRecordSet(ctx, testZoneID, RecordTypeA, "gone", ""); err != nil {
		t.Errorf("DeleteRecordSet of a set already gone: %v", err)
	}
	sent := f.sent()
	wantRequests(t, sent,
		"PUT "+apiPath+"?api-version=2018-05-01",
		"PUT "+apiPath+"?api-version=2018-05-01",
		"GET "+apiPath+"?api-version=2018-05-01",
		"DELETE "+apiPath+"?api-version=2018-05-01",
		"DELETE "+testZonePath+"/A/gone?api-version=2018-05-01",
	)
	if len(sent) == 5 && (sent[3].Header.Get("If-Match") != "e1" || sent[4].Header.Get("If-Match") != "") {
		t.Errorf("deletes sent If-Match %q and %q, want e1 and none", sent[3].Header.Get("If-Match"), sent[4].Header.Get("If-Match"))
	}

	if _, err := c.DNS.PutRecordSet(ctx, testZoneID, "MX", "x", RecordSet{}, "", false); err == nil {
		t.Error("PutRecordSet of an MX record set was sent")
	}
	if _, err := c.DNS.GetRecordSet(ctx, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/privateDnsZones/z", RecordTypeA, "x"); err == nil {
		t.Error("GetRecordSet in a private zone's ID was sent")
	}
}

func TestDNSWildcardAndDelegation(t *testing.T) {
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		var in RecordSet
		_ = json.NewDecoder(r.Body).Decode(&in)
		writeJSON(w, http.StatusOK, in)
	})
	ctx := context.Background()
	if _, err := c.DNS.PutRecordSet(ctx, testZoneID, RecordTypeCNAME, "*.apps.c1", RecordSet{Properties: RecordSetProperties{
		TTL: 300, CNAMERecord: &CNAMERecord{CNAME: "router.c1.example.net"}}}, "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DNS.PutRecordSet(ctx, testZoneID, RecordTypeNS, "c1", RecordSet{Properties: RecordSetProperties{
		TTL: 3600, NSRecords: []NSRecord{{NSDName: "ns1-01.azure-dns.com."}}}}, "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DNS.PutRecordSet(ctx, testZoneID, RecordTypeTXT, "_owner.c1", RecordSet{Properties: RecordSetProperties{
		TXTRecords: []TXTRecord{{Value: []string{"cluster=c1"}}}}}, "", false); err != nil {
		t.Fatal(err)
	}
	sent := f.sent()
	wantRequests(t, sent,
		"PUT "+testZonePath+"/CNAME/*.apps.c1?api-version=2018-05-01",
		"PUT "+testZonePath+"/NS/c1?api-version=2018-05-01",
		"PUT "+testZonePath+"/TXT/_owner.c1?api-version=2018-05-01",
	)
	for i, want := range []string{
		`{"properties":{"TTL":300,"CNAMERecord":{"cname":"router.c1.example.net"}}}`,
		`{"properties":{"TTL":3600,"NSRecords":[{"nsdname":"ns1-01.azure-dns.com."}]}}`,
		`{"properties":{"TXTRecords":[{"value":["cluster=c1"]}]}}`,
	} {
		if i < len(sent) && sent[i].Body != want {
			t.Errorf("PUT %d body %s, want %s", i, sent[i].Body, want)
		}
	}
}

func TestDNSListFollowsNextLinkAndRetriesThrottling(t *testing.T) {
	f := newFakeAzure(t)
	c := f.clients()
	var mu sync.Mutex
	calls := 0
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case r.URL.Path == testZonePath:
			writeJSON(w, http.StatusOK, Zone{ID: testZoneID, Name: "eastus.hcp.example.com", Properties: ZoneProperties{
				NameServers: []string{"ns1-01.azure-dns.com.", "ns2-01.azure-dns.net."}}})
		case n == 1:
			// Throttled: the SDK's retry policy waits as told and asks again.
			w.Header().Set("Retry-After", "1")
			writeCloudError(w, http.StatusTooManyRequests, "TooManyRequests", "slow down")
		case r.URL.Query().Get("$skipToken") == "":
			writeJSON(w, http.StatusOK, map[string]any{
				"value":    []RecordSet{{Name: "api.c1"}},
				"nextLink": f.srv.URL + testZonePath + "/A?api-version=2018-05-01&$skipToken=abc",
			})
		default:
			writeJSON(w, http.StatusOK, map[string]any{"value": []RecordSet{{Name: "api.c2"}}})
		}
	})
	sets, err := c.DNS.ListRecordSets(context.Background(), testZoneID, RecordTypeA)
	if err != nil {
		t.Fatalf("ListRecordSets: %v", err)
	}
	if len(sets) != 2 || sets[0].Name != "api.c1" || sets[1].Name != "api.c2" {
		t.Errorf("ListRecordSets = %+v, want api.c1 and api.c2", sets)
	}
	wantRequests(t, f.sent(),
		"GET "+testZonePath+"/A?api-version=2018-05-01",
		"GET "+testZonePath+"/A?api-version=2018-05-01",
		"GET "+testZonePath+"/A?api-version=2018-05-01&$skipToken=abc",
	)

	zone, err := c.DNS.GetZone(context.Background(), testZoneID)
	if err != nil || len(zone.Properties.NameServers) != 2 {
		t.Errorf("GetZone = %+v, %v; want its two name servers", zone, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.scopes {
		if s != testAudience+".default" && !strings.HasPrefix(s, testAudience+".default ") {
			t.Errorf("a token was requested for scope %q, want %s.default", s, testAudience)
		}
	}
}
