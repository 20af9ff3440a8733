package framework

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// MQTTPKI is a throwaway certificate authority for an MQTT broker and its clients,
// made by the server's own standalone PKI: the broker serves a certificate for
// 127.0.0.1, ::1 and localhost, and clients authenticate with certificates whose
// common name is their identity (brokers use it as the MQTT username, as Mosquitto's
// use_identity_as_username does).
type MQTTPKI struct {
	// Dir holds the PEM files, so that a broker running as a process can read them.
	Dir string
	// CAFile, ServerCertFile and ServerKeyFile are the files a broker is configured with.
	CAFile, ServerCertFile, ServerKeyFile string
	// CAs holds the CA certificate, for clients to verify the broker and the broker its clients.
	CAs *x509.CertPool

	pki    *standalone.PKI
	server tls.Certificate
}

// NewMQTTPKI creates a CA and a broker serving certificate in a temporary folder of t.
func NewMQTTPKI(t testing.TB) *MQTTPKI {
	t.Helper()
	pki := standalone.NewPKI(t.TempDir())
	if err := pki.Ensure([]string{"localhost", "127.0.0.1", "::1"}); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	p := &MQTTPKI{
		Dir:            pki.Dir,
		CAFile:         pki.CACert,
		ServerCertFile: pki.ServingCert,
		ServerKeyFile:  pki.ServingKey,
		CAs:            x509.NewCertPool(),
		pki:            pki,
	}
	if !p.CAs.AppendCertsFromPEM(caPEM) {
		t.Fatalf("no CA certificate in %s", pki.CACert)
	}
	if p.server, err = tls.LoadX509KeyPair(pki.ServingCert, pki.ServingKey); err != nil {
		t.Fatal(err)
	}
	return p
}

// ServerTLS is the TLS configuration of a broker that serves the broker certificate
// and admits only clients with a certificate from this CA.
func (p *MQTTPKI) ServerTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientCAs:    p.CAs,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
}

// ClientCert issues a client certificate for cn and writes it and its key to
// <cn>.crt and <cn>.key in Dir, for clients that read files (e.g. maestro-agent).
func (p *MQTTPKI) ClientCert(t testing.TB, cn string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM := p.issueClient(t, cn)
	certFile, keyFile = filepath.Join(p.Dir, cn+".crt"), filepath.Join(p.Dir, cn+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// ClientTLS issues a client certificate for cn and returns a configuration that
// presents it and trusts only this CA.
func (p *MQTTPKI) ClientTLS(t testing.TB, cn string) *tls.Config {
	t.Helper()
	pair, err := tls.X509KeyPair(p.issueClient(t, cn))
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		RootCAs:      p.CAs,
		MinVersion:   tls.VersionTLS12,
	}
}

func (p *MQTTPKI) issueClient(t testing.TB, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := standalone.IssueClientCertificate(p.pki.CACert, p.pki.CAKey, cn, nil)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}
