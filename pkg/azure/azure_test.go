package azure

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

const (
	testTenant   = "72f988bf-0000-0000-0000-000000000001"
	testAudience = "https://management.azure.test/"
	testSub      = "11111111-1111-1111-1111-111111111111"
	customerSub  = "22222222-2222-2222-2222-222222222222"
	testZoneID   = "/subscriptions/" + testSub + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/eastus.hcp.example.com"
	testZonePath = "/subscriptions/" + testSub + "/resourceGroups/dns/providers/Microsoft.Network/dnsZones/eastus.hcp.example.com"
	testCluster  = "/subscriptions/" + customerSub + "/resourceGroups/prod/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
)

// recorded is one request the clients sent to Resource Manager.
type recorded struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     string
}

// fakeAzure is an HTTPS server that issues tokens as Microsoft Entra does and answers Resource
// Manager's requests with arm, recording each.
type fakeAzure struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	arm      http.HandlerFunc
	requests []recorded
	scopes   []string
}

func newFakeAzure(t *testing.T) *fakeAzure {
	f := &fakeAzure{t: t}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAzure) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/"+testTenant+"/v2.0/.well-known/openid-configuration":
		writeJSON(w, http.StatusOK, map[string]string{
			"token_endpoint":         f.srv.URL + "/" + testTenant + "/oauth2/v2.0/token",
			"authorization_endpoint": f.srv.URL + "/" + testTenant + "/oauth2/v2.0/authorize",
			"issuer":                 f.srv.URL + "/" + testTenant + "/v2.0",
		})
	case r.URL.Path == "/"+testTenant+"/oauth2/v2.0/token":
		_ = r.ParseForm()
		f.mu.Lock()
		f.scopes = append(f.scopes, r.PostForm.Get("scope"))
		f.mu.Unlock()
		if r.PostForm.Get("client_secret") != "s3cret" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": "arm-token", "expires_in": 3600})
	default:
		body, _ := io.ReadAll(r.Body)
		if got := r.Header.Get("Authorization"); got != "Bearer arm-token" {
			f.t.Errorf("%s %s: Authorization %q, want the ARM bearer token", r.Method, r.URL.Path, got)
		}
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		handler := f.arm
		f.mu.Unlock()
		if handler == nil {
			writeCloudError(w, http.StatusNotImplemented, "NotImplemented", "no handler")
			return
		}
		handler(w, r)
	}
}

func (f *fakeAzure) handle(h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.arm = h
	f.requests = nil
}

func (f *fakeAzure) sent() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// config writes what a deployment would: a custom cloud at the fake, a client secret, its CA.
func (f *fakeAzure) config() *Config {
	dir := f.t.TempDir()
	secret := filepath.Join(dir, "secret")
	ca := filepath.Join(dir, "ca.pem")
	mustWrite(f.t, secret, "s3cret\n")
	mustWrite(f.t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})))
	return &Config{
		ActiveDirectoryAuthorityHost: f.srv.URL + "/",
		ResourceManagerEndpoint:      f.srv.URL,
		ResourceManagerAudience:      testAudience,
		TenantID:                     testTenant,
		SubscriptionID:               testSub,
		DNSZoneResourceID:            testZoneID,
		Credential:                   Credential{Kind: ClientSecret, ClientID: "app", SecretFile: secret},
		CAFile:                       ca,
		UserAgent:                    "hcp-apiserver-test",
	}
}

