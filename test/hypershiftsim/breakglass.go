package hypershiftsim

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// The signer classes of break-glass credentials, as in
// hypershift.openshift.io/<hcp-namespace>.<class>.
const (
	CustomerBreakGlass = "customer-break-glass"
	SREBreakGlass      = "sre-break-glass"

	signerDomain = "hypershift.openshift.io"
)

// signerSecrets are the Secrets, in the control-plane namespace, that hold each
// class's signing CA (the names of HyperShift's control-plane PKI operator).
var signerSecrets = map[string]string{
	CustomerBreakGlass: "customer-system-admin-signer",
	SREBreakGlass:      "sre-system-admin-signer",
}

const (
	// breakGlassCertTTL bounds the lifetime of a signed credential; a CSR may ask for less.
	breakGlassCertTTL = 24 * time.Hour
	// backdate covers clock skew between the signer and whoever checks the certificate.
	backdate       = 5 * time.Minute
	signerValidity = 365 * 24 * time.Hour

	annotationNotBefore = "auth.openshift.io/certificate-not-before"
	annotationNotAfter  = "auth.openshift.io/certificate-not-after"
)

// SignerName is the CSR signer name of a break-glass signer class for the hosted
// control plane in hcpNamespace.
func SignerName(hcpNamespace, signerClass string) string {
	return signerDomain + "/" + hcpNamespace + "." + signerClass
}

// SignerSecretName is the Secret in the control-plane namespace that holds the CA
// (tls.crt, tls.key) of a signer class; "" for an unknown class.
func SignerSecretName(signerClass string) string {
	return signerSecrets[signerClass]
}

// parseSignerName splits hypershift.openshift.io/<namespace>.<class>; namespace
// names have no dots, so the class follows the last one.
func parseSignerName(signerName string) (namespace, class string, ok bool) {
	rest, ok := strings.CutPrefix(signerName, signerDomain+"/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, ".")
	if i <= 0 {
		return "", "", false
	}
	if _, known := signerSecrets[rest[i+1:]]; !known {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// syncCSR approves a break-glass CSR once its CertificateSigningRequestApproval
// exists, then signs it with the cluster's CA (the control-plane PKI operator's
// approval and signing controllers).
func (s *Simulator) syncCSR(ctx context.Context, name string) (time.Duration, error) {
	logger := klog.FromContext(ctx).WithValues("csr", name)
	csr, err := s.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	namespace, class, ok := parseSignerName(csr.Spec.SignerName)
	if !ok || len(csr.Status.Certificate) > 0 ||
		hasCSRCondition(csr, certificatesv1.CertificateDenied) || hasCSRCondition(csr, certificatesv1.CertificateFailed) {
		return 0, nil
	}
	client := s.kube.CertificatesV1().CertificateSigningRequests()

	if !hasCSRCondition(csr, certificatesv1.CertificateApproved) {
		// By convention an approval is tied to its CSR by name, in the control-plane namespace.
		if _, err := s.approvals.ByNamespace(namespace).Get(name); err != nil {
			if apierrors.IsNotFound(err) {
				return 0, nil // its creation brings the CSR back
			}
			return 0, err
		}
		csr = csr.DeepCopy()
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:           certificatesv1.CertificateApproved,
			Status:         corev1.ConditionTrue,
			Reason:         "ApprovalPresent",
			Message:        "The requisite approval resource exists.",
			LastUpdateTime: stamp(now()),
		})
		if _, err := client.UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
			return 0, err
		}
		logger.V(2).Info("Approved the break-glass CSR", "namespace", namespace)
		return 0, nil // the update brings it back to be signed
	}

	request, err := parseCertificateRequest(csr.Spec.Request)
	if err == nil {
		err = validateBreakGlassRequest(csr, request, class)
	}
	if err != nil {
		csr = csr.DeepCopy()
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:           certificatesv1.CertificateFailed,
			Status:         corev1.ConditionTrue,
			Reason:         "SignerValidationFailure",
			Message:        err.Error(),
			LastUpdateTime: stamp(now()),
		})
		_, err := client.UpdateStatus(ctx, csr, metav1.UpdateOptions{})
		return 0, err
	}

	ca, err := s.signer(ctx, namespace, class)
	if err != nil {
		return 0, err
	}
	certPEM, err := ca.sign(request, csr.Spec.Usages, csr.Spec.ExpirationSeconds, now(), s.opts.MaxCertificateTTL)
	if err != nil {
		return 0, err
	}
	csr = csr.DeepCopy()
	csr.Status.Certificate = certPEM
	if _, err := client.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return 0, err
	}
	logger.V(2).Info("Signed the break-glass CSR", "namespace", namespace, "signer", ca.cert.Subject.CommonName)
	return 0, nil
}

func hasCSRCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func parseCertificateRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	request, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := request.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %w", err)
	}
	return request, nil
}

