package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
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
		other := standalone.NewPKI(t.TempDir())
		if err := other.Ensure(nil); err != nil {
			t.Fatal(err)
		}
		cert, key := issueClientCert(t, other, "mallory", "system:masters")
		if out := as(t, "--client-certificate", cert, "--client-key", key); !strings.Contains(out, unauthorized) {
			t.Errorf("a certificate from an unknown CA was not refused as Unauthorized:\n%s", out)
		}
	})

	t.Run("a client certificate from the server's CA outside system:masters", func(t *testing.T) {
		// As an operator who issues certificates for other users would, from the server's own CA.
		cert, key := issueClientCert(t, standalone.NewPKI(filepath.Join(s.DataDir, "pki")), "alice", "developers")
		// Such users may read discovery, so kubectl gets as far as the request and shows its refusal.
		if out := as(t, "--client-certificate", cert, "--client-key", key); !strings.Contains(out, "Error from server (Forbidden)") {
			t.Errorf("a known user outside system:masters was not refused as Forbidden:\n%s", out)
		}
		out, err := kubectl(t, "--kubeconfig", os.DevNull, "--server", s.URL, "--insecure-skip-tls-verify",
			"--client-certificate", cert, "--client-key", key, "get", "--raw", "/apis/hcp.aro.azure.com/v1alpha1")
		if err != nil || !strings.Contains(out, `"name":"hcpclusters"`) {
			t.Errorf("a known user outside system:masters does not read discovery: %v\n%s", err, out)
		}
	})
}

// issueClientCert signs a client certificate for user in group with the CA of pki and writes
// it and its key to files for kubectl.
func issueClientCert(t *testing.T, pki *standalone.PKI, user, group string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM, err := standalone.IssueClientCertificate(pki.CACert, pki.CAKey, user, []string{group})
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, user+".crt", string(certPEM)), writeFile(t, user+".key", string(keyPEM))
}