func (f *fakeAzure) clients() *Clients {
	c, err := NewClients(f.config())
	if err != nil {
		f.t.Fatalf("NewClients: %v", err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeCloudError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message}})
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func wantRequests(t *testing.T, got []recorded, want ...string) {
	t.Helper()
	var lines []string
	for _, r := range got {
		lines = append(lines, r.Method+" "+r.Path+"?"+r.RawQuery)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests sent:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		file    string
		data    string
		wantErr []string
	}{
		{
			name: "yaml, public cloud, workload identity",
			file: "ok.yaml",
			data: `cloud: AzurePublicCloud
tenantID: ` + testTenant + `
subscriptionID: ` + testSub + `
dnsZoneResourceID: ` + testZoneID + `
credential:
  kind: WorkloadIdentity
  clientID: app
  tokenFile: /var/run/secrets/azure/tokens/azure-identity-token
userAgent: hcp-apiserver
`,
		},
		{
			name: "json, custom cloud, certificate",
			file: "ok.json",
			data: `{"activeDirectoryAuthorityHost":"https://login.test/","resourceManagerEndpoint":"https://arm.test",
"resourceManagerAudience":"https://arm.test/","tenantID":"t","subscriptionID":"s","dnsZoneResourceID":"` + testZoneID + `",
"credential":{"kind":"ClientCertificate","clientID":"app","certificateFile":"/etc/azure/cert.pem"}}`,
		},
		{
			name:    "unknown field is named",
			file:    "typo.yaml",
			data:    "cloud: AzurePublicCloud\nsubscriptionId: x\n",
			wantErr: []string{`unknown field "subscriptionId"`},
		},
		{
			name:    "wrong type is named",
			file:    "type.yaml",
			data:    "cloud: AzurePublicCloud\ncredential:\n  kind: [a]\n",
			wantErr: []string{"credential.kind"},
		},
		{
			name: "every problem with its field path",
			file: "bad.yaml",
			data: `cloud: AzureMoonCloud
dnsZoneResourceID: /subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/privateDnsZones/z
credential:
  kind: ClientSecret
  tokenFile: /t
`,
			wantErr: []string{
				`cloud: Unsupported value: "AzureMoonCloud"`,
				"tenantID: Required value",
				"subscriptionID: Required value",
				"dnsZoneResourceID: Invalid value",
				"not a Microsoft.Network/dnszones",
				"credential.clientID: Required value",
				"credential.secretFile: Required value",
				"credential.tokenFile: Forbidden",
			},
		},
		{
			name: "custom cloud needs https endpoints and an audience",
			file: "custom.yaml",
			data: `activeDirectoryAuthorityHost: http://login.test/
resourceManagerEndpoint: https://arm.test
tenantID: t
subscriptionID: s
dnsZoneResourceID: ` + testZoneID + `
credential: {kind: ManagedIdentity}
`,
			wantErr: []string{"activeDirectoryAuthorityHost: Invalid value", "must be an https URL", "resourceManagerAudience: Required value"},
		},
		{
			name:    "a name and endpoints together",
			file:    "both.yaml",
			data:    "cloud: AzurePublicCloud\nresourceManagerEndpoint: https://arm.test\ntenantID: t\nsubscriptionID: s\ndnsZoneResourceID: " + testZoneID + "\ncredential: {kind: ManagedIdentity}\n",
			wantErr: []string{"cloud: Invalid value", "not both"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			mustWrite(t, path, tc.data)
			cfg, err := Load(path)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if cfg.TenantID == "" || cfg.Credential.Kind == "" {
					t.Errorf("Load decoded %+v", cfg)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load succeeded, want errors %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestNewClientsReadsCredentialFiles(t *testing.T) {
	f := newFakeAzure(t)
	cfg := f.config()
	cfg.Credential.SecretFile = filepath.Join(t.TempDir(), "missing")
	if _, err := NewClients(cfg); err == nil || !strings.Contains(err.Error(), "credential.secretFile") {
		t.Errorf("NewClients with a missing secret file: %v, want an error naming credential.secretFile", err)
	}
	cfg = f.config()
	cfg.CAFile = cfg.Credential.SecretFile
	if _, err := NewClients(cfg); err == nil || !strings.Contains(err.Error(), "caFile") {
		t.Errorf("NewClients with a CA file that holds no certificate: %v, want an error naming caFile", err)
	}
}

func resourceGroupBody(location string, tags map[string]string) map[string]any {
	return map[string]any{
		"id": "/subscriptions/" + customerSub + "/resourceGroups/c1-managed", "name": "c1-managed",
		"location": location, "tags": tags, "properties": map[string]string{"provisioningState": "Succeeded"},
	}
}

func TestEnsureResourceGroup(t *testing.T) {
	const rgPath = "/subscriptions/" + customerSub + "/resourcegroups/c1-managed"
	ours := map[string]string{OwnershipTag: testCluster, "aro-hcp.managed-by": "hcp-apiserver"}
	tests := []struct {
		name        string
		existing    map[string]string // nil: no such group
		wantCreated bool
		wantPut     map[string]string // tags of the PUT, nil: no PUT
		wantNotOurs bool
	}{
		{name: "missing group is created with the service's tags", wantCreated: true, wantPut: ours},
		{name: "our group is left alone", existing: ours},
		{name: "our group, ID in another case, is ours", existing: map[string]string{OwnershipTag: strings.ToLower(testCluster), "aro-hcp.managed-by": "hcp-apiserver"}},
		{name: "another cluster's group is not adopted", existing: map[string]string{OwnershipTag: testCluster + "-other"}, wantNotOurs: true},
		{name: "the customer's own group is not adopted", existing: map[string]string{"env": "prod"}, wantNotOurs: true},
		{
			name:     "our group that lost a tag gets it back, keeping others'",
			existing: map[string]string{OwnershipTag: testCluster, "costcenter": "42"},
			wantPut:  map[string]string{OwnershipTag: testCluster, "aro-hcp.managed-by": "hcp-apiserver", "costcenter": "42"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAzure(t)
			c := f.clients()
			f.handle(func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodGet:
					if tc.existing == nil {
						writeCloudError(w, http.StatusNotFound, "ResourceGroupNotFound", "Resource group 'c1-managed' could not be found.")
						return
					}
					writeJSON(w, http.StatusOK, resourceGroupBody("eastus", tc.existing))
				case http.MethodPut:
					var body map[string]any
					_ = json.NewDecoder(r.Body).Decode(&body)
					writeJSON(w, http.StatusCreated, resourceGroupBody("eastus", nil))
				}
			})
			created, err := c.ResourceGroups.EnsureResourceGroup(context.Background(), customerSub, "c1-managed", "eastus", ours)
			var notOurs *NotOursError
			if tc.wantNotOurs {
				if !errors.As(err, &notOurs) {
					t.Fatalf("EnsureResourceGroup: %v, want a *NotOursError", err)
				}
				if !strings.Contains(err.Error(), "/resourceGroups/c1-managed") || notOurs.Tags == nil {
					t.Errorf("NotOursError %q does not name the group and its tags", err)
				}
			} else if err != nil {
				t.Fatalf("EnsureResourceGroup: %v", err)
			}
			if created != tc.wantCreated {
				t.Errorf("created = %v, want %v", created, tc.wantCreated)
			}
			want := []string{"GET " + rgPath + "?api-version=2021-04-01"}
			if tc.wantPut != nil {
				want = append(want, "PUT "+rgPath+"?api-version=2021-04-01")
			}
			sent := f.sent()
			wantRequests(t, sent, want...)
			if tc.wantPut != nil && len(sent) == 2 {
				var body struct {
					Location string
					Tags     map[string]string
				}
				if err := json.Unmarshal([]byte(sent[1].Body), &body); err != nil {
					t.Fatal(err)
				}
				if body.Location != "eastus" || fmt.Sprint(body.Tags) != fmt.Sprint(tc.wantPut) {
					t.Errorf("PUT body %s, want location eastus and tags %v", sent[1].Body, tc.wantPut)
				}
			}
		})
	}
}

func TestEnsureResourceGroupRefusesAnotherLocation(t *testing.T) {
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, resourceGroupBody("westus", map[string]string{OwnershipTag: testCluster}))
	})
	_, err := c.ResourceGroups.EnsureResourceGroup(context.Background(), customerSub, "c1-managed", "eastus", map[string]string{OwnershipTag: testCluster})
	if err == nil || !strings.Contains(err.Error(), "westus") {
		t.Errorf("EnsureResourceGroup in eastus of a group in westus: %v, want an error naming westus", err)
	}
}

