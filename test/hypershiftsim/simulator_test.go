package hypershiftsim_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

const (
	// The simulated installation and upgrades take long enough for a 100ms poll
	// to see them in progress.
	provisionDelay = 2 * time.Second
	upgradeDelay   = 2 * time.Second
	deletionDelay  = time.Second
	waitTimeout    = 30 * time.Second

	image4208 = "quay.io/openshift-release-dev/ocp-release:4.20.8-multi"
	image4209 = "quay.io/openshift-release-dev/ocp-release:4.20.9-multi"

	// The HostedClusters given these names fail as the simulator is told to.
	neverAvailableName = "never-available"
	degradedName       = "degraded"
)

// The subtests share one management cluster and one simulator, as starting a
// kube-apiserver takes a while; each works in a namespace of its own.
func TestSimulator(t *testing.T) {
	mc := framework.StartManagementCluster(t)
	examples := filepath.Join(framework.SharedDir(t), "hypershift", "examples")
	startSimulator(t, mc, hypershiftsim.Options{
		ProvisionDelay: provisionDelay,
		UpgradeDelay:   upgradeDelay,
		DeletionDelay:  deletionDelay,
		NeverAvailable: func(_, name string) bool { return name == neverAvailableName },
		Degraded:       func(_, name string) bool { return name == degradedName },
	})
	h := &harness{mc: mc, examples: examples}

	t.Run("a new HostedCluster is installed: Available, Completed history, endpoint and kubeconfig", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-install", "mycluster", image4208)

		// The install is seen in progress first.
		installing := h.waitFor(t, hostedClusters, hc, "the install in progress", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Progressing") == "True"
		})
		if got := conditionStatus(installing, "Available"); got != "False" {
			t.Errorf("while installing Available=%s, want False", got)
		}
		if state, _ := latestHistory(installing, "version"); state != "Partial" {
			t.Errorf("while installing version.history[0].state=%q, want Partial", state)
		}

		installed := h.waitFor(t, hostedClusters, hc, "Available=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Available") == "True"
		})
		for _, history := range []string{"version", "controlPlaneVersion"} {
			state, entry := latestHistory(installed, history)
			if state != "Completed" || entry["version"] != "4.20.8" || entry["image"] != image4208 || entry["completionTime"] == nil {
				t.Errorf("status.%s.history[0] = %v, want Completed 4.20.8 with a completionTime", history, entry)
			}
		}
		for cond, want := range map[string]string{"Progressing": "False", "Degraded": "False", "ValidReleaseImage": "True",
			"KubeAPIServerAvailable": "True", "EtcdAvailable": "True", "ClusterVersionAvailable": "True"} {
			if got := conditionStatus(installed, cond); got != want {
				t.Errorf("%s=%s, want %s", cond, got, want)
			}
		}
		if _, err := observedGenerationsMatch(installed); err != nil {
			t.Error(err)
		}
		host, _, _ := unstructured.NestedString(installed.Object, "status", "controlPlaneEndpoint", "host")
		port, _, _ := unstructured.NestedInt64(installed.Object, "status", "controlPlaneEndpoint", "port")
		if host != "api-mycluster.ab12.eastus.example.com" || port != 443 {
			t.Errorf("controlPlaneEndpoint = %s:%d, want the APIServer route's host on 443", host, port)
		}
		desired, _, _ := unstructured.NestedString(installed.Object, "status", "version", "desired", "version")
		arch, _, _ := unstructured.NestedString(installed.Object, "status", "payloadArch")
		if desired != "4.20.8" || arch != "Multi" {
			t.Errorf("version.desired.version=%q payloadArch=%q, want 4.20.8 Multi", desired, arch)
		}
		if !hasFinalizer(installed) {
			t.Errorf("finalizers %v, want %s", installed.GetFinalizers(), hypershiftsim.Finalizer)
		}

		kubeconfig, _, _ := unstructured.NestedString(installed.Object, "status", "kubeconfig", "name")
		if kubeconfig != "mycluster-admin-kubeconfig" {
			t.Errorf("status.kubeconfig.name = %q, want mycluster-admin-kubeconfig", kubeconfig)
		}
		secret, err := mc.Kube.CoreV1().Secrets(hc.GetNamespace()).Get(t.Context(), kubeconfig, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the kubeconfig Secret the status names: %v", err)
		}
		if len(secret.Data["kubeconfig"]) == 0 {
			t.Errorf("the kubeconfig Secret has no kubeconfig key: %v", secret.Data)
		}
	})

	t.Run("the control-plane namespace <namespace>-<name> is created", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-cpns", "mycluster", image4208)
		ns := h.waitForNamespace(t, "sim-cpns-mycluster")
		if ns.Annotations["hypershift.openshift.io/cluster"] != "sim-cpns/mycluster" ||
			ns.Labels["hypershift.openshift.io/hosted-control-plane"] != "true" {
			t.Errorf("namespace %s: labels %v annotations %v, want HyperShift's", ns.Name, ns.Labels, ns.Annotations)
		}
		if got := hypershiftsim.ControlPlaneNamespace(hc.GetNamespace(), hc.GetName()); got != ns.Name {
			t.Errorf("ControlPlaneNamespace = %q, want %q", got, ns.Name)
		}
	})

	t.Run("the control plane publishes its root CA in the ConfigMap root-ca, and again when it is deleted", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-rootca", "mycluster", image4208)
		hcpNamespace := h.waitForNamespace(t, "sim-rootca-mycluster").Name
		first := h.waitForConfigMap(t, hcpNamespace, hypershiftsim.RootCAConfigMapName)
		ca := parseCertificate(t, []byte(first.Data["ca.crt"]))
		if !ca.IsCA || !ca.BasicConstraintsValid || ca.Subject.String() != ca.Issuer.String() {
			t.Errorf("ca.crt is %s issued by %s (CA %v), want a self-signed CA", ca.Subject, ca.Issuer, ca.IsCA)
		}
		if err := ca.CheckSignatureFrom(ca); err != nil {
			t.Errorf("ca.crt is not self-signed: %v", err)
		}

		// Made once: the syncs that bring the cluster up keep it.
		h.waitFor(t, hostedClusters, hc, "Available=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Available") == "True"
		})
		if kept := h.waitForConfigMap(t, hcpNamespace, hypershiftsim.RootCAConfigMapName); kept.Data["ca.crt"] != first.Data["ca.crt"] {
			t.Error("the root CA changed while the cluster came up")
		}

		if err := h.mc.Kube.CoreV1().ConfigMaps(hcpNamespace).Delete(t.Context(), hypershiftsim.RootCAConfigMapName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		again := h.waitForConfigMap(t, hcpNamespace, hypershiftsim.RootCAConfigMapName)
		if again.UID == first.UID {
			t.Fatal("the deleted ConfigMap is still there")
		}
		parseCertificate(t, []byte(again.Data["ca.crt"]))
	})

	t.Run("a new release image is an upgrade: Progressing, then Completed", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-upgrade", "mycluster", image4208)
		h.waitFor(t, hostedClusters, hc, "Available=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Available") == "True"
		})
		h.update(t, hostedClusters, hc, func(obj *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(obj.Object, image4209, "spec", "release", "image")
		})

		upgrading := h.waitFor(t, hostedClusters, hc, "the upgrade in progress", func(obj *unstructured.Unstructured) bool {
			state, entry := latestHistory(obj, "version")
			return state == "Partial" && entry["version"] == "4.20.9"
		})
		if got := conditionStatus(upgrading, "Progressing"); got != "True" {
			t.Errorf("while upgrading Progressing=%s, want True", got)
		}
		if got := conditionStatus(upgrading, "Available"); got != "True" {
			t.Errorf("while upgrading Available=%s, want True: an upgrade keeps the control plane up", got)
		}

		upgraded := h.waitFor(t, hostedClusters, hc, "the upgrade Completed", func(obj *unstructured.Unstructured) bool {
			state, entry := latestHistory(obj, "controlPlaneVersion")
			return state == "Completed" && entry["version"] == "4.20.9" && conditionStatus(obj, "Progressing") == "False"
		})
		history, _, _ := unstructured.NestedSlice(upgraded.Object, "status", "version", "history")
		if len(history) != 2 || history[1].(map[string]any)["version"] != "4.20.8" || history[1].(map[string]any)["state"] != "Completed" {
			t.Errorf("version.history = %v, want 4.20.9 above the Completed 4.20.8", history)
		}
		desired, _, _ := unstructured.NestedString(upgraded.Object, "status", "version", "desired", "image")
		if desired != image4209 {
			t.Errorf("version.desired.image = %q, want %q", desired, image4209)
		}
		if gen, err := observedGenerationsMatch(upgraded); err != nil || gen != 2 {
			t.Errorf("observedGeneration after the upgrade: generation %d, %v", gen, err)
		}
	})

	t.Run("a NodePool becomes Ready with its replicas and version", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-nodepool", "mycluster", image4208)
		np := h.createNodePool(t, hc, "mycluster-workers", 3)
		ready := h.waitFor(t, nodePools, np, "Ready=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Ready") == "True"
		})
		replicas, _, _ := unstructured.NestedInt64(ready.Object, "status", "replicas")
		version, _, _ := unstructured.NestedString(ready.Object, "status", "version")
		if replicas != 3 || version != "4.20.8" {
			t.Errorf("status.replicas=%d status.version=%q, want 3 4.20.8", replicas, version)
		}
		if !hasFinalizer(ready) {
			t.Errorf("finalizers %v, want %s", ready.GetFinalizers(), hypershiftsim.Finalizer)
		}
		// Its nodes could join only a running control plane.
		cluster, err := mc.Dynamic.Resource(hostedClusters).Namespace(hc.GetNamespace()).Get(t.Context(), hc.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := conditionStatus(cluster, "Available"); got != "True" {
			t.Errorf("the NodePool is Ready while its HostedCluster is Available=%s", got)
		}
	})

	t.Run("deleting a HostedCluster removes the finalizers and its objects go away", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-delete", "mycluster", image4208)
		np := h.createNodePool(t, hc, "mycluster-workers", 2)
		h.waitFor(t, nodePools, np, "Ready=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Ready") == "True"
		})
		if err := mc.Dynamic.Resource(hostedClusters).Namespace(hc.GetNamespace()).Delete(t.Context(), hc.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The finalizer holds the HostedCluster for the deletion delay.
		held := h.waitFor(t, hostedClusters, hc, "deletion pending", func(obj *unstructured.Unstructured) bool {
			return obj.GetDeletionTimestamp() != nil
		})
		if !hasFinalizer(held) {
			t.Errorf("the deleted HostedCluster has finalizers %v, want %s", held.GetFinalizers(), hypershiftsim.Finalizer)
		}
		h.waitGone(t, hostedClusters, hc)
		h.waitGone(t, nodePools, np)
		if _, err := mc.Kube.CoreV1().Secrets(hc.GetNamespace()).Get(t.Context(), "mycluster-admin-kubeconfig", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the kubeconfig Secret after the deletion: %v, want NotFound", err)
		}
		// With no namespace controller on this cluster, a deleted namespace stays Terminating.
		for _, name := range []string{"sim-delete-mycluster", hypershiftsim.HostedConfigNamespace(hc.GetNamespace(), hc.GetName())} {
			ns, err := mc.Kube.CoreV1().Namespaces().Get(t.Context(), name, metav1.GetOptions{})
			if err == nil && ns.DeletionTimestamp == nil {
				t.Errorf("the namespace %s is not being deleted", name)
			} else if err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
	})

	t.Run("deleting a NodePool removes its finalizer", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-npdelete", "mycluster", image4208)
		np := h.createNodePool(t, hc, "mycluster-workers", 1)
		h.waitFor(t, nodePools, np, "the finalizer", hasFinalizer)
		if err := mc.Dynamic.Resource(nodePools).Namespace(np.GetNamespace()).Delete(t.Context(), np.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitGone(t, nodePools, np)
	})

	t.Run("a break-glass CSR with its approval is approved and signed by the cluster's CA", func(t *testing.T) {
		t.Parallel()
		h.createHostedCluster(t, "sim-breakglass", "mycluster", image4208)
		hcpNamespace := h.waitForNamespace(t, "sim-breakglass-mycluster").Name
		csr := h.createBreakGlassCSR(t, hcpNamespace, "system-admin-credential-1")
		h.createApproval(t, hcpNamespace, csr.Name)

		signed := h.waitForCertificate(t, csr.Name)
		if !csrCondition(signed, certificatesv1.CertificateApproved, "ApprovalPresent") {
			t.Errorf("conditions %v, want Approved with reason ApprovalPresent", signed.Status.Conditions)
		}
		cert := parseCertificate(t, signed.Status.Certificate)
		if cert.Subject.CommonName != "system:customer-break-glass:system-admin" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "system:masters" {
			t.Errorf("subject %v, want CN=system:customer-break-glass:system-admin O=system:masters", cert.Subject)
		}
		if life := cert.NotAfter.Sub(time.Now()); life > 24*time.Hour || life < 23*time.Hour {
			t.Errorf("valid until %v, want the 24h the CSR asked for", cert.NotAfter)
		}
		ca := h.signerCA(t, hcpNamespace)
		if err := verifyClientCert(cert, ca); err != nil {
			t.Errorf("the certificate does not chain to the CA in Secret %s/%s: %v", hcpNamespace, hypershiftsim.SignerSecretName(hypershiftsim.CustomerBreakGlass), err)
		}
	})

	t.Run("a break-glass CSR without an approval stays unsigned", func(t *testing.T) {
		t.Parallel()
		h.createHostedCluster(t, "sim-unapproved", "mycluster", image4208)
		hcpNamespace := h.waitForNamespace(t, "sim-unapproved-mycluster").Name
		unapproved := h.createBreakGlassCSR(t, hcpNamespace, "sim-unapproved-credential")
		// A second CSR, approved after the first was created, shows when the simulator has looked at both.
		approved := h.createBreakGlassCSR(t, hcpNamespace, "sim-approved-credential")
		h.createApproval(t, hcpNamespace, approved.Name)
		h.waitForCertificate(t, approved.Name)

		got, err := mc.Kube.CertificatesV1().CertificateSigningRequests().Get(t.Context(), unapproved.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Conditions) != 0 || len(got.Status.Certificate) != 0 {
			t.Errorf("a CSR with no approval: conditions %v, certificate %d bytes; want neither", got.Status.Conditions, len(got.Status.Certificate))
		}
	})

	t.Run("a CertificateRevocationRequest rotates the CA and reports its progress", func(t *testing.T) {
		t.Parallel()
		h.createHostedCluster(t, "sim-revoke", "mycluster", image4208)
		hcpNamespace := h.waitForNamespace(t, "sim-revoke-mycluster").Name
		before := h.createBreakGlassCSR(t, hcpNamespace, "sim-revoke-before")
		h.createApproval(t, hcpNamespace, before.Name)
		oldLeaf := parseCertificate(t, h.waitForCertificate(t, before.Name).Status.Certificate)
		oldCA := h.signerCA(t, hcpNamespace)

		crr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "certificates.hypershift.openshift.io/v1alpha1",
			"kind":       "CertificateRevocationRequest",
			"metadata":   map[string]any{"name": "system-admin-credential-revocation-op1", "namespace": hcpNamespace},
			"spec":       map[string]any{"signerClass": hypershiftsim.CustomerBreakGlass},
		}}
		crr, err := mc.Dynamic.Resource(revocations).Namespace(hcpNamespace).Create(t.Context(), crr, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conditions := []string{hypershiftsim.SignerClassValid, hypershiftsim.RootCertificatesRegenerated, hypershiftsim.NewCertificatesTrusted,
			hypershiftsim.LeafCertificatesRegenerated, hypershiftsim.PreviousCertificatesRevoked}
		revoked := h.waitFor(t, revocations, crr, "every revocation condition True", func(obj *unstructured.Unstructured) bool {
			for _, c := range conditions {
				if conditionStatus(obj, c) != "True" {
					return false
				}
			}
			return true
		})
		for _, c := range conditions {
			if reason := conditionReason(revoked, c); reason != "AsExpected" {
				t.Errorf("%s reason %q, want AsExpected", c, reason)
			}
		}

		cutoffText, _, _ := unstructured.NestedString(revoked.Object, "status", "revocationTimestamp")
		cutoff, err := time.Parse(time.RFC3339, cutoffText)
		if err != nil {
			t.Fatalf("status.revocationTimestamp %q: %v", cutoffText, err)
		}
		newCA := h.signerCA(t, hcpNamespace)
		if newCA.Equal(oldCA) {
			t.Fatal("the CA in the signer Secret did not change")
		}
		if !newCA.NotBefore.After(cutoff) || oldCA.NotBefore.After(cutoff) {
			t.Errorf("old CA from %v, new CA from %v; want the new one only after the cut-off %v", oldCA.NotBefore, newCA.NotBefore, cutoff)
		}

		previous, _, _ := unstructured.NestedString(revoked.Object, "status", "previousSigner", "name")
		if previous != hypershiftsim.PreviousSignerSecretName(crr.GetName()) {
			t.Errorf("status.previousSigner.name = %q, want %q", previous, hypershiftsim.PreviousSignerSecretName(crr.GetName()))
		}
		if kept := h.secretCert(t, hcpNamespace, previous); !kept.Equal(oldCA) {
			t.Errorf("Secret %s does not hold the previous CA", previous)
		}

		// Credentials now come from the new CA; the old ones no longer chain to it.
		after := h.createBreakGlassCSR(t, hcpNamespace, "sim-revoke-after")
		h.createApproval(t, hcpNamespace, after.Name)
		newLeaf := parseCertificate(t, h.waitForCertificate(t, after.Name).Status.Certificate)
		if err := verifyClientCert(newLeaf, newCA); err != nil {
			t.Errorf("a certificate issued after the revocation does not chain to the new CA: %v", err)
		}
		if err := verifyClientCert(oldLeaf, newCA); err == nil {
			t.Error("a certificate issued before the revocation still chains to the new CA")
		}
	})

	t.Run("OIDC clients: a confidential one is reported missing its secret until it is created, then gone with the provider", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-oidc", "mycluster", image4208)
		h.update(t, hostedClusters, hc, func(obj *unstructured.Unstructured) {
			_ = unstructured.SetNestedMap(obj.Object, oidcAuthentication("console-secret"), "spec", "configuration", "authentication")
		})
		reported := h.waitFor(t, hostedClusters, hc, "both OIDC clients reported", func(obj *unstructured.Unstructured) bool {
			return len(oidcClients(obj)) == 2
		})
		console, cli := oidcClient(reported, "openshift-console", "console"), oidcClient(reported, "openshift-console", "cli")
		if got := conditionIn(console, "Available"); got["status"] != "False" || got["message"] != `secret "openshift-config/console-secret" not found` {
			t.Errorf("the confidential client without its secret: Available %v, want False, naming openshift-config/console-secret", got)
		}
		if got := conditionIn(console, "Degraded"); got["status"] != "True" {
			t.Errorf("the confidential client without its secret: Degraded %v, want True", got)
		}
		current, _, _ := unstructured.NestedSlice(console, "currentOIDCClients")
		if len(current) != 1 || current[0].(map[string]any)["clientID"] != "console-app" || current[0].(map[string]any)["oidcProviderName"] != "entra" ||
			current[0].(map[string]any)["issuerURL"] != "https://login.example.com/tenant/v2.0" {
			t.Errorf("currentOIDCClients %v, want the console's client of the provider entra", current)
		}
		if got := conditionIn(cli, "Available"); got["status"] != "True" {
			t.Errorf("the public client: Available %v, want True", got)
		}

		// The customer creates the secret in the hosted cluster: the report follows at once.
		namespace := hypershiftsim.HostedConfigNamespace(hc.GetNamespace(), hc.GetName())
		_, err := mc.Kube.CoreV1().Secrets(namespace).Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "console-secret"},
			StringData: map[string]string{"clientSecret": "s3cret"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating the client secret in %s: %v", namespace, err)
		}
		settled := h.waitFor(t, hostedClusters, hc, "the console's client Available", func(obj *unstructured.Unstructured) bool {
			c := oidcClient(obj, "openshift-console", "console")
			return conditionIn(c, "Available")["status"] == "True" && conditionIn(c, "Degraded")["status"] == "False"
		})
		// Written once: what the simulator reads back is what it wrote, so it does not write again.
		time.Sleep(time.Second)
		if again := h.get(t, hostedClusters, hc); again.GetResourceVersion() != settled.GetResourceVersion() {
			t.Errorf("the HostedCluster changed from resourceVersion %s to %s while nothing happened:\n%s", settled.GetResourceVersion(), again.GetResourceVersion(), dump(again))
		}

		// Deleted again, it is missing again.
		if err := mc.Kube.CoreV1().Secrets(namespace).Delete(t.Context(), "console-secret", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitFor(t, hostedClusters, hc, "the console's client missing its secret again", func(obj *unstructured.Unstructured) bool {
			return conditionIn(oidcClient(obj, "openshift-console", "console"), "Available")["status"] == "False"
		})

		// Back to the cluster's OAuth server: no OIDC clients to report.
		h.update(t, hostedClusters, hc, func(obj *unstructured.Unstructured) {
			unstructured.RemoveNestedField(obj.Object, "spec", "configuration", "authentication")
		})
		gone := h.waitFor(t, hostedClusters, hc, "the OIDC clients' report gone", func(obj *unstructured.Unstructured) bool {
			_, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "configuration")
			return !found
		})
		if got := conditionStatus(gone, "Available"); got != "True" {
			t.Errorf("Available=%s after the provider was removed, want True", got)
		}
	})

	t.Run("NeverAvailable keeps Available=False", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-never", neverAvailableName, image4208)
		h.waitFor(t, hostedClusters, hc, "the install in progress", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Progressing") == "True"
		})
		// Well past the provision delay, nothing has moved.
		deadline := time.Now().Add(provisionDelay + 3*time.Second)
		for time.Now().Before(deadline) {
			obj, err := mc.Dynamic.Resource(hostedClusters).Namespace(hc.GetNamespace()).Get(t.Context(), hc.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := conditionStatus(obj, "Available"); got != "False" {
				t.Fatalf("Available=%s, want False for good", got)
			}
			if state, _ := latestHistory(obj, "controlPlaneVersion"); state != "Partial" {
				t.Fatalf("controlPlaneVersion.history[0].state=%q, want Partial for good", state)
			}
			time.Sleep(250 * time.Millisecond)
		}
	})

	t.Run("Degraded sets Degraded=True", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-degraded", degradedName, image4208)
		obj := h.waitFor(t, hostedClusters, hc, "Degraded=True and Available=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Degraded") == "True" && conditionStatus(obj, "Available") == "True"
		})
		if reason := conditionReason(obj, "Degraded"); reason == "" || reason == "AsExpected" {
			t.Errorf("Degraded reason %q, want one that says what is wrong", reason)
		}
	})

	t.Run("an available control plane has its pods Running and Ready, and the kubelet's Normal events", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-cppods", "mycluster", image4208)
		h.waitFor(t, hostedClusters, hc, "Available=True", func(obj *unstructured.Unstructured) bool {
			return conditionStatus(obj, "Available") == "True"
		})
		pods := h.waitForControlPlanePods(t, hc, "every container ready", func(pod *corev1.Pod) bool {
			return podReady(pod) && pod.Status.Phase == corev1.PodRunning
		})
		for _, pod := range pods {
			for _, cs := range pod.Status.ContainerStatuses {
				if !cs.Ready || cs.State.Running == nil || cs.RestartCount != 0 || cs.Image != image4208 {
					t.Errorf("pod %s container %s: ready %v, state %+v, restarts %d, image %s; want ready, running, no restart, the release image",
						pod.Name, cs.Name, cs.Ready, cs.State, cs.RestartCount, cs.Image)
				}
			}
		}

		events := h.waitForEvents(t, hc, "the containers' Started events", func(events []corev1.Event) bool {
			return findEvent(events, "Started", "etcd-0") != nil && findEvent(events, "Started", pods["kube-apiserver"].Name) != nil
		})
		for _, e := range events {
			if e.Type != corev1.EventTypeNormal {
				t.Errorf("event %s %s on %s/%s: %s, want only Normal events", e.Type, e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
			}
		}
		if e := findEvent(events, "Started", "etcd-0"); e.Source.Component != "kubelet" || e.Message != "Started container etcd" || e.InvolvedObject.Kind != "Pod" {
			t.Errorf("the Started event of etcd-0: %s from %s on %s, want \"Started container etcd\" from the kubelet on the Pod",
				e.Message, e.Source.Component, e.InvolvedObject.Kind)
		}
	})

	t.Run("a NeverAvailable control plane crash-loops kube-apiserver, with BackOff and HostedCluster warnings", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-cpstuck", neverAvailableName, image4208)
		pods := h.waitForControlPlanePods(t, hc, "kube-apiserver crash-looping", func(pod *corev1.Pod) bool {
			return pod.Labels["app"] != "kube-apiserver" || containerWaiting(pod, "kube-apiserver") == "CrashLoopBackOff"
		})
		kas := pods["kube-apiserver"]
		if podReady(kas) || kas.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: phase %s, Ready %v; want Running and not Ready", kas.Name, kas.Status.Phase, podReady(kas))
		}
		for _, cs := range kas.Status.ContainerStatuses {
			if cs.Name != "kube-apiserver" {
				continue
			}
			if cs.Ready || cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode == 0 {
				t.Errorf("container kube-apiserver: ready %v, restarts %d, last state %+v; want not ready, restarted, last terminated with an error",
					cs.Ready, cs.RestartCount, cs.LastTerminationState)
			}
		}
		if podReady(pods["etcd"]) {
			t.Error("etcd-0 is Ready in a control plane whose etcd has no quorum")
		}

		events := h.waitForEvents(t, hc, "BackOff and the HostedCluster's warning", func(events []corev1.Event) bool {
			return findEvent(events, "BackOff", kas.Name) != nil && findEvent(events, "WaitingForAvailable", hc.GetName()) != nil
		})
		backOff := findEvent(events, "BackOff", kas.Name)
		if backOff.Type != corev1.EventTypeWarning || backOff.Source.Component != "kubelet" || backOff.Count < 1 ||
			!strings.HasPrefix(backOff.Message, "Back-off restarting failed container kube-apiserver in pod "+kas.Name) {
			t.Errorf("BackOff: %s from %s, count %d: %q; want a kubelet Warning that says kube-apiserver is restarted",
				backOff.Type, backOff.Source.Component, backOff.Count, backOff.Message)
		}
		warning := findEvent(events, "WaitingForAvailable", hc.GetName())
		if warning.Type != corev1.EventTypeWarning || warning.Source.Component != "hypershift-operator" || warning.InvolvedObject.Kind != "HostedCluster" ||
			warning.InvolvedObject.Namespace != hc.GetNamespace() || !strings.Contains(warning.Message, "KubeAPIServerAvailable=False") {
			t.Errorf("the HostedCluster's warning: %s from %s on %s %s/%s: %q; want a hypershift-operator Warning on the HostedCluster's failing condition",
				warning.Type, warning.Source.Component, warning.InvolvedObject.Kind, warning.InvolvedObject.Namespace, warning.InvolvedObject.Name, warning.Message)
		}

		// Syncs of the HostedCluster add no event: a repeat updates the one there.
		for i := range 3 {
			h.update(t, hostedClusters, hc, func(obj *unstructured.Unstructured) {
				obj.SetLabels(map[string]string{"resync": strconv.Itoa(i)})
			})
		}
		time.Sleep(time.Second)
		if again := h.listEvents(t, hc); len(again) != len(events) {
			t.Errorf("%d events after three resyncs, want the %d there before", len(again), len(events))
		}
	})

	t.Run("the control-plane pods go with their namespace, at once though no kubelet is there", func(t *testing.T) {
		t.Parallel()
		hc := h.createHostedCluster(t, "sim-cpdelete", "mycluster", image4208)
		namespace := hypershiftsim.ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())
		h.waitForControlPlanePods(t, hc, "the pods", func(*corev1.Pod) bool { return true })
		if err := mc.Dynamic.Resource(hostedClusters).Namespace(hc.GetNamespace()).Delete(t.Context(), hc.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitGone(t, hostedClusters, hc)
		ns, err := mc.Kube.CoreV1().Namespaces().Get(t.Context(), namespace, metav1.GetOptions{})
		if err == nil && ns.DeletionTimestamp == nil {
			t.Fatalf("the namespace %s is not being deleted", namespace)
		}
		// As the namespace controller empties it: a graceful delete that no kubelet has to confirm.
		if err := mc.Kube.CoreV1().Pods(namespace).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		left, err := mc.Kube.CoreV1().Pods(namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(left.Items) > 0 {
			t.Errorf("%d pods are left after the namespace's delete, the first Terminating since %v", len(left.Items), left.Items[0].DeletionTimestamp)
		}
	})
}

