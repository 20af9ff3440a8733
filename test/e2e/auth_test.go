package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unauthorized is how kubectl reports a 401.
const unauthorized = "error: You must be logged in to the server"

// TestServerRefusesUnknownClients checks that a standalone server serves its admin
// only: other clients are told they are Unauthorized or Forbidden, and see nothing.
func TestServerRefusesUnknownClients(t *testing.T) {
	s := startServer(t, t.TempDir())
	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "10-hcpcluster.yaml"))

	// kubectl as someone else: no admin kubeconfig, and the server's certificate is not checked,
	// because the client's credentials are what is tested.
	as := func(t *testing.T, credentials ...string) string {
		t.Helper()
		args := append([]string{"--kubeconfig", os.DevNull, "--server", s.URL, "--insecure-skip-tls-verify"}, credentials...)
		out, err := kubectl(t, append(args, "get", "hcpclusters")...)
		if err == nil || strings.Contains(out, "dev-cluster") {
			t.Fatalf("kubectl get hcpclusters %s was served:\n%s", strings.Join(credentials, " "), out)
		}
		return out
	}

	t.Run("a bearer token", func(t *testing.T) {
		if out := as(t, "--token", "x"); !strings.Contains(out, unauthorized) {
			t.Errorf("a bearer token was not refused as Unauthorized:\n%s", out)
		}
	})

	t.Run("a client certificate from another CA", func(t *testing.T) {
		ca, caKey := newCA(t)
		cert, key := issueClientCert(t, ca, caKey, "mallory", "system:masters")
		if out := as(t, "--client-certificate", cert, "--client-key", key); !strings.Contains(out, unauthorized) {
			t.Errorf("a certificate from an unknown CA was not refused as Unauthorized:\n%s", out)
		}
	})

	t.Run("a client certificate from the server's CA outside system:masters", func(t *testing.T) {
		ca, caKey := loadServerCA(t, s.DataDir)
		cert, key := issueClientCert(t, ca, caKey, "alice", "developers")
		// The server denies such users even discovery, so kubectl cannot say more than "Forbidden".
		if out := as(t, "--client-certificate", cert, "--client-key", key); !strings.Contains(out, "Error from server (Forbidden)") {
			t.Errorf("a known user outside system:masters was not refused as Forbidden:\n%s", out)
		}
	})
}

// newCA makes a CA that the server has never heard of.
func newCA(t *testing.T) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "untrusted-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// loadServerCA reads the CA a standalone server made in its data folder, as an operator
// who issues certificates for other users would.
func loadServerCA(t *testing.T, dataDir string) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	certPEM, err := os.ReadFile(filepath.Join(dataDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dataDir, "pki", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		t.Fatalf("the server's CA in %s is not PEM", filepath.Join(dataDir, "pki"))
	}
	ca, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		t.Fatalf("parsing the server's CA key: %v", err)
	}
	return ca, key
}

// issueClientCert signs a client certificate for user in group and writes it and its key
// to files for kubectl.
func issueClientCert(t *testing.T, ca *x509.Certificate, caKey crypto.Signer, user, group string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: user, Organization: []string{group}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = writeFile(t, user+".crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	keyFile = writeFile(t, user+".key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	return certFile, keyFile
}
