package render

import (
	"encoding/pem"
	"math"

	certificatesv1alpha1 "github.com/openshift/hypershift/api/certificates/v1alpha1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

const (
	// CustomerBreakGlass is the signer class of the customer's break-glass credentials, as
	// HyperShift's control-plane PKI operator names it.
	CustomerBreakGlass = "customer-break-glass"

	// RootCAConfigMapName is the ConfigMap in the control-plane namespace where HyperShift keeps
	// the control plane's root CA, under RootCAKey. It signs the API server's serving
	// certificate, so a kubeconfig trusts it.
	RootCAConfigMapName = "root-ca"
	RootCAKey           = "ca.crt"

	// minCSRExpirationSeconds is the shortest expirationSeconds the CSR API takes.
	minCSRExpirationSeconds = 600
)

// BreakglassCredential renders the bundle of one break-glass credential of the hosted control
// plane in hcpNamespace: the CertificateSigningRequest name for csrPEM (a PEM CERTIFICATE
// REQUEST) to the control plane's customer break-glass signer, the same-named
// CertificateSigningRequestApproval that lets HyperShift approve it, and the control plane's root
// CA, only read. Deleting the bundle deletes the CSR and the approval; the root CA stays
// HyperShift's.
func BreakglassCredential(hcpNamespace, name string, csrPEM []byte, expirationSeconds int64) (*protocol.ManifestBundle, error) {
	errs := checkNames(hcpNamespace, name)
	if block, _ := pem.Decode(csrPEM); block == nil || block.Type != "CERTIFICATE REQUEST" {
		errs = append(errs, field.Invalid(field.NewPath("csrPEM"), field.OmitValueType{}, "must be a PEM CERTIFICATE REQUEST"))
	}
	if expirationSeconds < minCSRExpirationSeconds || expirationSeconds > math.MaxInt32 {
		errs = append(errs, field.Invalid(field.NewPath("expirationSeconds"), expirationSeconds,
			"the CSR API takes from 600 seconds (10 minutes) to 2^31-1"))
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}

	b, err := newBundle(
		manifest{
			object: &certificatesv1.CertificateSigningRequest{
				TypeMeta:   metav1.TypeMeta{APIVersion: certificatesv1.SchemeGroupVersion.String(), Kind: "CertificateSigningRequest"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request:           csrPEM,
					SignerName:        breakglassSignerName(hcpNamespace),
					ExpirationSeconds: ptr.To(int32(expirationSeconds)),
					Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
				},
			},
			resource: "certificatesigningrequests",
			feedback: csrFeedback,
		},
		manifest{
			// HyperShift approves a CSR of its break-glass signers only while an approval of the
			// same name exists in the control-plane namespace.
			object: &certificatesv1alpha1.CertificateSigningRequestApproval{
				TypeMeta:   metav1.TypeMeta{APIVersion: certificatesv1alpha1.SchemeGroupVersion.String(), Kind: "CertificateSigningRequestApproval"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hcpNamespace},
			},
			resource: "certificatesigningrequestapprovals",
		},
		manifest{
			object: &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMapName, Namespace: hcpNamespace},
			},
			resource: "configmaps",
			feedback: rootCAFeedback,
		},
	)
	if err != nil {
		return nil, err
	}
	// The root CA is HyperShift's: the agent only reads it, and a delete of the bundle lets go of
	// it without deleting it.
	b.ManifestConfigs[2].UpdateStrategy = &protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly}
	return b, nil
}

// CertificateRevocation renders the bundle of a revocation of every customer break-glass
// credential of the hosted control plane in hcpNamespace: a CertificateRevocationRequest name,
// on which HyperShift replaces the signer and reports when certificates of the old one no longer
// work.
func CertificateRevocation(hcpNamespace, name string) (*protocol.ManifestBundle, error) {
	if errs := checkNames(hcpNamespace, name); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return newBundle(manifest{
		object: &certificatesv1alpha1.CertificateRevocationRequest{
			TypeMeta:   metav1.TypeMeta{APIVersion: certificatesv1alpha1.SchemeGroupVersion.String(), Kind: "CertificateRevocationRequest"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hcpNamespace},
			Spec:       certificatesv1alpha1.CertificateRevocationRequestSpec{SignerClass: CustomerBreakGlass},
		},
		resource: "certificaterevocationrequests",
		feedback: revocationFeedback,
	})
}

// breakglassSignerName is the CSR signer of the customer's break-glass credentials of the
// control plane in hcpNamespace.
func breakglassSignerName(hcpNamespace string) string {
	return "hypershift.openshift.io/" + hcpNamespace + "." + CustomerBreakGlass
}

// checkNames checks the names the objects are given, so that a bad one is an error here rather
// than a refusal on the management cluster.
func checkNames(hcpNamespace, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(hcpNamespace) {
		errs = append(errs, field.Invalid(field.NewPath("hcpNamespace"), hcpNamespace, msg))
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(field.NewPath("name"), name, msg))
	}
	return errs
}
