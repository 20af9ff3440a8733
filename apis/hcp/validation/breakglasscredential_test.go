package validation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func csrPEM(t *testing.T, subject pkix.Name) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func certificatePEM(t *testing.T) string {
	t.Helper()
	key := newKey(t)
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now(),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

var breakGlassSubject = pkix.Name{CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters"}}

func validBreakglassCredential(t *testing.T) *hcp.BreakglassCredential {
	return &hcp.BreakglassCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "admin-2026-01-01", Namespace: "team-a", ResourceVersion: "1"},
		Spec: hcp.BreakglassCredentialSpec{
			ClusterName:               "my-cluster",
			CertificateSigningRequest: csrPEM(t, breakGlassSubject),
			ExpirationSeconds:         ptr.To[int64](3600),
		},
	}
}

func TestValidateBreakglassCredential(t *testing.T) {
	const csrPath = "spec.certificateSigningRequest"
	validCSR := csrPEM(t, breakGlassSubject)
	tests := []struct {
		name   string
		mutate func(bgc *hcp.BreakglassCredential)
		want   []wantErr
	}{
		{name: "valid", mutate: func(bgc *hcp.BreakglassCredential) {}},
		{name: "server generated key", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.CertificateSigningRequest = "" }},
		{name: "name with periods", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Name = "admin.2026.01" }},
		{name: "invalid name", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Name = "Admin" }, want: []wantErr{invalid("metadata.name")}},
		{name: "no namespace", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Namespace = "" }, want: []wantErr{required("metadata.namespace")}},
		{name: "no cluster name", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ClusterName = "" }, want: []wantErr{required("spec.clusterName")}},
		{name: "invalid cluster name", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ClusterName = "1cluster" }, want: []wantErr{invalid("spec.clusterName")}},

		{name: "not PEM", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.CertificateSigningRequest = "MIIB..." }, want: []wantErr{invalid(csrPath)}},
		{name: "certificate instead of request", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.CertificateSigningRequest = certificatePEM(t) }, want: []wantErr{invalid(csrPath)}},
		{name: "two requests", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.CertificateSigningRequest = validCSR + validCSR }, want: []wantErr{invalid(csrPath)}},
		{name: "garbage in the PEM block", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("not DER")}))
		}, want: []wantErr{invalid(csrPath)}},
		{name: "bad signature", mutate: func(bgc *hcp.BreakglassCredential) {
			block, _ := pem.Decode([]byte(validCSR))
			block.Bytes[len(block.Bytes)-1] ^= 0xff // the last byte is in the signature
			bgc.Spec.CertificateSigningRequest = string(pem.EncodeToMemory(block))
		}, want: []wantErr{invalid(csrPath)}},
		{name: "other user", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "system:customer-break-glass:jane", Organization: []string{"system:masters"}})
		}},
		{name: "CN without prefix", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "system-admin", Organization: []string{"system:masters"}})
		}, want: []wantErr{invalid(csrPath)}},
		{name: "CN without user", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "system:customer-break-glass:", Organization: []string{"system:masters"}})
		}, want: []wantErr{invalid(csrPath)}},
		{name: "no organization", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "system:customer-break-glass:system-admin"})
		}, want: []wantErr{invalid(csrPath)}},
		{name: "extra organization", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters", "other"}})
		}, want: []wantErr{invalid(csrPath)}},

		{name: "10 minutes", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](600) }},
		{name: "24 hours", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](86400) }},
		{name: "under 10 minutes", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](599) }, want: []wantErr{invalid("spec.expirationSeconds")}},
		{name: "over 24 hours", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](86401) }, want: []wantErr{invalid("spec.expirationSeconds")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bgc := validBreakglassCredential(t)
			tc.mutate(bgc)
			expectErrors(t, ValidateBreakglassCredential(bgc), tc.want...)
		})
	}
}

func TestValidateBreakglassCredentialMessages(t *testing.T) {
	bgc := validBreakglassCredential(t)
	bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}})
	expectDetail(t, ValidateBreakglassCredential(bgc), "CN=system:customer-break-glass:<user>, O=system:masters")

	bgc = validBreakglassCredential(t)
	bgc.Spec.ExpirationSeconds = ptr.To[int64](1)
	expectDetail(t, ValidateBreakglassCredential(bgc), "must be between 600 and 86400")
}

func TestValidateBreakglassCredentialUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(bgc *hcp.BreakglassCredential)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(bgc *hcp.BreakglassCredential) {}},
		{name: "labels", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Labels = map[string]string{"purpose": "incident-42"} }},
		{name: "cluster name", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ClusterName = "other" }, want: []wantErr{forbidden("spec")}},
		{name: "expiration", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](600) }, want: []wantErr{forbidden("spec")}},
		{name: "request removed", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.CertificateSigningRequest = "" }, want: []wantErr{forbidden("spec")}},
		{name: "create rules still apply", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](1) }, want: []wantErr{
			invalid("spec.expirationSeconds"), forbidden("spec"),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldBGC := validBreakglassCredential(t)
			newBGC := oldBGC.DeepCopy()
			tc.mutate(newBGC)
			expectErrors(t, ValidateBreakglassCredentialUpdate(newBGC, oldBGC), tc.want...)
		})
	}
}

func TestValidateBreakglassCredentialStatusUpdate(t *testing.T) {
	cert := certificatePEM(t)
	tests := []struct {
		name   string
		mutate func(bgc *hcp.BreakglassCredential)
		want   []wantErr
	}{
		{name: "issued", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Status = hcp.BreakglassCredentialStatus{
				Phase:               hcp.BreakglassCredentialPhaseIssued,
				Certificate:         cert,
				ExpirationTimestamp: ptr.To(metav1.Unix(1767229200, 0)),
				Conditions:          []metav1.Condition{condition("Issued", metav1.ConditionTrue)},
			}
		}},
		{name: "certificate with chain", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Status.Certificate = cert + cert }},
		{name: "revoked", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Status.Phase = hcp.BreakglassCredentialPhaseRevoked }},
		{name: "unknown phase", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Status.Phase = "Active" }, want: []wantErr{notSupported("status.phase")}},
		{name: "certificate not PEM", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Status.Certificate = "MIIB..." }, want: []wantErr{invalid("status.certificate")}},
		{name: "request instead of certificate", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Status.Certificate = bgc.Spec.CertificateSigningRequest
		}, want: []wantErr{invalid("status.certificate")}},
		{name: "certificate not DER", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Status.Certificate = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")}))
		}, want: []wantErr{invalid("status.certificate")}},
		{name: "text after the certificate", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Status.Certificate = cert + "trailing" }, want: []wantErr{invalid("status.certificate")}},
		{name: "condition without type", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Status.Conditions = []metav1.Condition{condition("", metav1.ConditionTrue)}
		}, want: []wantErr{required("status.conditions[0].type")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldBGC := validBreakglassCredential(t)
			newBGC := oldBGC.DeepCopy()
			tc.mutate(newBGC)
			expectErrors(t, ValidateBreakglassCredentialStatusUpdate(newBGC, oldBGC), tc.want...)
		})
	}
}
