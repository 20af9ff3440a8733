package hypershiftsim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

const (
	// RootCAConfigMapName is the ConfigMap in the control-plane namespace where HyperShift
	// publishes the control plane's root CA, the one that signs the hosted API server's serving
	// certificate, under RootCAKey (PEM).
	RootCAConfigMapName = "root-ca"
	RootCAKey           = "ca.crt"

	rootCAValidity = 10 * 365 * 24 * time.Hour
)

// ensureRootCA publishes a root CA for the control plane in namespace, made the first time:
// only its certificate, as nothing here is signed with it.
func (s *Simulator) ensureRootCA(ctx context.Context, namespace string) error {
	if _, err := s.configMaps.ConfigMaps(namespace).Get(RootCAConfigMapName); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	// Nothing can be created in a namespace being deleted; the HostedCluster's own deletion
	// is what deletes it.
	if ns, err := s.namespaces.Get(namespace); err == nil && ns.DeletionTimestamp != nil {
		return nil
	}
	caPEM, err := newRootCA(namespace, stamp(now()).Time)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      RootCAConfigMapName,
			Namespace: namespace,
			Labels:    map[string]string{ManagedByLabel: managedByValue},
		},
		Data: map[string]string{RootCAKey: string(caPEM)},
	}
	// Losing a race to another sync, or finding one the simulator did not label, is fine: the
	// control plane has its CA.
	if _, err := s.kube.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Published the control plane's root CA", "configMap", klog.KObj(cm))
	return nil
}

// newRootCA returns the PEM of a new self-signed CA certificate, named as HyperShift names its
// root CA.
func newRootCA(namespace string, notBefore time.Time) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: "root-ca", OrganizationalUnit: []string{"openshift"}, Organization: []string{namespace}},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(rootCAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// enqueueClusterForRootCA wakes the HostedCluster whose root CA was deleted, to publish it again.
func (s *Simulator) enqueueClusterForRootCA(obj any) {
	name, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil || name.Name != RootCAConfigMapName {
		return
	}
	if ns, err := s.namespaces.Get(name.Namespace); err == nil {
		s.enqueueClusterForNamespace(ns)
	}
}
