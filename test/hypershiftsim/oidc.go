package hypershiftsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// The OIDC clients of a HostedCluster with an external identity provider: HyperShift copies, into
// status.configuration.authentication.oidcClients, what the hosted cluster's components (the console
// operator, for the console) report in its Authentication's status. The hosted cluster does not
// exist here, so the simulator plays its components, and a namespace of the management cluster
// plays its openshift-config, where the customer creates the clients' secrets.

const (
	// OpenShiftConfigNamespace is the hosted cluster's namespace that HostedConfigNamespace stands in for.
	OpenShiftConfigNamespace = "openshift-config"

	// hostedConfigLabel marks the namespaces that stand in for a hosted cluster's openshift-config.
	hostedConfigLabel = "hypershiftsim.aro-hcp.test/hosted-openshift-config"

	// The reasons of an OIDC client's conditions, as the console operator gives them.
	reasonOIDCConfigAvailable = "OIDCConfigAvailable"
	reasonOIDCClientSecretGet = "OIDCClientSecretGet"
)

// HostedConfigNamespace is the namespace of the management cluster that stands in for the
// openshift-config namespace of the hosted cluster of the HostedCluster namespace/name: the
// simulator creates it with the HostedCluster, deletes it with it, and reads the secrets of the
// OIDC clients there. It is openshift-config-<16 hex digits of a hash of namespace/name>.
func HostedConfigNamespace(hostedClusterNamespace, hostedClusterName string) string {
	sum := sha256.Sum256([]byte(hostedClusterNamespace + "/" + hostedClusterName))
	return OpenShiftConfigNamespace + "-" + hex.EncodeToString(sum[:8])
}

// configurationStatus is status.configuration; only its oidcClients are simulated.
type configurationStatus struct {
	Authentication authenticationStatus `json:"authentication"`
}

type authenticationStatus struct {
	OIDCClients []configv1.OIDCClientStatus `json:"oidcClients,omitempty"`
}

// computeConfigurationStatus returns status.configuration for the HostedCluster's
// spec.configuration.authentication: one entry per client of its OIDC provider, once the hosted
// cluster runs (available), and none otherwise. A public client, and a confidential one whose
// secret exists (secretExists), is Available; a confidential one without its secret is not, and
// Degraded, as the console operator reports a secret it cannot get. previous keeps the conditions'
// transition times.
func computeConfigurationStatus(auth *configv1.AuthenticationSpec, available bool, secretExists func(name string) bool,
	now time.Time, previous *configurationStatus) *configurationStatus {
	if !available || auth == nil || auth.Type != configv1.AuthenticationTypeOIDC || len(auth.OIDCProviders) == 0 {
		return nil
	}
	provider := auth.OIDCProviders[0]
	st := &configurationStatus{}
	for _, client := range provider.OIDCClients {
		entry := configv1.OIDCClientStatus{
			ComponentName:      client.ComponentName,
			ComponentNamespace: client.ComponentNamespace,
			CurrentOIDCClients: []configv1.OIDCClientReference{{
				OIDCProviderName: provider.Name,
				IssuerURL:        provider.Issuer.URL,
				ClientID:         client.ClientID,
			}},
		}
		if previous != nil {
			for _, p := range previous.Authentication.OIDCClients {
				if p.ComponentName == client.ComponentName && p.ComponentNamespace == client.ComponentNamespace {
					entry.Conditions = append([]metav1.Condition(nil), p.Conditions...)
				}
			}
		}
		set := func(t string, status metav1.ConditionStatus, reason, message string) {
			condition(&entry.Conditions, 0, now, t, status, reason, message)
		}
		secret := client.ClientSecret.Name
		if secret == "" || secretExists(secret) {
			set("Available", metav1.ConditionTrue, reasonOIDCConfigAvailable, "")
			set("Progressing", metav1.ConditionFalse, reasonOIDCConfigAvailable, "")
			set("Degraded", metav1.ConditionFalse, reasonOIDCConfigAvailable, "")
		} else {
			message := fmt.Sprintf("secret %q not found", OpenShiftConfigNamespace+"/"+secret)
			set("Available", metav1.ConditionFalse, reasonOIDCClientSecretGet, message)
			set("Progressing", metav1.ConditionFalse, reasonOIDCClientSecretGet, message)
			set("Degraded", metav1.ConditionTrue, reasonOIDCClientSecretGet, message)
		}
		st.Authentication.OIDCClients = append(st.Authentication.OIDCClients, entry)
	}
	return st
}

// authenticationSpec reads spec.configuration.authentication of a HostedCluster; nil when it has none.
func authenticationSpec(hc *unstructured.Unstructured) (*configv1.AuthenticationSpec, error) {
	raw, found, err := unstructured.NestedMap(hc.Object, "spec", "configuration", "authentication")
	if err != nil || !found {
		return nil, err
	}
	auth := &configv1.AuthenticationSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, auth); err != nil {
		return nil, err
	}
	return auth, nil
}

// configurationStatusOf computes status.configuration of hc once desired, the rest of its status,
// is known.
func (s *Simulator) configurationStatusOf(hc *unstructured.Unstructured, desired hostedClusterStatus) (*configurationStatus, error) {
	auth, err := authenticationSpec(hc)
	if err != nil {
		return nil, err
	}
	namespace := HostedConfigNamespace(hc.GetNamespace(), hc.GetName())
	exists := func(name string) bool {
		_, err := s.hostedSecrets.Secrets(namespace).Get(name)
		return err == nil
	}
	available := meta.IsStatusConditionTrue(desired.Conditions, "Available")
	return computeConfigurationStatus(auth, available, exists, now(), desired.Configuration), nil
}

// ensureHostedConfigNamespace creates the namespace that stands in for the hosted cluster's
// openshift-config.
func (s *Simulator) ensureHostedConfigNamespace(ctx context.Context, hc *unstructured.Unstructured) error {
	name := HostedConfigNamespace(hc.GetNamespace(), hc.GetName())
	if _, err := s.namespaces.Get(name); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{hostedConfigLabel: "true", ManagedByLabel: managedByValue},
		Annotations: map[string]string{clusterAnnotation: hc.GetNamespace() + "/" + hc.GetName()},
	}}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Created the namespace that stands in for the hosted cluster's openshift-config", "namespace", name)
	return nil
}

// clustersByHostedConfig indexes HostedClusters by their HostedConfigNamespace.
const clustersByHostedConfig = "hypershiftsim/hosted-config"

func indexByHostedConfig(obj any) ([]string, error) {
	name, err := cache.ObjectToName(obj)
	if err != nil {
		return nil, err
	}
	return []string{HostedConfigNamespace(name.Namespace, name.Name)}, nil
}

// enqueueClusterForSecret wakes the HostedCluster whose hosted openshift-config gained, changed or
// lost a Secret: the status of its OIDC clients may change. The namespace is found by name, so a
// test may create it, without the simulator's labels, before the HostedCluster exists.
func (s *Simulator) enqueueClusterForSecret(obj any) {
	name, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		return
	}
	clusters, _ := s.hostedClusters.GetIndexer().ByIndex(clustersByHostedConfig, name.Namespace)
	for _, hc := range clusters {
		if key, err := cache.ObjectToName(hc); err == nil {
			s.hostedClusterQueue.Add(key)
		}
	}
}
