// Package breakglass makes the key and certificate request of a break-glass credential, for the clients
// that make them on the user's machine (kubectl hcp) and for the server when a credential asks it to.
package breakglass

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

const (
	// UserPrefix and Group make the subject HyperShift's customer-break-glass signer signs, and the only
	// one hcp-apiserver accepts: the API's own constants.
	UserPrefix = hcp.BreakglassUserPrefix
	Group      = hcp.BreakglassGroup
)

// NewKeyAndCSR makes an ECDSA P-256 key and a certificate request for user signed with it, both PEM
// encoded (the key as "EC PRIVATE KEY").
func NewKeyAndCSR(user string) (keyPEM, csrPEM []byte, err error) {
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
		Subject: pkix.Name{CommonName: UserPrefix + user, Organization: []string{Group}},
	}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("making the certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER}), nil
}
