package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"

	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "local development", change: func(o *Options) {}},
		{name: "no location", change: func(o *Options) { o.Location = "" }, wantErr: "--location is required"},
		{name: "bad address", change: func(o *Options) { o.BindAddress = "localhost" }, wantErr: "--bind-address"},
		{name: "bad port", change: func(o *Options) { o.SecurePort = 70000 }, wantErr: "--secure-port"},
		{name: "certificate without key", change: func(o *Options) { o.TLSCertFile = "c" }, wantErr: "go together"},
		{name: "client CA without serving certificate", change: func(o *Options) { o.ClientCAFile = "ca" }, wantErr: "--client-ca-file needs"},
		{name: "production", change: func(o *Options) { o.ClientCAFile, o.TLSCertFile, o.TLSKeyFile, o.PKIDir = "ca", "c", "k", "" }},
		{name: "no read timeout", change: func(o *Options) { o.Timeouts.Read = 0 }, wantErr: "--read-timeout 0s must be positive"},
		{name: "no idle timeout", change: func(o *Options) { o.Timeouts.Idle = 0 }, wantErr: "--idle-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.Location = "eastus"
			tt.change(o)
			err := o.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

const unusedKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: hcp
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: shim
  user: {token: unused}
contexts:
- name: hcp
  context: {cluster: hcp, user: shim}
current-context: hcp
`

// TestLocalPKI starts the shim as a developer would, with no CA given: it makes its own, serves with
// it, and lets in only the client certificate it made.
func TestLocalPKI(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unusedKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.Kubeconfig, o.Location, o.PKIDir, o.SecurePort = kubeconfig, "eastus", filepath.Join(dir, "pki"), 0
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cfg, err := o.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, listener) }()

	pki := LocalPKI(o.PKIDir)
	for _, f := range []string{pki.CACert, pki.ServingCert, pki.ServingKey, pki.AdminCert, pki.AdminKey} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the local PKI lacks %s: %v", filepath.Base(f), err)
		}
	}
	if filepath.Base(pki.AdminCert) != "client.crt" {
		t.Errorf("client certificate in %s", pki.AdminCert)
	}
	roots, clientCert := localTrust(t, pki)
	strangerPEM, strangerKey, err := cert.GenerateSelfSignedCertKey("stranger", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := tls.X509KeyPair(strangerPEM, strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + listener.Addr().String() + "/providers/Microsoft.RedHatOpenShift/operations"
	get := func(certs ...tls.Certificate) (*http.Response, error) {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		return c.Get(url)
	}
	resp, err := get(clientCert)
	if err != nil {
		t.Fatalf("with the shim's client certificate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ms-Request-Id") == "" {
		t.Errorf("operations list: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, err := get(); err == nil {
		resp.Body.Close()
		t.Errorf("a request without a client certificate got %d", resp.StatusCode)
	}
	if resp, err := get(stranger); err == nil {
		resp.Body.Close()
		t.Errorf("a request with a certificate of another CA got %d", resp.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after the context ended: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the shim did not stop")
	}

	// A restart keeps the certificates clients already hold.
	before, _ := os.ReadFile(pki.AdminCert)
	if _, err := o.Config(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(pki.AdminCert); string(after) != string(before) {
		t.Error("a restart replaced the client certificate")
	}
}

// localTrust is what a client of the local PKI holds: its CA and its client certificate.
func localTrust(t *testing.T, pki *standalone.PKI) (*x509.CertPool, tls.Certificate) {
	t.Helper()
	caPEM, err := os.ReadFile(pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	clientCert, err := tls.LoadX509KeyPair(pki.AdminCert, pki.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	return roots, clientCert
}