func TestDeleteResourceGroupResumesAfterRestart(t *testing.T) {
	const rgPath = "/subscriptions/" + customerSub + "/resourcegroups/c1-managed"
	const opPath = "/subscriptions/" + customerSub + "/operationresults/op-1"
	f := newFakeAzure(t)
	var mu sync.Mutex
	polls := 0
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == rgPath:
			writeJSON(w, http.StatusOK, resourceGroupBody("eastus", map[string]string{OwnershipTag: testCluster}))
		case r.Method == http.MethodDelete:
			w.Header().Set("Location", f.srv.URL+opPath+"?api-version=2021-04-01")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusAccepted)
		case r.URL.Path == opPath:
			mu.Lock()
			polls++
			n := polls
			mu.Unlock()
			if n < 2 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.WriteHeader(http.StatusOK)
		}
	})

	ctx := context.Background()
	op, err := f.clients().ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", testCluster, "")
	if err != nil {
		t.Fatalf("DeleteResourceGroup: %v", err)
	}
	if op.Done() {
		t.Fatal("the deletion is done before Azure said so")
	}
	token, err := op.ResumeToken()
	if err != nil || token == "" {
		t.Fatalf("ResumeToken: %q, %v", token, err)
	}
	if err := op.Poll(ctx); err != nil || op.Done() {
		t.Fatalf("first Poll: done=%v err=%v, want in progress", op.Done(), err)
	}
	wantRequests(t, f.sent(),
		"GET "+rgPath+"?api-version=2021-04-01",
		"DELETE "+rgPath+"?api-version=2021-04-01",
		"GET "+opPath+"?api-version=2021-04-01",
	)

	// A restarted server has only the token: it must follow the same operation, not delete again.
	f.handle(f.arm)
	op, err = f.clients().ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", testCluster, token)
	if err != nil {
		t.Fatalf("DeleteResourceGroup with the resume token: %v", err)
	}
	if err := op.Poll(ctx); err != nil || !op.Done() {
		t.Fatalf("Poll after resuming: done=%v err=%v, want done", op.Done(), err)
	}
	wantRequests(t, f.sent(),
		"GET "+rgPath+"?api-version=2021-04-01",
		"GET "+opPath+"?api-version=2021-04-01",
	)
}