// waitForControlPlanePods waits until hc's control-plane namespace has its three stand-in pods and done
// says so of each, and returns them by app label.
func (h *harness) waitForControlPlanePods(t *testing.T, hc *unstructured.Unstructured, what string, done func(*corev1.Pod) bool) map[string]*corev1.Pod {
	t.Helper()
	namespace := hypershiftsim.ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())
	var pods map[string]*corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := h.mc.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods = map[string]*corev1.Pod{}
		for i := range list.Items {
			pod := &list.Items[i]
			if !done(pod) {
				return false, nil
			}
			pods[pod.Labels["app"]] = pod
		}
		return len(pods) == 3, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s of the pods in %s: %v\nlast seen: %v", what, namespace, err, pods)
	}
	uid := string(hc.GetUID())
	for app, pod := range pods {
		if want := hypershiftsim.ControlPlanePodName(uid, app); pod.Name != want {
			t.Errorf("pod of app %s is %s, want %s", app, pod.Name, want)
		}
		if pod.Spec.NodeName != hypershiftsim.NodeName || len(pod.Spec.Containers) == 0 || pod.Spec.Containers[0].Name != app {
			t.Errorf("pod %s: node %q, containers %v; want node %s and a first container named %s, as HyperShift's", pod.Name,
				pod.Spec.NodeName, pod.Spec.Containers, hypershiftsim.NodeName, app)
		}
	}
	if pods["etcd"].Name != "etcd-0" || !strings.HasPrefix(pods["kube-apiserver"].Name, "kube-apiserver-") ||
		!strings.HasPrefix(pods["kube-controller-manager"].Name, "kube-controller-manager-") {
		t.Errorf("pods %s, %s, %s; want etcd-0, kube-apiserver-<hash>, kube-controller-manager-<hash>",
			pods["etcd"].Name, pods["kube-apiserver"].Name, pods["kube-controller-manager"].Name)
	}
	return pods
}

