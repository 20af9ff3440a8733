package render_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	certificatesv1alpha1 "github.com/openshift/hypershift/api/certificates/v1alpha1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

const hcpNamespace = "ocm-dev-" + clusterID + "-mycluster"

var (
	csrFeedback = []string{
		render.FeedbackCertificate, render.FeedbackCSRApproved, render.FeedbackCSRDenied, render.FeedbackCSRDeniedMessage,
		render.FeedbackCSRFailed, render.FeedbackCSRFailedMessage,
	}
	revocationFeedback = []string{
		render.FeedbackPreviousCertificatesRevoked, render.FeedbackPreviousCertificatesRevokedMessage, render.FeedbackRevocationTimestamp,
	}
)

func TestBreakglassCredentialBundle(t *testing.T) {
	csrPEM := breakglassCSR(t)
	b, err := render.BreakglassCredential(hcpNamespace, "credential-1", csrPEM, 86400)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
	kinds := []string{"CertificateSigningRequest", "CertificateSigningRequestApproval", "ConfigMap"}
	if len(b.Manifests) != len(kinds) || len(b.ManifestConfigs) != len(kinds) {
		t.Fatalf("%d manifests and %d manifest configs, want %v", len(b.Manifests), len(b.ManifestConfigs), kinds)
	}
	checkFeedbackNames(t, b, map[int][]string{0: csrFeedback, 2: {render.FeedbackCA}})

	var csr certificatesv1.CertificateSigningRequest
	fromJSON(t, string(b.Manifests[0]), &csr)
	if csr.Kind != kinds[0] || csr.APIVersion != "certificates.k8s.io/v1" || csr.Name != "credential-1" || csr.Namespace != "" {
		t.Errorf("manifest 0 is %s %s %s/%s, want the cluster-scoped CSR credential-1", csr.APIVersion, csr.Kind, csr.Namespace, csr.Name)
	}
	if want := "hypershift.openshift.io/" + hcpNamespace + ".customer-break-glass"; csr.Spec.SignerName != want {
		t.Errorf("signerName %q, want %q: HyperShift signs only for its own control plane's signer", csr.Spec.SignerName, want)
	}
	if !slices.Equal(csr.Spec.Usages, []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}) {
		t.Errorf("usages %v, want [client auth]", csr.Spec.Usages)
	}
	if e := csr.Spec.ExpirationSeconds; e == nil || *e != 86400 {
		t.Errorf("expirationSeconds %v, want 86400", e)
	}
	if string(csr.Spec.Request) != string(csrPEM) {
		t.Errorf("request %q, want the PEM as given", csr.Spec.Request)
	}

	var approval certificatesv1alpha1.CertificateSigningRequestApproval
	fromJSON(t, string(b.Manifests[1]), &approval)
	if approval.APIVersion != "certificates.hypershift.openshift.io/v1alpha1" || approval.Kind != kinds[1] ||
		approval.Name != csr.Name || approval.Namespace != hcpNamespace {
		t.Errorf("manifest 1 is %s %s %s/%s, want the approval %s/%s that HyperShift matches to the CSR by name",
			approval.APIVersion, approval.Kind, approval.Namespace, approval.Name, hcpNamespace, csr.Name)
	}

	var ca corev1.ConfigMap
	fromJSON(t, string(b.Manifests[2]), &ca)
	if ca.Kind != kinds[2] || ca.Name != "root-ca" || ca.Namespace != hcpNamespace || len(ca.Data) != 0 {
		t.Errorf("manifest 2 is %s %s/%s with data %v, want the empty ConfigMap %s/root-ca", ca.Kind, ca.Namespace, ca.Name, ca.Data, hcpNamespace)
	}

	// The service writes the CSR and the approval, and only reads the root CA: the agent
	// deletes with the bundle only what it wrote.
	forced := &protocol.UpdateStrategy{Type: protocol.UpdateStrategyServerSideApply, ServerSideApply: &protocol.ServerSideApplyConfig{Force: true}}
	for i, want := range []*protocol.UpdateStrategy{forced, forced, {Type: protocol.UpdateStrategyReadOnly}} {
		if got := b.ManifestConfigs[i].UpdateStrategy; got == nil || got.Type != want.Type {
			t.Errorf("manifest %d is written %+v, want %s", i, got, want.Type)
		}
	}
	if b.DeleteOption == nil || b.DeleteOption.PropagationPolicy != protocol.DeletePropagationForeground {
		t.Errorf("delete option %+v, want Foreground", b.DeleteOption)
	}
	for i, raw := range b.Manifests {
		if strings.Contains(string(raw), `"status":`) {
			t.Errorf("manifest %d has a status: %s", i, raw)
		}
	}
}

