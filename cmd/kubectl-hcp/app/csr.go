package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
)

const (
	// breakGlassUserPrefix and breakGlassGroup make the subject HyperShift's customer-break-glass
	// signer signs, and the only one hcp-apiserver accepts.
	breakGlassUserPrefix = "system:customer-break-glass:"
	breakGlassGroup      = "system:masters"
)

// newKeyAndCSR makes an ECDSA P-256 key and a certificate request for user signed with it. It returns
// both PEM encoded; only the request is sent anywhere.
func newKeyAndCSR(user string) (keyPEM, csrPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("making a key: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key: %w", err)
	}
	// No SANs and no extensions: the signer decides the usages of a client certificate, and the
	// server refuses requests for any other.
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: breakGlassUserPrefix + user, Organization: []string{breakGlassGroup}},
	}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("making the certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER}), nil
}