func TestDeleteResourceGroup(t *testing.T) {
	const rgPath = "/subscriptions/" + customerSub + "/resourcegroups/c1-managed"
	tests := []struct {
		name        string
		tags        map[string]string // nil: no such group
		deleteCode  int
		wantNotOurs bool
		wantSent    []string
	}{
		{name: "a group that is gone is done", wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01"}},
		{name: "the customer's group is never deleted", tags: map[string]string{"env": "prod"}, wantNotOurs: true,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01"}},
		{name: "another cluster's group is never deleted", tags: map[string]string{OwnershipTag: testCluster + "x"}, wantNotOurs: true,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01"}},
		{name: "a group gone between the read and the delete is done", tags: map[string]string{OwnershipTag: testCluster}, deleteCode: http.StatusNotFound,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01", "DELETE " + rgPath + "?api-version=2021-04-01"}},
		{name: "a delete that finishes at once is done", tags: map[string]string{OwnershipTag: testCluster}, deleteCode: http.StatusOK,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01", "DELETE " + rgPath + "?api-version=2021-04-01"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAzure(t)
			c := f.clients()
			f.handle(func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodGet:
					if tc.tags == nil {
						writeCloudError(w, http.StatusNotFound, "ResourceGroupNotFound", "not found")
						return
					}
					writeJSON(w, http.StatusOK, resourceGroupBody("eastus", tc.tags))
				case http.MethodDelete:
					if tc.deleteCode == http.StatusNotFound {
						writeCloudError(w, http.StatusNotFound, "ResourceGroupNotFound", "not found")
						return
					}
					w.WriteHeader(tc.deleteCode)
				}
			})
			op, err := c.ResourceGroups.DeleteResourceGroup(context.Background(), customerSub, "c1-managed", testCluster, "")
			var notOurs *NotOursError
			switch {
			case tc.wantNotOurs && !errors.As(err, &notOurs):
				t.Fatalf("DeleteResourceGroup: %v, want a *NotOursError", err)
			case !tc.wantNotOurs && err != nil:
				t.Fatalf("DeleteResourceGroup: %v", err)
			case !tc.wantNotOurs && !op.Done():
				t.Error("the deletion is not done")
			}
			wantRequests(t, f.sent(), tc.wantSent...)
		})
	}
}

func TestGetIdentity(t *testing.T) {
	const id = "/subscriptions/" + customerSub + "/resourceGroups/identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ingress"
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/ingress") {
			writeJSON(w, http.StatusOK, map[string]any{"id": id, "name": "ingress", "location": "eastus",
				"properties": map[string]string{"principalId": "p-1", "clientId": "c-1", "tenantId": testTenant}})
			return
		}
		writeCloudError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/gone' was not found.")
	})
	principal, client, err := c.Identities.GetIdentity(context.Background(), id)
	if err != nil || principal != "p-1" || client != "c-1" {
		t.Errorf("GetIdentity = %q, %q, %v; want p-1, c-1", principal, client, err)
	}
	wantRequests(t, f.sent(), "GET "+id+"?api-version=2024-11-30")

	gone := strings.Replace(id, "ingress", "gone", 1)
	_, _, err = c.Identities.GetIdentity(context.Background(), gone)
	var notFound *IdentityNotFoundError
	if !errors.As(err, &notFound) || notFound.ResourceID != gone || !IsNotFound(err) {
		t.Errorf("GetIdentity of a missing identity: %v, want an *IdentityNotFoundError naming it", err)
	}
	var ce *CloudError
	if !errors.As(err, &ce) || ce.Code != "ResourceNotFound" {
		t.Errorf("the missing identity's error does not carry Azure's: %v", err)
	}

	if _, _, err := c.Identities.GetIdentity(context.Background(), testZoneID); err == nil {
		t.Error("GetIdentity of a DNS zone's ID succeeded")
	}
}