func (h *harness) listEvents(t *testing.T, hc *unstructured.Unstructured) []corev1.Event {
	t.Helper()
	list, err := h.mc.Kube.CoreV1().Events(hypershiftsim.ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// waitForEvents waits until done says so of the events of hc's control-plane namespace, and returns them.
func (h *harness) waitForEvents(t *testing.T, hc *unstructured.Unstructured, what string, done func([]corev1.Event) bool) []corev1.Event {
	t.Helper()
	var events []corev1.Event
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		events = h.listEvents(t, hc)
		return done(events), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v\nlast seen: %+v", what, err, events)
	}
	return events
}

func findEvent(events []corev1.Event, reason, object string) *corev1.Event {
	for i := range events {
		if events[i].Reason == reason && events[i].InvolvedObject.Name == object {
			return &events[i]
		}
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containerWaiting(pod *corev1.Pod, container string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Waiting != nil {
			return cs.State.Waiting.Reason
		}
	}
	return ""
}

var (
	hostedClusters = hypershiftsim.HostedClusterResource
	nodePools      = hypershiftsim.NodePoolResource
	revocations    = hypershiftsim.CertificateRevocationRequestResource
)

// startSimulator runs a simulator until the test ends.
func startSimulator(t *testing.T, mc *framework.ManagementCluster, opts hypershiftsim.Options) {
	t.Helper()
	sim, err := hypershiftsim.New(mc.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the simulator: %v", err)
		}
	})
}

