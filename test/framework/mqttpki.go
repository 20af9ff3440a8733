package framework

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// MQTTPKI is a throwaway certificate authority for an MQTT broker and its clients:
// the broker serves a certificate for 127.0.0.1, ::1 and localhost, and clients
// authenticate with certificates whose common name is their identity (brokers use
// it as the MQTT username, as Mosquitto's use_identity_as_username does).
type MQTTPKI struct {
	// Dir holds the PEM files, so that a broker running as a process can read them.
	Dir string
	// CAFile, ServerCertFile and ServerKeyFile are the files a broker is configured with.
	CAFile, ServerCertFile, ServerKeyFile string
	// CAs holds the CA certificate, for clients to verify the broker and the broker its clients.
	CAs *x509.CertPool

	ca     *x509.Certificate
	caKey  crypto.Signer
	server tls.Certificate
}

// NewMQTTPKI creates a CA and a broker serving certificate in a temporary folder of t.
func NewMQTTPKI(t testing.TB) *MQTTPKI {
	t.Helper()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "mqtt-test-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	p := &MQTTPKI{
		Dir:            dir,
		CAFile:         filepath.Join(dir, "ca.crt"),
		ServerCertFile: filepath.Join(dir, "broker.crt"),
		ServerKeyFile:  filepath.Join(dir, "broker.key"),
		CAs:            x509.NewCertPool(),
		ca:             ca,
		caKey:          key,
	}
	p.CAs.AddCert(ca)
	if err := writeMQTTKeyPair(p.CAFile, "", ca, nil); err != nil {
		t.Fatal(err)
	}
	p.server = p.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "mqtt-broker"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, p.ServerCertFile, p.ServerKeyFile)
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
	certFile, keyFile = filepath.Join(p.Dir, cn+".crt"), filepath.Join(p.Dir, cn+".key")
	p.issueClient(t, cn, certFile, keyFile)
	return certFile, keyFile
}

// ClientTLS issues a client certificate for cn and returns a configuration that
// presents it and trusts only this CA.
func (p *MQTTPKI) ClientTLS(t testing.TB, cn string) *tls.Config {
	t.Helper()
	return &tls.Config{
		Certificates: []tls.Certificate{p.issueClient(t, cn, "", "")},
		RootCAs:      p.CAs,
		MinVersion:   tls.VersionTLS12,
	}
}

func (p *MQTTPKI) issueClient(t testing.TB, cn, certFile, keyFile string) tls.Certificate {
	t.Helper()
	return p.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, certFile, keyFile)
}

// issue signs tmpl with a new key, writes both when file names are given and
// returns them as a tls.Certificate.
func (p *MQTTPKI) issue(t testing.TB, tmpl *x509.Certificate, certFile, keyFile string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, key.Public(), p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	if certFile != "" {
		if err := writeMQTTKeyPair(certFile, keyFile, leaf, key); err != nil {
			t.Fatal(err)
		}
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// writeMQTTKeyPair writes c, and key unless it is nil, as PEM files.
func writeMQTTKeyPair(certFile, keyFile string, c *x509.Certificate, key *ecdsa.PrivateKey) error {
	certPEM, err := cert.EncodeCertificates(c)
	if err != nil {
		return err
	}
	if err := cert.WriteCert(certFile, certPEM); err != nil {
		return err
	}
	if key == nil {
		return nil
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	return keyutil.WriteKey(keyFile, keyPEM)
}