func TestMissingRoles(t *testing.T) {
	const (
		scope       = "/subscriptions/" + customerSub + "/resourceGroups/c1-managed"
		contributor = "b24988ac-6180-42a0-ab88-20f7382dd24c"
		network     = "4d97b98b-1d4f-4787-a291-c67834d212e7"
		dnsZone     = "befefa01-2a29-4197-83a8-272ff33ce314"
		reader      = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
		storage     = "17d1049b-9a84-46fb-8f53-869881c3d3ab"
	)
	roleDef := func(sub, guid string) string {
		return "/subscriptions/" + sub + "/providers/Microsoft.Authorization/roleDefinitions/" + guid
	}
	assignment := func(at, role string) map[string]any {
		return map[string]any{"id": at + "/providers/Microsoft.Authorization/roleAssignments/x", "name": "x",
			"properties": map[string]string{"scope": at, "roleDefinitionId": role, "principalId": "p-1"}}
	}
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeJSON(w, http.StatusOK, map[string]any{"value": []any{
				// Held at the resource group, read through another subscription's definition ID.
				assignment(scope, roleDef(testSub, network)),
			}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"value": []any{
				assignment("/subscriptions/"+customerSub, roleDef(customerSub, contributor)),
				assignment("/providers/Microsoft.Management/managementGroups/root", roleDef(customerSub, reader)),
				// Below the scope: does not grant it there.
				assignment(scope+"/providers/Microsoft.Network/dnszones/z", roleDef(customerSub, dnsZone)),
				// A sibling whose name starts like the scope's.
				assignment(scope+"-other", roleDef(customerSub, storage)),
			},
			"nextLink": f.srv.URL + r.URL.Path + "?" + r.URL.RawQuery + "&page=2",
		})
	})
	want := []string{
		roleDef(customerSub, contributor), roleDef(customerSub, network), roleDef(customerSub, dnsZone),
		strings.ToUpper(reader), roleDef(customerSub, storage),
	}
	missing, err := c.Identities.MissingRoles(context.Background(), scope, "p-1", want)
	if err != nil {
		t.Fatalf("MissingRoles: %v", err)
	}
	if got, wantMissing := fmt.Sprint(missing), fmt.Sprint([]string{roleDef(customerSub, dnsZone), roleDef(customerSub, storage)}); got != wantMissing {
		t.Errorf("MissingRoles = %s, want %s", got, wantMissing)
	}
	sent := f.sent()
	if len(sent) != 2 {
		t.Fatalf("sent %d requests, want 2 pages", len(sent))
	}
	if sent[0].Path != scope+"/providers/Microsoft.Authorization/roleAssignments" ||
		!strings.Contains(sent[0].RawQuery, "api-version=2022-04-01") ||
		!strings.Contains(sent[0].RawQuery, "$filter=assignedTo('p-1')") {
		t.Errorf("first request %s?%s, want the scope's role assignments assigned to p-1", sent[0].Path, sent[0].RawQuery)
	}
}

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

func TestCloudErrorKeepsTransportErrors(t *testing.T) {
	plain := errors.New("dial tcp: connection refused")
	if got := cloudError(plain); got != plain {
		t.Errorf("cloudError(%v) = %v, want it unchanged", plain, got)
	}
	if IsNotFound(plain) || IsPreconditionFailed(plain) {
		t.Error("a transport error looks like Azure's answer")
	}
}