type harness struct {
	mc       *framework.ManagementCluster
	examples string
}

// example reads the one object of a kind from an example file.
func (h *harness) example(t *testing.T, file, kind string) *unstructured.Unstructured {
	t.Helper()
	return framework.HyperShiftExample(t, file, kind)
}

// createHostedCluster creates the ARO HCP-style example HostedCluster as namespace/name.
func (h *harness) createHostedCluster(t *testing.T, namespace, name, image string) *unstructured.Unstructured {
	t.Helper()
	hc := h.example(t, "aro-hcp-style-minimal-hostedcluster.yaml", "HostedCluster")
	hc.SetNamespace(namespace)
	hc.SetName(name)
	_ = unstructured.SetNestedField(hc.Object, image, "spec", "release", "image")
	created, err := h.mc.CreateObject(t.Context(), hc)
	if err != nil {
		t.Fatalf("creating HostedCluster %s/%s: %v", namespace, name, err)
	}
	return created
}

// createNodePool creates the ARO HCP-style example NodePool for hc.
func (h *harness) createNodePool(t *testing.T, hc *unstructured.Unstructured, name string, replicas int64) *unstructured.Unstructured {
	t.Helper()
	np := h.example(t, "aro-hcp-style-minimal-nodepool.yaml", "NodePool")
	np.SetNamespace(hc.GetNamespace())
	np.SetName(name)
	_ = unstructured.SetNestedField(np.Object, hc.GetName(), "spec", "clusterName")
	_ = unstructured.SetNestedField(np.Object, replicas, "spec", "replicas")
	image, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image")
	_ = unstructured.SetNestedField(np.Object, image, "spec", "release", "image")
	created, err := h.mc.CreateObject(t.Context(), np)
	if err != nil {
		t.Fatalf("creating NodePool %s/%s: %v", np.GetNamespace(), name, err)
	}
	return created
}

