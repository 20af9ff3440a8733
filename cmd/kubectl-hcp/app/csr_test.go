package app

import (
	"crypto/x509"
	"encoding/pem"
	"github.com/aro-hcp/hcp-apiserver/pkg/breakglass"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
)

// credential is what breakglass would create for cluster dev with csrPEM, as the server validates it.
func credential(csrPEM []byte, ttl time.Duration) *hcp.BreakglassCredential {
	return &hcp.BreakglassCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "dev-x7k2p", Namespace: "team-a"},
		Spec: hcp.BreakglassCredentialSpec{
			ClusterName:               "dev",
			CertificateSigningRequest: string(csrPEM),
			ExpirationSeconds:         ptr.To(int64(ttl / time.Second)),
		},
	}
}

// TestCSRIsWhatTheServerAccepts: the request passes the server's own validation, and it is for the
// key that goes into the kubeconfig.
func TestCSRIsWhatTheServerAccepts(t *testing.T) {
	for _, user := range []string{"system-admin", "jane@example.com"} {
		t.Run(user, func(t *testing.T) {
			keyPEM, csrPEM, err := breakglass.NewKeyAndCSR(user)
			if err != nil {
				t.Fatal(err)
			}
			if errs := validation.ValidateBreakglassCredential(credential(csrPEM, time.Hour)); len(errs) > 0 {
				t.Fatalf("the server refuses the request: %v", errs.ToAggregate())
			}

			block, _ := pem.Decode(csrPEM)
			csr, err := x509.ParseCertificateRequest(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if want := "system:customer-break-glass:" + user; csr.Subject.CommonName != want {
				t.Errorf("CN = %q, want %q", csr.Subject.CommonName, want)
			}
			if !slices.Equal(csr.Subject.Organization, []string{"system:masters"}) {
				t.Errorf("O = %q, want exactly system:masters", csr.Subject.Organization)
			}
			if len(csr.Extensions) > 0 || len(csr.DNSNames)+len(csr.IPAddresses)+len(csr.EmailAddresses)+len(csr.URIs) > 0 {
				t.Errorf("the request asks for extensions %v", csr.Extensions)
			}

			keyBlock, _ := pem.Decode(keyPEM)
			if keyBlock == nil || keyBlock.Type != "EC PRIVATE KEY" {
				t.Fatalf("key is not a PEM EC PRIVATE KEY: %q", keyPEM)
			}
			key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if !key.PublicKey.Equal(csr.PublicKey) {
				t.Error("the request is not for the key")
			}
		})
	}
}

// TestTTL: --ttl is refused here outside the lifetimes the server issues, and what is accepted here
// the server accepts too.
func TestTTL(t *testing.T) {
	_, csrPEM, err := breakglass.NewKeyAndCSR("system-admin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ttl  time.Duration
		want bool
	}{
		{ttl: 10*time.Minute - time.Second},
		{ttl: 10 * time.Minute, want: true},
		{ttl: time.Hour, want: true},
		{ttl: 24 * time.Hour, want: true},
		{ttl: 24*time.Hour + time.Second},
		{ttl: 0},
		{ttl: -time.Hour},
	} {
		t.Run(tc.ttl.String(), func(t *testing.T) {
			o := newBreakglassOptions()
			o.TTL = tc.ttl
			err := o.Validate()
			if got := err == nil; got != tc.want {
				t.Fatalf("Validate() = %v, want accepted %v", err, tc.want)
			}
			if tc.want {
				if errs := validation.ValidateBreakglassCredential(credential(csrPEM, tc.ttl)); len(errs) > 0 {
					t.Errorf("accepted here, refused by the server: %v", errs.ToAggregate())
				}
			}
		})
	}
}
