package azure

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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
	// scopes and assertions are what each token request asked for and proved itself with.
	scopes     []string
	assertions []string
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
		f.assertions = append(f.assertions, r.PostForm.Get("client_assertion"))
		f.mu.Unlock()
		secretOK := r.PostForm.Get("client_secret") == "s3cret"
		assertionOK := r.PostForm.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" && r.PostForm.Get("client_assertion") != ""
		if r.PostForm.Get("client_id") != "app" || !(secretOK || assertionOK) {
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
