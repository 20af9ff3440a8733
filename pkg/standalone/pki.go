// Package standalone makes hcp-apiserver usable without a kube-apiserver in
// front of it: its own certificate authority, a serving certificate, an admin
// client certificate with its kubeconfig, and the authenticator and authorizer
// that admit that admin and nobody else.
package standalone

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// AdminUser and AdminGroup are who admin.kubeconfig authenticates as.
const (
	AdminUser  = "hcp-admin"
	AdminGroup = "system:masters"
)

// PKI holds the paths of the files EnsurePKI keeps in its folder.
type PKI struct {
	Dir                 string
	CACert, CAKey       string
	ServingCert         string
	ServingKey          string
	AdminCert, AdminKey string
}

// NewPKI names the files of a PKI in dir.
func NewPKI(dir string) *PKI {
	p := func(name string) string { return filepath.Join(dir, name) }
	return &PKI{
		Dir:    dir,
		CACert: p("ca.crt"), CAKey: p("ca.key"),
		ServingCert: p("serving.crt"), ServingKey: p("serving.key"),
		AdminCert: p("admin.crt"), AdminKey: p("admin.key"),
	}
}

// Ensure creates whatever of the CA, serving and admin certificates is missing, and
// replaces a serving certificate that does not cover every host in hosts. Existing
// certificates are kept, so clients keep working across restarts.
func (p *PKI) Ensure(hosts []string) error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return err
	}
	caCert, caKey, err := p.ensureCA()
	if err != nil {
		return err
	}
	if !exists(p.ServingCert) || !servingCovers(p.ServingCert, hosts) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "hcp-apiserver"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
		if err := issue(tmpl, caCert, caKey, p.ServingCert, p.ServingKey); err != nil {
			return err
		}
	}
	if !exists(p.AdminCert) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := issue(tmpl, caCert, caKey, p.AdminCert, p.AdminKey); err != nil {
			return err
		}
	}
	return nil
}

func (p *PKI) ensureCA() (*x509.Certificate, crypto.Signer, error) {
	if !exists(p.CACert) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		caCert, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "hcp-apiserver-ca"}, key)
		if err != nil {
			return nil, nil, err
		}
		if err := writeKeyPair(p.CACert, p.CAKey, caCert, key); err != nil {
			return nil, nil, err
		}
	}
	return loadCA(p.CACert, p.CAKey)
}

func loadCA(certFile, keyFile string) (*x509.Certificate, crypto.Signer, error) {
	certs, err := cert.CertsFromFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	keyAny, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	key, ok := keyAny.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s does not hold a signing key", keyFile)
	}
	return certs[0], key, nil
}

// IssueClientCertificate signs a client certificate for cn in the groups orgs, valid for a
// year, with the CA in caCertFile and caKeyFile, and returns it and its new key as PEM. The
// embedded MQTT broker's clients (the server itself and the maestro agents) get theirs here.
func IssueClientCertificate(caCertFile, caKeyFile, cn string, orgs []string) (certPEM, keyPEM []byte, err error) {
	ca, caKey, err := loadCA(caCertFile, caKeyFile)
	if err != nil {
		return nil, nil, err
	}
	c, key, err := sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return nil, nil, err
	}
	if certPEM, err = cert.EncodeCertificates(c); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// issue signs a certificate valid for a year from the template and writes it with a new key.
func issue(tmpl *x509.Certificate, ca *x509.Certificate, caKey crypto.Signer, certFile, keyFile string) error {
	issued, key, err := sign(tmpl, ca, caKey)
	if err != nil {
		return err
	}
	return writeKeyPair(certFile, keyFile, issued, key)
}

// sign signs a certificate valid for a year from the template for a new key.
func sign(tmpl *x509.Certificate, ca *x509.Certificate, caKey crypto.Signer) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(365 * 24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	issued, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return issued, key, nil
}

func writeKeyPair(certFile, keyFile string, c *x509.Certificate, key *ecdsa.PrivateKey) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
		return err
	}
	certPEM, err := cert.EncodeCertificates(c)
	if err != nil {
		return err
	}
	return cert.WriteCert(certFile, certPEM)
}

// servingCovers tells whether the certificate in certFile is valid for every host.
func servingCovers(certFile string, hosts []string) bool {
	certs, err := cert.CertsFromFile(certFile)
	if err != nil || len(certs) == 0 {
		return false
	}
	if time.Now().After(certs[0].NotAfter.Add(-30 * 24 * time.Hour)) {
		return false
	}
	for _, h := range hosts {
		if certs[0].VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
