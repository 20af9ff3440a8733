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

// ARMShim is a running arm-shim binary and what a client needs to call it as ARM does.
type ARMShim struct {
	*Process
	// URL is where it serves, on loopback.
	URL string
	// PKIDir, in local mode, holds ca.crt, client.crt and client.key.
	PKIDir string
	// caFile verifies the shim's serving certificate; clientCert and clientKey are the certificate ARM
	// would present.
	caFile, clientCert, clientKey string
}

// StartARMShim starts arm-shim in its local mode (its own CA, a serving certificate and the client
// certificate ARM would present) for location against the hcp-apiserver that kubeconfig reaches, with
// extra args, and returns once it serves /healthz. It is stopped when the test ends.
func StartARMShim(t testing.TB, kubeconfig, location string, args ...string) *ARMShim {
	t.Helper()
	pki := filepath.Join(t.TempDir(), "pki")
	port := FreePort(t)
	shim := &ARMShim{URL: "https://127.0.0.1:" + strconv.Itoa(port), PKIDir: pki,
		caFile: filepath.Join(pki, "ca.crt"), clientCert: filepath.Join(pki, "client.crt"), clientKey: filepath.Join(pki, "client.key")}
	return shim.start(t, append([]string{"--kubeconfig=" + kubeconfig, "--location=" + location, "--pki-dir=" + pki,
		"--secure-port=" + strconv.Itoa(port)}, args...))
}

// StartARMShimWithCertificates starts arm-shim with args that make it serve on loopback at port with
// certificates of its own (--tls-cert-file, --client-ca-file); the shim's clients verify it with caFile
// and present clientCert and clientKey.
func StartARMShimWithCertificates(t testing.TB, port int, caFile, clientCert, clientKey string, args ...string) *ARMShim {
	t.Helper()
	shim := &ARMShim{URL: "https://127.0.0.1:" + strconv.Itoa(port), caFile: caFile, clientCert: clientCert, clientKey: clientKey}
	return shim.start(t, args)
}

func (s *ARMShim) start(t testing.TB, args []string) *ARMShim {
	t.Helper()
	s.Process = StartProcess(t, ComponentDir(t, "arm-shim"), Command(t, "arm-shim"), args...)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status := s.healthz(t)
		if status == http.StatusOK {
			return s
		}
		select {
		case <-s.Exited():
			t.Fatalf("arm-shim exited before serving: %v", s.ExitError())
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
	// In local mode the shim writes its PKI as it starts.
	if _, err := os.Stat(s.clientKey); err != nil {
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
	cert, err := tls.LoadX509KeyPair(s.clientCert, s.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(s.caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots}
}