// validateBreakGlassRequest applies the rules of HyperShift's break-glass signers.
func validateBreakGlassRequest(csr *certificatesv1.CertificateSigningRequest, request *x509.CertificateRequest, class string) error {
	if prefix := "system:" + class + ":"; !strings.HasPrefix(request.Subject.CommonName, prefix) {
		return fmt.Errorf("invalid certificate request: subject CommonName must begin with %q", prefix)
	}
	required := sets.New(certificatesv1.UsageClientAuth)
	valid := sets.New(certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment)
	requested := sets.New(csr.Spec.Usages...)
	if !requested.IsSuperset(required) {
		return fmt.Errorf("missing required usages: %v", sets.List(required.Difference(requested)))
	}
	if !valid.IsSuperset(requested) {
		return fmt.Errorf("invalid usages: %v", sets.List(requested.Difference(valid)))
	}
	if len(request.DNSNames) > 0 || len(request.EmailAddresses) > 0 || len(request.IPAddresses) > 0 || len(request.URIs) > 0 {
		return errors.New("invalid certificate request: subjectAltNames are not allowed")
	}
	return nil
}

// signerCA is a signer class's CA as kept in its Secret.
type signerCA struct {
	secret *corev1.Secret
	cert   *x509.Certificate
	key    crypto.Signer
}

// signer loads the CA of a signer class in a control-plane namespace, creating it
// the first time it is needed.
func (s *Simulator) signer(ctx context.Context, namespace, class string) (*signerCA, error) {
	ca, err := s.loadSigner(namespace, class)
	if err != nil || ca != nil {
		return ca, err
	}
	return s.writeSigner(ctx, namespace, class, nil, stamp(now()).Time)
}

// loadSigner returns nil when the Secret does not exist.
func (s *Simulator) loadSigner(namespace, class string) (*signerCA, error) {
	secret, err := s.secrets.Secrets(namespace).Get(SignerSecretName(class))
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseSignerSecret(secret)
}

func parseSignerSecret(secret *corev1.Secret) (*signerCA, error) {
	certBlock, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	keyBlock, _ := pem.Decode(secret.Data[corev1.TLSPrivateKeyKey])
	if certBlock == nil || keyBlock == nil {
		return nil, errorf("secret %s/%s has no PEM %s and %s", secret.Namespace, secret.Name, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errorf("secret %s/%s: key of type %T cannot sign", secret.Namespace, secret.Name, key)
	}
	return &signerCA{secret: secret, cert: cert, key: signer}, nil
}

// writeSigner generates a new CA valid from notBefore and stores it in the
// signer class's Secret: it creates the Secret, or replaces the CA in existing.
func (s *Simulator) writeSigner(ctx context.Context, namespace, class string, existing *corev1.Secret, notBefore time.Time) (*signerCA, error) {
	name := SignerSecretName(class)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s_%s@%d", namespace, name, notBefore.Unix())},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(signerValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Type: corev1.SecretTypeTLS}
	if existing != nil {
		secret = existing.DeepCopy()
	}
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	secret.Labels[ManagedByLabel] = managedByValue
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[annotationNotBefore] = cert.NotBefore.Format(time.RFC3339)
	secret.Annotations[annotationNotAfter] = cert.NotAfter.Format(time.RFC3339)
	secret.Data = map[string][]byte{
		corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	client := s.kube.CoreV1().Secrets(namespace)
	if existing == nil {
		// Losing a race to another sync is an AlreadyExists error: retried, it reads the winner's CA.
		secret, err = client.Create(ctx, secret, metav1.CreateOptions{})
	} else {
		secret, err = client.Update(ctx, secret, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Wrote a break-glass signer CA", "secret", klog.KObj(secret), "commonName", cert.Subject.CommonName)
	return &signerCA{secret: secret, cert: cert, key: key}, nil
}

// sign issues a client certificate for request, as HyperShift's signing
// controller does: the CSR's usages, at most breakGlassCertTTL (or the CSR's
// expirationSeconds if shorter), never beyond the CA's own expiry.
func (ca *signerCA) sign(request *x509.CertificateRequest, usages []certificatesv1.KeyUsage, expirationSeconds *int32, now time.Time, maxTTL time.Duration) ([]byte, error) {
	if maxTTL <= 0 {
		maxTTL = breakGlassCertTTL
	}
	ttl := maxTTL
	if expirationSeconds != nil {
		ttl = min(max(time.Duration(*expirationSeconds)*time.Second, 2*backdate), maxTTL)
	}
	notAfter := now.Add(ttl)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	var keyUsage x509.KeyUsage
	var extKeyUsage []x509.ExtKeyUsage
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature:
			keyUsage |= x509.KeyUsageDigitalSignature
		case certificatesv1.UsageKeyEncipherment:
			keyUsage |= x509.KeyUsageKeyEncipherment
		case certificatesv1.UsageClientAuth:
			extKeyUsage = append(extKeyUsage, x509.ExtKeyUsageClientAuth)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               request.Subject,
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extKeyUsage,
		BasicConstraintsValid: true,
		IsCA:                  false,
	}, ca.cert, request.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func serialNumber() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
