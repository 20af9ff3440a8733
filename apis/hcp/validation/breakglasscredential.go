package validation

import (
	"bytes"
	"crypto/x509"
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
	// breakGlassUserPrefix is the CN prefix HyperShift's customer-break-glass signer requires.
	breakGlassUserPrefix = "system:customer-break-glass:"
	// breakGlassGroup is the only organization ARO HCP signs: the credential is cluster-admin.
	breakGlassGroup = "system:masters"

	minExpirationSeconds = 10 * 60
	maxExpirationSeconds = 24 * 60 * 60
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
// verifies (the requester holds the key) and whose subject is what the break-glass signer signs.
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
	user, found := strings.CutPrefix(csr.Subject.CommonName, breakGlassUserPrefix)
	if !found || user == "" || !slices.Equal(csr.Subject.Organization, []string{breakGlassGroup}) {
		return field.ErrorList{field.Invalid(fldPath, csr.Subject.String(), subjectMsg)}
	}
	return nil
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
