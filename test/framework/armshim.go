package framework

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ARMShim is the arm-shim binary in its local mode: its own CA, a serving certificate and the client
// certificate ARM would present.
type ARMShim struct {
	*Process
	// URL is where it serves, on loopback.
	URL string
	// PKIDir holds ca.crt, client.crt and client.key.
	PKIDir string
}

// StartARMShim starts arm-shim for location against the hcp-apiserver that kubeconfig reaches, with
// extra args, and returns once it serves /healthz. It is stopped when the test ends.
func StartARMShim(t testing.TB, kubeconfig, location string, args ...string) *ARMShim {
	t.Helper()
	pki := filepath.Join(t.TempDir(), "pki")
	port := FreePort(t)
	process := StartProcess(t, ComponentDir(t, "arm-shim"), Command(t, "arm-shim"),
		append([]string{"--kubeconfig=" + kubeconfig, "--location=" + location, "--pki-dir=" + pki,
			"--secure-port=" + strconv.Itoa(port)}, args...)...)
	shim := &ARMShim{Process: process, URL: "https://127.0.0.1:" + strconv.Itoa(port), PKIDir: pki}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status := shim.healthz(t)
		if status == http.StatusOK {
			return shim
		}
		select {
		case <-process.Exited():
			t.Fatalf("arm-shim exited before serving: %v", process.ExitError())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("arm-shim did not serve /healthz within 2m (last status %d)", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// healthz answers the status of /healthz, or 0 while the shim is not up.
func (s *ARMShim) healthz(t testing.TB) int {
	if _, err := os.Stat(filepath.Join(s.PKIDir, "client.key")); err != nil {
		return 0
	}
	resp, err := s.HTTPClient(t).Get(s.URL + "/healthz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// HTTPClient trusts the shim's CA and presents its client certificate, as ARM presents its own.
func (s *ARMShim) HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	return &http.Client{Transport: &http.Transport{TLSClientConfig: s.TLSConfig(t)}}
}

// TLSConfig is HTTPClient's TLS configuration, for clients that dial the shim themselves.
func (s *ARMShim) TLSConfig(t testing.TB) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(s.PKIDir, "client.crt"), filepath.Join(s.PKIDir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(s.PKIDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots}
}