func TestBreakglassCredentialRefusesBadInput(t *testing.T) {
	csrPEM := breakglassCSR(t)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})
	for _, tc := range []struct {
		name, namespace, credential string
		csr                         []byte
		expirationSeconds           int64
		want                        string
	}{
		{"a namespace that is no DNS label", "ocm.dev", "c", csrPEM, 86400, "hcpNamespace"},
		{"a name that is no DNS subdomain", hcpNamespace, "C_1", csrPEM, 86400, "name"},
		{"no CSR", hcpNamespace, "c", nil, 86400, "csrPEM"},
		{"a certificate instead of a CSR", hcpNamespace, "c", certPEM, 86400, "csrPEM"},
		{"under the CSR API's 10 minutes", hcpNamespace, "c", csrPEM, 599, "expirationSeconds"},
		{"over an int32", hcpNamespace, "c", csrPEM, 1 << 31, "expirationSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render.BreakglassCredential(tc.namespace, tc.credential, tc.csr, tc.expirationSeconds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error about %s", err, tc.want)
			}
		})
	}
}

func TestCertificateRevocationBundle(t *testing.T) {
	b, err := render.CertificateRevocation(hcpNamespace, "revocation-1")
	if err != nil {
		t.Fatal(err)
	}
	checkBundleShape(t, b, []string{"CertificateRevocationRequest"})
	checkFeedbackNames(t, b, map[int][]string{0: revocationFeedback})
	var crr certificatesv1alpha1.CertificateRevocationRequest
	fromJSON(t, string(b.Manifests[0]), &crr)
	if crr.APIVersion != "certificates.hypershift.openshift.io/v1alpha1" || crr.Name != "revocation-1" || crr.Namespace != hcpNamespace ||
		crr.Spec.SignerClass != "customer-break-glass" {
		t.Errorf("got %s %s/%s of signer class %q, want a customer-break-glass revocation in %s",
			crr.APIVersion, crr.Namespace, crr.Name, crr.Spec.SignerClass, hcpNamespace)
	}
	if _, err := render.CertificateRevocation("", "revocation-1"); err == nil {
		t.Error("a revocation with no namespace rendered")
	}
}

