package validation

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
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

// csrPEM returns a request for subject signed with a new key, asking for the extensions given.
func csrPEM(t *testing.T, subject pkix.Name, extensions ...pkix.Extension) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, ExtraExtensions: extensions}, newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// csrWithKey returns a valid break-glass request signed with key.
func csrWithKey(t *testing.T, key crypto.Signer) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: breakGlassSubject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// extKeyUsage is an extended key usage extension listing oids.
func extKeyUsage(t *testing.T, oids ...asn1.ObjectIdentifier) pkix.Extension {
	t.Helper()
	if oids == nil {
		oids = []asn1.ObjectIdentifier{}
	}
	value, err := asn1.Marshal(oids)
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: oidExtendedKeyUsage, Value: value}
}

// keyUsage is a key usage extension with the given bits of RFC 5280 set.
func keyUsage(t *testing.T, usages ...x509.KeyUsage) pkix.Extension {
	t.Helper()
	bits := asn1.BitString{Bytes: make([]byte, 2)}
	for _, u := range usages {
		for i := range 9 {
			if u&(1<<i) != 0 {
				bits.Bytes[i/8] |= 0x80 >> (i % 8)
				bits.BitLength = max(bits.BitLength, i+1)
			}
		}
	}
	value, err := asn1.Marshal(bits)
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: oidKeyUsage, Value: value, Critical: true}
}

var (
	oidServerAuth = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 1}
	oidCodeSign   = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 3}
)

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
		// detail are substrings of the only error, when given.
		detail []string
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
		{name: "RSA 1024", mutate: func(bgc *hcp.BreakglassCredential) {
			key, err := rsa.GenerateKey(rand.Reader, 1024)
			if err != nil {
				t.Fatal(err)
			}
			bgc.Spec.CertificateSigningRequest = csrWithKey(t, key)
		}, want: []wantErr{invalid(csrPath)}},
		{name: "RSA 2048", mutate: func(bgc *hcp.BreakglassCredential) {
			key, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				t.Fatal(err)
			}
			bgc.Spec.CertificateSigningRequest = csrWithKey(t, key)
		}},
		{name: "ECDSA P-224", mutate: func(bgc *hcp.BreakglassCredential) {
			key, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			bgc.Spec.CertificateSigningRequest = csrWithKey(t, key)
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

		{name: "client key usages", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject,
				keyUsage(t, x509.KeyUsageDigitalSignature, x509.KeyUsageKeyEncipherment), extKeyUsage(t, oidClientAuth))
		}},
		{name: "digital signature only", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, keyUsage(t, x509.KeyUsageDigitalSignature))
		}},
		{name: "key usage to sign certificates", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, keyUsage(t, x509.KeyUsageDigitalSignature, x509.KeyUsageCertSign))
		}, want: []wantErr{invalid(csrPath)}, detail: []string{
			`spec.certificateSigningRequest: Invalid value: "keyUsage digitalSignature, keyCertSign"`,
			"a break-glass credential is a client certificate: request only digitalSignature and keyEncipherment, or no key usage",
		}},
		{name: "malformed key usage", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, pkix.Extension{Id: oidKeyUsage, Value: []byte{0x05, 0x00}})
		}, want: []wantErr{invalid(csrPath)}, detail: []string{"spec.certificateSigningRequest", "requests a malformed key usage extension"}},
		{name: "extended key usage server auth too", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, extKeyUsage(t, oidClientAuth, oidServerAuth))
		}, want: []wantErr{invalid(csrPath)}, detail: []string{
			`spec.certificateSigningRequest: Invalid value: "extendedKeyUsage clientAuth, serverAuth"`,
			"a break-glass credential is a client certificate: request clientAuth only, or no extended key usage",
		}},
		{name: "unnamed extended key usage", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, extKeyUsage(t, oidCodeSign, asn1.ObjectIdentifier{1, 2, 3, 4}))
		}, want: []wantErr{invalid(csrPath)}, detail: []string{`"extendedKeyUsage codeSigning, 1.2.3.4"`, "request clientAuth only"}},
		{name: "empty extended key usage", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, extKeyUsage(t))
		}, want: []wantErr{invalid(csrPath)}, detail: []string{`"extendedKeyUsage (none)"`, "request clientAuth only"}},
		{name: "malformed extended key usage", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, breakGlassSubject, pkix.Extension{Id: oidExtendedKeyUsage, Value: []byte{0x05, 0x00}})
		}, want: []wantErr{invalid(csrPath)}, detail: []string{"spec.certificateSigningRequest", "requests a malformed extended key usage extension"}},
		{name: "bad subject and usages are reported together", mutate: func(bgc *hcp.BreakglassCredential) {
			bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
				keyUsage(t, x509.KeyUsageCertSign), extKeyUsage(t, oidServerAuth))
		}, want: []wantErr{invalid(csrPath), invalid(csrPath), invalid(csrPath)}},

		{name: "10 minutes", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](600) }},
		{name: "24 hours", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](86400) }},
		{name: "under 10 minutes", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](599) }, want: []wantErr{invalid("spec.expirationSeconds")}},
		{name: "over 24 hours", mutate: func(bgc *hcp.BreakglassCredential) { bgc.Spec.ExpirationSeconds = ptr.To[int64](86401) }, want: []wantErr{invalid("spec.expirationSeconds")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bgc := validBreakglassCredential(t)
			tc.mutate(bgc)
			errs := ValidateBreakglassCredential(bgc)
			expectErrors(t, errs, tc.want...)
			if len(tc.detail) > 0 {
				expectDetail(t, errs, tc.detail...)
			}
		})
	}
}

func TestValidateBreakglassCredentialMessages(t *testing.T) {
	bgc := validBreakglassCredential(t)
	bgc.Spec.CertificateSigningRequest = csrPEM(t, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}})
	expectDetail(t, ValidateBreakglassCredential(bgc), "CN=system:customer-break-glass:<user>, O=system:masters")

	bgc = validBreakglassCredential(t)
	bgc.Spec.ExpirationSeconds = ptr.To[int64](1)
	expectDetail(t, ValidateBreakglassCredential(bgc), "must be greater than or equal to 600")
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
