package validation

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

const (
	breakGlassUserPrefix = hcp.BreakglassUserPrefix
	breakGlassGroup      = hcp.BreakglassGroup

	minExpirationSeconds = 10 * 60
	maxExpirationSeconds = 24 * 60 * 60
)

var (
	oidKeyUsage         = asn1.ObjectIdentifier{2, 5, 29, 15}
	oidExtendedKeyUsage = asn1.ObjectIdentifier{2, 5, 29, 37}
	oidClientAuth       = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 2}

	// knownExtKeyUsages name the extended key usages an error may have to mention.
	knownExtKeyUsages = map[string]string{
		"2.5.29.37.0":       "any",
		"1.3.6.1.5.5.7.3.1": "serverAuth",
		"1.3.6.1.5.5.7.3.2": "clientAuth",
		"1.3.6.1.5.5.7.3.3": "codeSigning",
		"1.3.6.1.5.5.7.3.4": "emailProtection",
		"1.3.6.1.5.5.7.3.8": "timeStamping",
		"1.3.6.1.5.5.7.3.9": "OCSPSigning",
	}
	// keyUsageNames are the bits of the key usage extension, in order (RFC 5280 4.2.1.3).
	keyUsageNames = []string{"digitalSignature", "contentCommitment", "keyEncipherment", "dataEncipherment",
		"keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"}
	// allowedKeyUsages are what a Kubernetes client certificate uses: signing, and with RSA keys,
	// key encipherment.
	allowedKeyUsages = []string{"digitalSignature", "keyEncipherment"}
)

var breakglassCredentialPhases = []hcp.BreakglassCredentialPhase{
	hcp.BreakglassCredentialPhasePending, hcp.BreakglassCredentialPhaseIssued, hcp.BreakglassCredentialPhaseFailed,
	hcp.BreakglassCredentialPhaseExpired, hcp.BreakglassCredentialPhaseRevoked,
}

// ValidateBreakglassCredential validates a credential request on create.
func ValidateBreakglassCredential(bgc *hcp.BreakglassCredential) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&bgc.ObjectMeta, true, validateDNSSubdomainName, field.NewPath("metadata"))
	return append(allErrs, validateBreakglassCredentialSpec(&bgc.Spec, field.NewPath("spec"))...)
}

// ValidateBreakglassCredentialUpdate validates an update. The spec is what was signed (or is
// being signed), so it cannot change; a different credential is a new object.
func ValidateBreakglassCredentialUpdate(newBGC, oldBGC *hcp.BreakglassCredential) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newBGC.ObjectMeta, &oldBGC.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateBreakglassCredential(newBGC)...)
	if !apiequality.Semantic.DeepEqual(newBGC.Spec, oldBGC.Spec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation; create a new BreakglassCredential instead"))
	}
	return allErrs
}

// ValidateBreakglassCredentialStatusUpdate validates a write to the status subresource.
func ValidateBreakglassCredentialStatusUpdate(newBGC, oldBGC *hcp.BreakglassCredential) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newBGC.ObjectMeta, &oldBGC.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateBreakglassCredentialStatus(&newBGC.Status, field.NewPath("status"))...)
}

func validateBreakglassCredentialSpec(spec *hcp.BreakglassCredentialSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateClusterName(fldPath.Child("clusterName"), spec.ClusterName)
	if spec.CertificateSigningRequest != "" {
		allErrs = append(allErrs, validateCertificateSigningRequest(fldPath.Child("certificateSigningRequest"), spec.CertificateSigningRequest)...)
	}
	if spec.ExpirationSeconds != nil {
		allErrs = append(allErrs, validateRange(fldPath.Child("expirationSeconds"), *spec.ExpirationSeconds, minExpirationSeconds, maxExpirationSeconds)...)
	}
	return allErrs
}

// validateCertificateSigningRequest requires one PEM "CERTIFICATE REQUEST" whose signature
// verifies (the requester holds the key), whose subject is what the break-glass signer signs, and
// which, when it asks for key usages, asks for those of a client certificate only: a break-glass
// credential must not be usable to serve TLS or sign other certificates.
func validateCertificateSigningRequest(fldPath *field.Path, csrPEM string) field.ErrorList {
	const subjectMsg = "subject must be CN=" + breakGlassUserPrefix + "<user>, O=" + breakGlassGroup +
		", such as CN=" + breakGlassUserPrefix + "system-admin, O=" + breakGlassGroup
	block, rest := pem.Decode([]byte(csrPEM))
	if block == nil || block.Type != "CERTIFICATE REQUEST" || len(bytes.TrimSpace(rest)) > 0 {
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, `must be exactly one PEM block of type "CERTIFICATE REQUEST"`)}
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, fmt.Sprintf("must be a PKCS#10 certificate request: %v", err))}
	}
	if err := csr.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{},
			fmt.Sprintf("must be signed with the key it requests a certificate for: %v", err))}
	}
	var allErrs field.ErrorList
	if weak := weakKey(csr.PublicKey); weak != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, weak,
			"a break-glass credential is cluster-admin: use an RSA key of at least 2048 bits, or an ECDSA key of at least 256 bits, or Ed25519"))
	}
	user, found := strings.CutPrefix(csr.Subject.CommonName, breakGlassUserPrefix)
	if !found || user == "" || !slices.Equal(csr.Subject.Organization, []string{breakGlassGroup}) {
		allErrs = append(allErrs, field.Invalid(fldPath, csr.Subject.String(), subjectMsg))
	}
	return append(allErrs, validateCSRUsages(fldPath, csr.Extensions)...)
}

