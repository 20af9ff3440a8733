package azure

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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

func TestCredentialKinds(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hcp-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile := filepath.Join(dir, "cert.pem")
	mustWrite(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))+
		string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	tokenFile := filepath.Join(dir, "token")
	mustWrite(t, tokenFile, "projected-sa-token")

	tests := []struct {
		name          string
		credential    Credential
		wantAssertion func(string) bool
	}{
		{
			name:       "a certificate signs a JWT assertion",
			credential: Credential{Kind: ClientCertificate, ClientID: "app", CertificateFile: certFile},
			wantAssertion: func(a string) bool {
				return strings.Count(a, ".") == 2
			},
		},
		{
			name:          "workload identity presents the projected token",
			credential:    Credential{Kind: WorkloadIdentity, ClientID: "app", TokenFile: tokenFile},
			wantAssertion: func(a string) bool { return a == "projected-sa-token" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAzure(t)
			cfg := f.config()
			cfg.Credential = tc.credential
			c, err := NewClients(cfg)
			if err != nil {
				t.Fatalf("NewClients: %v", err)
			}
			f.handle(func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, Zone{ID: testZoneID})
			})
			if _, err := c.DNS.GetZone(context.Background(), testZoneID); err != nil {
				t.Fatalf("GetZone: %v", err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.assertions) != 1 || !tc.wantAssertion(f.assertions[0]) {
				t.Errorf("token requests' assertions %q", f.assertions)
			}
		})
	}
}