// update changes an object, retrying on conflicts with the simulator's writes.
func (h *harness) update(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, change func(*unstructured.Unstructured)) {
	t.Helper()
	client := h.mc.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := client.Get(t.Context(), obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(current)
		_, err = client.Update(t.Context(), current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating %s %s/%s: %v", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
}

func (h *harness) get(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	current, err := h.mc.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Get(t.Context(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return current
}

// waitFor polls the object until done says so, and returns it then.
func (h *harness) waitFor(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, what string, done func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	client := h.mc.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		current, err := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = current
		return done(current), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s of %s %s/%s: %v\nlast seen:\n%s", what, gvr.Resource, obj.GetNamespace(), obj.GetName(), err, dump(last))
	}
	return last
}

func (h *harness) waitGone(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	t.Helper()
	client := h.mc.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		current, err := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		last = current
		return false, err
	})
	if err != nil {
		t.Fatalf("waiting for %s %s/%s to go away: %v\nlast seen:\n%s", gvr.Resource, obj.GetNamespace(), obj.GetName(), err, dump(last))
	}
}

func (h *harness) waitForNamespace(t *testing.T, name string) *corev1.Namespace {
	t.Helper()
	var ns *corev1.Namespace
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		ns, err = h.mc.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("waiting for the namespace %s: %v", name, err)
	}
	return ns
}