// weakKey names a public key too weak for a cluster-admin credential; empty when it is strong enough.
func weakKey(key any) string {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if bits := k.N.BitLen(); bits < 2048 {
			return fmt.Sprintf("RSA key of %d bits", bits)
		}
	case *ecdsa.PublicKey:
		if bits := k.Curve.Params().BitSize; bits < 256 {
			return fmt.Sprintf("ECDSA key of %d bits", bits)
		}
	}
	return ""
}

// validateCSRUsages allows a key usage extension with digitalSignature and keyEncipherment only,
// and an extended key usage extension with clientAuth only.
func validateCSRUsages(fldPath *field.Path, extensions []pkix.Extension) field.ErrorList {
	var allErrs field.ErrorList
	for _, ext := range extensions {
		switch {
		case ext.Id.Equal(oidKeyUsage):
			usages, ok := keyUsages(ext.Value)
			if !ok {
				allErrs = append(allErrs, field.Invalid(fldPath, field.OmitValueType{}, "requests a malformed key usage extension"))
				continue
			}
			if slices.ContainsFunc(usages, func(u string) bool { return !slices.Contains(allowedKeyUsages, u) }) {
				allErrs = append(allErrs, field.Invalid(fldPath, "keyUsage "+strings.Join(usages, ", "),
					"a break-glass credential is a client certificate: request only "+strings.Join(allowedKeyUsages, " and ")+", or no key usage"))
			}
		case ext.Id.Equal(oidExtendedKeyUsage):
			var oids []asn1.ObjectIdentifier
			if rest, err := asn1.Unmarshal(ext.Value, &oids); err != nil || len(rest) > 0 {
				allErrs = append(allErrs, field.Invalid(fldPath, field.OmitValueType{}, "requests a malformed extended key usage extension"))
				continue
			}
			if len(oids) == 0 || slices.ContainsFunc(oids, func(oid asn1.ObjectIdentifier) bool { return !oid.Equal(oidClientAuth) }) {
				allErrs = append(allErrs, field.Invalid(fldPath, "extendedKeyUsage "+extKeyUsageNames(oids),
					"a break-glass credential is a client certificate: request clientAuth only, or no extended key usage"))
			}
		}
	}
	return allErrs
}

// keyUsages names the bits set in a key usage extension; ok is false when it does not parse.
func keyUsages(value []byte) (usages []string, ok bool) {
	var bits asn1.BitString
	if rest, err := asn1.Unmarshal(value, &bits); err != nil || len(rest) > 0 {
		return nil, false
	}
	for i := range bits.BitLength {
		if bits.At(i) == 0 {
			continue
		}
		if i < len(keyUsageNames) {
			usages = append(usages, keyUsageNames[i])
		} else {
			usages = append(usages, fmt.Sprintf("bit %d", i))
		}
	}
	return usages, true
}

// extKeyUsageNames names extended key usages for an error.
func extKeyUsageNames(oids []asn1.ObjectIdentifier) string {
	if len(oids) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(oids))
	for _, oid := range oids {
		name, ok := knownExtKeyUsages[oid.String()]
		if !ok {
			name = oid.String()
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

func validateBreakglassCredentialStatus(status *hcp.BreakglassCredentialStatus, fldPath *field.Path) field.ErrorList {
	allErrs := validateOptionalEnum(fldPath.Child("phase"), status.Phase, breakglassCredentialPhases)
	if status.Certificate != "" {
		allErrs = append(allErrs, validateCertificatePEM(fldPath.Child("certificate"), status.Certificate)...)
	}
	return append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
}

// validateCertificatePEM requires one or more PEM "CERTIFICATE" blocks (a certificate, maybe
// followed by its chain), each of which parses.
func validateCertificatePEM(fldPath *field.Path, certPEM string) field.ErrorList {
	const msg = `must be PEM blocks of type "CERTIFICATE"`
	rest := []byte(certPEM)
	for n := 0; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if n == 0 || len(bytes.TrimSpace(rest)) > 0 {
				return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, msg)}
			}
			return nil
		}
		if block.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, fmt.Sprintf("%s, not %q", msg, block.Type))}
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, fmt.Sprintf("must be a valid X.509 certificate: %v", err))}
		}
	}
}