// TestBreakglassFeedbackReadsStatus evaluates the feedback rules, as the agent does, on the
// shared example objects with the status HyperShift and the CSR API give them.
func TestBreakglassFeedbackReadsStatus(t *testing.T) {
	b, err := render.BreakglassCredential(hcpNamespace, "credential-1", breakglassCSR(t), 86400)
	if err != nil {
		t.Fatal(err)
	}
	const examples = "break-glass-csr-csra-crr-examples.yaml"
	certPEM := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	condition := func(conditionType, message string) map[string]any {
		return map[string]any{"type": conditionType, "status": "True", "reason": "Test", "message": message,
			"lastUpdateTime": "2026-11-29T12:00:00Z", "lastTransitionTime": "2026-11-29T12:00:00Z"}
	}

	for _, tc := range []struct {
		name   string
		status map[string]any
		want   map[string]string
	}{
		{"pending: nothing reported", nil, map[string]string{}},
		{
			"approved and signed",
			map[string]any{
				// The API keeps []byte as base64.
				"certificate": base64.StdEncoding.EncodeToString([]byte(certPEM)),
				"conditions":  []any{condition("Approved", "The requisite approval resource exists.")},
			},
			map[string]string{
				render.FeedbackCSRApproved: "True",
				render.FeedbackCertificate: base64.StdEncoding.EncodeToString([]byte(certPEM)),
			},
		},
		{
			"denied",
			map[string]any{"conditions": []any{condition("Denied", "no approval")}},
			map[string]string{render.FeedbackCSRDenied: "True", render.FeedbackCSRDeniedMessage: "no approval"},
		},
		{
			"approved, then failed to sign",
			map[string]any{"conditions": []any{condition("Approved", "ok"), condition("Failed", "subjectAltNames are not allowed")}},
			map[string]string{render.FeedbackCSRApproved: "True", render.FeedbackCSRFailed: "True", render.FeedbackCSRFailedMessage: "subjectAltNames are not allowed"},
		},
	} {
		t.Run("CSR "+tc.name, func(t *testing.T) {
			csr := framework.HyperShiftExample(t, examples, "CertificateSigningRequest")
			if tc.status != nil {
				csr.Object["status"] = tc.status
			}
			got := feedbackOn(t, csr, b.ManifestConfigs[0])
			if !maps.Equal(got, tc.want) {
				t.Errorf("feedback %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("the root CA under a key with a dot", func(t *testing.T) {
		ca := &unstructured.Unstructured{}
		if err := ca.UnmarshalJSON(mustJSON(t, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "root-ca", Namespace: hcpNamespace},
			Data:       map[string]string{"ca.crt": certPEM, "ca": "not this", "crt": "nor this"},
		})); err != nil {
			t.Fatal(err)
		}
		if got := feedbackOn(t, ca, b.ManifestConfigs[2]); !maps.Equal(got, map[string]string{render.FeedbackCA: certPEM}) {
			t.Errorf("feedback %v, want %s = the PEM under ca.crt", got, render.FeedbackCA)
		}
	})

	t.Run("a revocation, done", func(t *testing.T) {
		r, err := render.CertificateRevocation(hcpNamespace, "revocation-1")
		if err != nil {
			t.Fatal(err)
		}
		crr := framework.HyperShiftExample(t, examples, "CertificateRevocationRequest")
		crr.Object["status"] = map[string]any{
			"revocationTimestamp": "2026-11-29T12:00:00Z",
			"previousSigner":      map[string]any{"name": "abc"},
			"conditions": []any{
				map[string]any{"type": "NewCertificatesTrusted", "status": "True", "reason": "AsExpected", "message": "trusted"},
				map[string]any{"type": "PreviousCertificatesRevoked", "status": "True", "reason": "AsExpected", "message": "Previous signer certificate revoked."},
			},
		}
		want := map[string]string{
			render.FeedbackPreviousCertificatesRevoked:        "True",
			render.FeedbackPreviousCertificatesRevokedMessage: "Previous signer certificate revoked.",
			render.FeedbackRevocationTimestamp:                "2026-11-29T12:00:00Z",
		}
		if got := feedbackOn(t, crr, r.ManifestConfigs[0]); !maps.Equal(got, want) {
			t.Errorf("feedback %v, want %v", got, want)
		}
	})
}

// TestHyperShiftAcceptsBreakglassBundles creates the break-glass and revocation bundles on a
// real kube-apiserver with the HyperShift CRDs, strictly, and has the agent apply them over
// that, twice. The HyperShift simulator then approves and signs the CSR, publishes the root CA
// and walks the revocation, and the feedback rules must read all of it. Deleting the credential's
// bundle deletes the CSR and the approval and leaves the root CA.
func TestHyperShiftAcceptsBreakglassBundles(t *testing.T) {
	mc := framework.StartManagementCluster(t)
	applier, err := agent.NewApplier(mc.Config)
	if err != nil {
		t.Fatal(err)
	}
	hypershiftsim.StartForTest(t, mc.Config, hypershiftsim.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// A HostedCluster gives the simulator a control plane, with its namespace and root CA.
	c := minimalCluster("customer", "breakglass", uuid.NewString())
	cluster, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applier.Apply(ctx, uuid.NewString(), 1, cluster); err != nil {
		t.Fatal(err)
	}
	namespace := render.ControlPlaneNamespace(render.DefaultEnvironment, c)
	rootCA := waitForConfigMap(ctx, t, mc, namespace, render.RootCAConfigMapName)
	if rootCA.Data["ca.crt"] == "" {
		t.Fatalf("the root CA ConfigMap has no ca.crt: %v", rootCA.Data)
	}

	credential, err := render.BreakglassCredential(namespace, "system-admin-credential-1", breakglassCSR(t), 3600)
	if err != nil {
		t.Fatal(err)
	}
	revocation, err := render.CertificateRevocation(namespace, "system-admin-credential-revocation-1")
	if err != nil {
		t.Fatal(err)
	}
	// The root CA is HyperShift's to create; what the service writes must pass the strict check.
	written := *credential
	written.Manifests, written.ManifestConfigs = credential.Manifests[:2], credential.ManifestConfigs[:2]
	for _, b := range []*protocol.ManifestBundle{&written, revocation} {
		if err := createStrictly(ctx, mc, b); err != nil {
			t.Fatal(err)
		}
	}
	credentialID, revocationID := uuid.NewString(), uuid.NewString()
	for _, generation := range []int64{1, 2} {
		for id, b := range map[string]*protocol.ManifestBundle{credentialID: credential, revocationID: revocation} {
			results, err := applier.Apply(ctx, id, generation, b)
			if err != nil {
				t.Fatalf("the agent applying generation %d: %v", generation, err)
			}
			for _, r := range results {
				if r.Err != nil {
					t.Errorf("the agent applying %s %s: %v", r.Meta.Kind, r.Meta.Name, r.Err)
				}
			}
		}
	}

	csr := waitForSignedCSR(ctx, t, mc, "system-admin-credential-1")
	signed := waitForFeedback(ctx, t, mc, credential, 0, render.FeedbackCertificate, base64.StdEncoding.EncodeToString(csr.Status.Certificate))
	if got := feedbackString(signed, render.FeedbackCSRApproved); got != "True" {
		t.Errorf("%s = %q, want True", render.FeedbackCSRApproved, got)
	}
	waitForFeedback(ctx, t, mc, credential, 2, render.FeedbackCA, rootCA.Data["ca.crt"])

	revoked := waitForFeedback(ctx, t, mc, revocation, 0, render.FeedbackPreviousCertificatesRevoked, "True")
	if _, err := time.Parse(time.RFC3339, feedbackString(revoked, render.FeedbackRevocationTimestamp)); err != nil {
		t.Errorf("%s: %v", render.FeedbackRevocationTimestamp, err)
	}
	if feedbackString(revoked, render.FeedbackPreviousCertificatesRevokedMessage) == "" {
		t.Errorf("%s is not reported", render.FeedbackPreviousCertificatesRevokedMessage)
	}

	if err := applier.Delete(ctx, credentialID, credential); err != nil {
		t.Fatal(err)
	}
	// With no garbage collector here, a foreground delete stays pending: being deleted is enough.
	csr, err = mc.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, "system-admin-credential-1", metav1.GetOptions{})
	if (err == nil && csr.DeletionTimestamp == nil) || (err != nil && !apierrors.IsNotFound(err)) {
		t.Errorf("deleting the bundle left the CSR (%v)", err)
	}
	approval, err := mc.Dynamic.Resource(hypershiftsim.CertificateSigningRequestApprovalResource).Namespace(namespace).
		Get(ctx, "system-admin-credential-1", metav1.GetOptions{})
	if (err == nil && approval.GetDeletionTimestamp() == nil) || (err != nil && !apierrors.IsNotFound(err)) {
		t.Errorf("deleting the bundle left the approval (%v)", err)
	}
	cm, err := mc.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, render.RootCAConfigMapName, metav1.GetOptions{})
	if err != nil || cm.DeletionTimestamp != nil || cm.Data["ca.crt"] != rootCA.Data["ca.crt"] {
		t.Errorf("the root CA after the delete: %v, %v; want it as HyperShift wrote it", cm, err)
	}
}

// waitForSignedCSR waits until the CSR has a certificate and returns it.
func waitForSignedCSR(ctx context.Context, t *testing.T, mc *framework.ManagementCluster, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		csr, err = mc.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(csr.Status.Certificate) > 0, err
	})
	if err != nil {
		t.Fatalf("waiting for the CSR %s to be signed: %v", name, err)
	}
	if block, _ := pem.Decode(csr.Status.Certificate); block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("the CSR %s has no PEM certificate: %q", name, csr.Status.Certificate)
	}
	return csr
}

func waitForConfigMap(ctx context.Context, t *testing.T, mc *framework.ManagementCluster, namespace, name string) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		cm, err = mc.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
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

// breakglassCSR is a CSR as a customer makes one for a break-glass credential.
func breakglassCSR(t *testing.T) []byte {
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
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