func (h *harness) waitForConfigMap(t *testing.T, namespace, name string) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		cm, err = h.mc.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("waiting for the ConfigMap %s/%s: %v", namespace, name, err)
	}
	return cm
}

// createBreakGlassCSR creates a CSR as ARO HCP does for a customer's break-glass
// credential: CN=system:customer-break-glass:system-admin, O=system:masters.
func (h *harness) createBreakGlassCSR(t *testing.T, hcpNamespace, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName:   "system:customer-break-glass:system-admin",
		Organization: []string{"system:masters"},
	}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName:        hypershiftsim.SignerName(hcpNamespace, hypershiftsim.CustomerBreakGlass),
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			ExpirationSeconds: ptr.To[int32](86400),
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
		},
	}
	created, err := h.mc.Kube.CertificatesV1().CertificateSigningRequests().Create(t.Context(), csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CSR %s: %v", name, err)
	}
	return created
}

// createApproval creates the CertificateSigningRequestApproval that approves the CSR of the same name.
func (h *harness) createApproval(t *testing.T, hcpNamespace, name string) {
	t.Helper()
	approval := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certificates.hypershift.openshift.io/v1alpha1",
		"kind":       "CertificateSigningRequestApproval",
		"metadata":   map[string]any{"name": name, "namespace": hcpNamespace},
		"spec":       map[string]any{},
	}}
	_, err := h.mc.Dynamic.Resource(hypershiftsim.CertificateSigningRequestApprovalResource).Namespace(hcpNamespace).
		Create(t.Context(), approval, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CertificateSigningRequestApproval %s/%s: %v", hcpNamespace, name, err)
	}
}

