package hypershiftsim

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// The condition types and reasons of a CertificateRevocationRequest
// (certificates.hypershift.openshift.io/v1alpha1), in the order they complete.
const (
	SignerClassValid            = "SignerClassValid"
	RootCertificatesRegenerated = "RootCertificatesRegenerated"
	NewCertificatesTrusted      = "NewCertificatesTrusted"
	LeafCertificatesRegenerated = "LeafCertificatesRegenerated"
	PreviousCertificatesRevoked = "PreviousCertificatesRevoked"

	reasonSignerClassUnknown    = "SignerClassUnknown"
	reasonRootCertificatesStale = "RootCertificatesStale"
)

// revocationStatus is CertificateRevocationRequest .status.
type revocationStatus struct {
	RevocationTimestamp *metav1.Time          `json:"revocationTimestamp,omitempty"`
	PreviousSigner      *localObjectReference `json:"previousSigner,omitempty"`
	Conditions          []metav1.Condition    `json:"conditions,omitempty"`
}

var revocationStatusFields = []string{"revocationTimestamp", "previousSigner", "conditions"}

// PreviousSignerSecretName is where a revocation keeps a copy of the CA it
// replaces: base36(sha224(name of the request)), as HyperShift names it.
func PreviousSignerSecretName(revocationName string) string {
	sum := sha256.Sum224([]byte(revocationName))
	return new(big.Int).SetBytes(sum[:]).Text(36)
}

// syncRevocation walks a CertificateRevocationRequest through the steps of
// HyperShift's revocation controller, one status write per step: choose the
// cut-off time, replace the signer CA with one valid only after it, and report
// the new CA trusted, the leaf certificates re-issued and the old CA revoked.
// With no hosted API server to check against, the last three are immediate.
func (s *Simulator) syncRevocation(ctx context.Context, key cache.ObjectName) (time.Duration, error) {
	obj, err := s.revocations.ByNamespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	crr := obj.(*unstructured.Unstructured)
	var st revocationStatus
	if err := readStatus(crr, &st); err != nil {
		return 0, err
	}
	t := now()
	set := func(conditionType string, status metav1.ConditionStatus, reason, message string) {
		condition(&st.Conditions, crr.GetGeneration(), t, conditionType, status, reason, message)
	}
	done := func(conditionType string) bool { return meta.IsStatusConditionTrue(st.Conditions, conditionType) }
	write := func() (time.Duration, error) {
		crr := crr.DeepCopy()
		if err := writeStatus(crr, &st, revocationStatusFields...); err != nil {
			return 0, err
		}
		_, err := s.dynamic.Resource(CertificateRevocationRequestResource).Namespace(key.Namespace).UpdateStatus(ctx, crr, metav1.UpdateOptions{})
		return 0, err // the update brings the request back for its next step
	}

	class, _, _ := unstructured.NestedString(crr.Object, "spec", "signerClass")
	secretName := SignerSecretName(class)
	signerRef := key.Namespace + "/" + secretName
	if secretName == "" {
		if meta.IsStatusConditionFalse(st.Conditions, SignerClassValid) {
			return 0, nil
		}
		set(SignerClassValid, metav1.ConditionFalse, reasonSignerClassUnknown, fmt.Sprintf("Signer class %q unknown.", class))
		return write()
	}

	switch {
	case st.RevocationTimestamp == nil:
		cutoff := stamp(t)
		st.RevocationTimestamp = &cutoff
		set(SignerClassValid, metav1.ConditionTrue, reasonAsExpected, fmt.Sprintf("Signer class %q known.", class))
		return write()

	case !done(RootCertificatesRegenerated):
		cutoff := st.RevocationTimestamp.Time
		current, err := s.loadSigner(key.Namespace, class)
		if err != nil {
			return 0, err
		}
		if current == nil || !current.cert.NotBefore.After(cutoff) {
			if current != nil && st.PreviousSigner == nil {
				// The old CA is kept, to show at the end that it no longer works.
				previous := PreviousSignerSecretName(crr.GetName())
				if err := s.copyPreviousSigner(ctx, crr, current.secret, previous); err != nil {
					return 0, err
				}
				st.PreviousSigner = &localObjectReference{Name: previous}
				set(RootCertificatesRegenerated, metav1.ConditionFalse, reasonRootCertificatesStale,
					fmt.Sprintf("Signer certificate %s needs to be regenerated.", signerRef))
				return write()
			}
			// The new CA must not be valid at or before the cut-off; certificates count whole seconds.
			if left := cutoff.Add(time.Second).Sub(t); left > 0 {
				return left, nil
			}
			var existing *corev1.Secret
			if current != nil {
				existing = current.secret
			}
			if _, err := s.writeSigner(ctx, key.Namespace, class, existing, stamp(t).Time); err != nil {
				return 0, err
			}
			klog.FromContext(ctx).V(2).Info("Rotated the break-glass signer CA", "revocation", key, "secret", signerRef)
		}
		set(RootCertificatesRegenerated, metav1.ConditionTrue, reasonAsExpected, fmt.Sprintf("Signer certificate %s regenerated.", signerRef))
		set(NewCertificatesTrusted, metav1.ConditionFalse, reasonWaitingForAvailable, fmt.Sprintf("New signer certificate %s not yet trusted.", signerRef))
		return write()

	case !done(NewCertificatesTrusted):
		set(NewCertificatesTrusted, metav1.ConditionTrue, reasonAsExpected, fmt.Sprintf("New signer certificate %s trusted.", signerRef))
		return write()

	case !done(LeafCertificatesRegenerated):
		set(LeafCertificatesRegenerated, metav1.ConditionTrue, reasonAsExpected, "All leaf certificates are re-generated.")
		set(PreviousCertificatesRevoked, metav1.ConditionFalse, reasonWaitingForAvailable, "Previous signer certificate not yet revoked.")
		return write()

	case !done(PreviousCertificatesRevoked):
		set(PreviousCertificatesRevoked, metav1.ConditionTrue, reasonAsExpected, "Previous signer certificate revoked.")
		return write()
	}
	return 0, nil
}

// copyPreviousSigner keeps the CA being replaced in a Secret owned by the request.
func (s *Simulator) copyPreviousSigner(ctx context.Context, crr *unstructured.Unstructured, signer *corev1.Secret, name string) error {
	if _, err := s.secrets.Secrets(crr.GetNamespace()).Get(name); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: crr.GetNamespace(),
			Labels:    map[string]string{ManagedByLabel: managedByValue},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: CertificateRevocationRequestResource.GroupVersion().String(),
				Kind:       "CertificateRevocationRequest",
				Name:       crr.GetName(),
				UID:        crr.GetUID(),
			}},
		},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       signer.Data[corev1.TLSCertKey],
			corev1.TLSPrivateKeyKey: signer.Data[corev1.TLSPrivateKeyKey],
		},
	}
	_, err := s.kube.CoreV1().Secrets(crr.GetNamespace()).Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