func (h *harness) waitForCertificate(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		csr, err = h.mc.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(csr.Status.Certificate) > 0, err
	})
	if err != nil {
		var conditions []certificatesv1.CertificateSigningRequestCondition
		if csr != nil {
			conditions = csr.Status.Conditions
		}
		t.Fatalf("waiting for CSR %s to be signed: %v (conditions %v)", name, err, conditions)
	}
	return csr
}

// signerCA is the customer break-glass CA in the control-plane namespace.
func (h *harness) signerCA(t *testing.T, hcpNamespace string) *x509.Certificate {
	t.Helper()
	return h.secretCert(t, hcpNamespace, hypershiftsim.SignerSecretName(hypershiftsim.CustomerBreakGlass))
}

func (h *harness) secretCert(t *testing.T, namespace, name string) *x509.Certificate {
	t.Helper()
	secret, err := h.mc.Kube.CoreV1().Secrets(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Secret %s/%s: %v", namespace, name, err)
	}
	if len(secret.Data[corev1.TLSPrivateKeyKey]) == 0 {
		t.Errorf("the Secret %s/%s has no %s", namespace, name, corev1.TLSPrivateKeyKey)
	}
	return parseCertificate(t, secret.Data[corev1.TLSCertKey])
}

func parseCertificate(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// verifyClientCert checks cert as a client certificate issued by ca.
func verifyClientCert(cert, ca *x509.Certificate) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

func csrCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType, reason string) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue && c.Reason == reason {
			return true
		}
	}
	return false
}

func findCondition(obj *unstructured.Unstructured, conditionType string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			return m
		}
	}
	return nil
}

func conditionStatus(obj *unstructured.Unstructured, conditionType string) string {
	s, _ := findCondition(obj, conditionType)["status"].(string)
	return s
}

func conditionReason(obj *unstructured.Unstructured, conditionType string) string {
	s, _ := findCondition(obj, conditionType)["reason"].(string)
	return s
}

// observedGenerationsMatch checks that every condition was computed from the
// object's current generation, and returns that generation.
func observedGenerationsMatch(obj *unstructured.Unstructured) (int64, error) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m := c.(map[string]any)
		if m["observedGeneration"] != obj.GetGeneration() {
			return obj.GetGeneration(), fmt.Errorf("condition %s has observedGeneration %v, the object generation %d", m["type"], m["observedGeneration"], obj.GetGeneration())
		}
	}
	return obj.GetGeneration(), nil
}

// latestHistory is the newest entry of status.<field>.history.
func latestHistory(obj *unstructured.Unstructured, field string) (string, map[string]any) {
	history, _, _ := unstructured.NestedSlice(obj.Object, "status", field, "history")
	if len(history) == 0 {
		return "", nil
	}
	entry, _ := history[0].(map[string]any)
	state, _ := entry["state"].(string)
	return state, entry
}

// oidcAuthentication is spec.configuration.authentication with one OIDC provider, entra, with a
// confidential client (the console, whose secret is consoleSecret) and a public one (the CLI).
func oidcAuthentication(consoleSecret string) map[string]any {
	return map[string]any{
		"type": "OIDC",
		"oidcProviders": []any{map[string]any{
			"name":   "entra",
			"issuer": map[string]any{"issuerURL": "https://login.example.com/tenant/v2.0", "audiences": []any{"console-app", "cli-app"}},
			"oidcClients": []any{
				map[string]any{"componentName": "console", "componentNamespace": "openshift-console", "clientID": "console-app",
					"clientSecret": map[string]any{"name": consoleSecret}},
				map[string]any{"componentName": "cli", "componentNamespace": "openshift-console", "clientID": "cli-app"},
			},
			"claimMappings": map[string]any{"username": map[string]any{"claim": "email"}},
		}},
	}
}

func oidcClients(obj *unstructured.Unstructured) []any {
	clients, _, _ := unstructured.NestedSlice(obj.Object, "status", "configuration", "authentication", "oidcClients")
	return clients
}

// oidcClient is the entry of status.configuration.authentication.oidcClients of a component.
func oidcClient(obj *unstructured.Unstructured, namespace, name string) map[string]any {
	for _, c := range oidcClients(obj) {
		if m, ok := c.(map[string]any); ok && m["componentNamespace"] == namespace && m["componentName"] == name {
			return m
		}
	}
	return nil
}

func conditionIn(obj map[string]any, conditionType string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(obj, "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			return m
		}
	}
	return nil
}

func hasFinalizer(obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetFinalizers() {
		if f == hypershiftsim.Finalizer {
			return true
		}
	}
	return false
}

func dump(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "(nothing)"
	}
	data, err := json.MarshalIndent(map[string]any{"metadata": map[string]any{
		"generation": obj.GetGeneration(), "finalizers": obj.GetFinalizers(), "deletionTimestamp": obj.GetDeletionTimestamp(),
	}, "status": obj.Object["status"]}, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(data)
}
