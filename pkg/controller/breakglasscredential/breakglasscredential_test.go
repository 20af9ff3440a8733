package breakglasscredential

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const consumer = "mc-1"

// world is a Succeeded cluster placed on mc-1 and one credential for it, made now unless changed.
type world struct {
	cluster    *v1alpha1.HCPCluster
	credential *v1alpha1.BreakglassCredential
}

func newWorld(t *testing.T) world {
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	cluster.Status.ManagementCluster = consumer
	cluster.Status.ClusterID = "11111111-2222-3333-4444-555555555555"
	credential := fixtures.BreakglassCredential("ns", "dev", "oncall")
	credential.UID, credential.Generation = types.UID("uid-1"), 1
	credential.CreationTimestamp = metav1.Now()
	credential.Finalizers = []string{v1alpha1.DeliveryFinalizer}
	credential.Spec.CertificateSigningRequest = string(testCSR(t))
	return world{cluster: cluster, credential: credential}
}

type harness struct {
	r           *bundle.Reconciler[*v1alpha1.BreakglassCredential]
	client      *fake.Clientset
	publisher   *controllertest.RecordingPublisher
	credentials interface{ Update(any) error }
}

// start fills the informers and the fake clientset with w, by hand: the tests call Sync themselves.
func start(t *testing.T, w world) *harness {
	t.Helper()
	mc := fixtures.ManagementCluster(consumer)
	client := fake.NewClientset(mc, w.cluster, w.credential)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	p := controllertest.NewRecordingPublisher()
	r, err := New(client, hcp.BreakglassCredentials(), hcp.HCPClusters(), hcp.ManagementClusters(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for indexer, obj := range map[interface{ Add(any) error }]runtime.Object{
		hcp.ManagementClusters().Informer().GetIndexer():    mc,
		hcp.HCPClusters().Informer().GetIndexer():           w.cluster,
		hcp.BreakglassCredentials().Informer().GetIndexer(): w.credential,
	} {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return &harness{r: r, client: client, publisher: p, credentials: hcp.BreakglassCredentials().Informer().GetIndexer()}
}

// sync syncs the credential as stored, the informer seeing what the last sync wrote.
func (h *harness) sync(t *testing.T) *v1alpha1.BreakglassCredential {
	t.Helper()
	stored, err := h.client.HcpV1alpha1().BreakglassCredentials("ns").Get(context.Background(), "oncall", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := h.credentials.Update(stored); err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.Sync(context.Background(), "ns/oncall"); err != nil {
		t.Fatal(err)
	}
	got, err := h.client.HcpV1alpha1().BreakglassCredentials("ns").Get(context.Background(), "oncall", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func issued(t *testing.T, c *v1alpha1.BreakglassCredential) *metav1.Condition {
	t.Helper()
	cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionIssued)
	if cond == nil {
		t.Fatalf("credential has no Issued condition: %+v", c.Status)
	}
	return cond
}

func TestPendingCredentialIsDeliveredAndIssuedFromTheSignedCertificate(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	c := h.sync(t)
	if c.Status.Phase != v1alpha1.BreakglassCredentialPhasePending || issued(t, c).Reason != "WaitingForSigner" {
		t.Errorf("after delivery: %s %+v, want Pending WaitingForSigner", c.Status.Phase, issued(t, c))
	}
	b := h.publisher.Bundles["uid-1"]
	if h.publisher.Applied[consumer+"/uid-1"] != 1 || b == nil {
		t.Fatalf("published %v, want the credential's bundle on %s", h.publisher.Applied, consumer)
	}
	var csr struct {
		Kind string `json:"kind"`
		Spec struct {
			SignerName string `json:"signerName"`
			Request    []byte `json:"request"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b.Manifests[0], &csr); err != nil || csr.Kind != "CertificateSigningRequest" ||
		!strings.HasSuffix(csr.Spec.SignerName, ".customer-break-glass") || string(csr.Spec.Request) != w.credential.Spec.CertificateSigningRequest {
		t.Errorf("the bundle's first manifest is not the credential's CSR to the customer break-glass signer: %v %s", err, b.Manifests[0])
	}

	cert, notAfter := testCertificate(t)
	h.publisher.Report(report(feedback("CertificateSigningRequest", render.FeedbackCSRApproved, "True",
		render.FeedbackCertificate, base64.StdEncoding.EncodeToString(cert)), feedback("ConfigMap", render.FeedbackCA, "CA PEM")))
	c = h.sync(t)
	if c.Status.Phase != v1alpha1.BreakglassCredentialPhaseIssued || c.Status.Certificate != string(cert) ||
		c.Status.CertificateAuthority != "CA PEM" || !c.Status.ExpirationTimestamp.Time.Equal(notAfter) || issued(t, c).Status != metav1.ConditionTrue {
		t.Errorf("after the signed certificate came back: %+v, want Issued with the certificate, the CA and its NotAfter %v", c.Status, notAfter)
	}

	// Issued: the CSR leaves the management cluster; the finalizer goes once the agent says it did.
	h.sync(t)
	if !h.publisher.Deleted.Has(consumer + "/uid-1") {
		t.Errorf("the bundle of an issued credential was not withdrawn: deleted %v", h.publisher.Deleted)
	}
	h.publisher.Report(source.BundleStatus{Consumer: consumer, ResourceID: "uid-1", Generation: 1, Deleted: true})
	if c = h.sync(t); len(c.Finalizers) != 0 || c.Status.Phase != v1alpha1.BreakglassCredentialPhaseIssued {
		t.Errorf("after the bundle was deleted: finalizers %v, phase %s; want none, still Issued", c.Finalizers, c.Status.Phase)
	}
}

func TestCredentialFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*world)
		report *source.BundleStatus
		reason string
	}{
		{name: "denied", reason: "Denied", report: ptrTo(report(feedback("CertificateSigningRequest",
			render.FeedbackCSRDenied, "True", render.FeedbackCSRDeniedMessage, "no")))},
		{name: "signing failed", reason: "SigningFailed", report: ptrTo(report(feedback("CertificateSigningRequest",
			render.FeedbackCSRFailed, "True", render.FeedbackCSRFailedMessage, "bad usages")))},
		{name: "a certificate that does not parse", reason: "SigningFailed", report: ptrTo(report(feedback("CertificateSigningRequest",
			render.FeedbackCertificate, base64.StdEncoding.EncodeToString([]byte("not PEM")))))},
		{name: "never signed", reason: "IssueTimedOut", change: func(w *world) {
			w.credential.CreationTimestamp = metav1.NewTime(time.Now().Add(-DefaultIssueTimeout - time.Second))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.change != nil {
				tc.change(&w)
			}
			h := start(t, w)
			c := h.sync(t)
			if tc.report != nil {
				h.publisher.Report(*tc.report)
				c = h.sync(t)
			}
			if c.Status.Phase != v1alpha1.BreakglassCredentialPhaseFailed || issued(t, c).Reason != tc.reason {
				t.Errorf("phase %s, Issued %+v; want Failed, %s", c.Status.Phase, issued(t, c), tc.reason)
			}
		})
	}
}

func TestCredentialWaitsForItsCluster(t *testing.T) {
	w := newWorld(t)
	w.cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateProvisioning
	h := start(t, w)
	c := h.sync(t)
	if c.Status.Phase != v1alpha1.BreakglassCredentialPhasePending || issued(t, c).Reason != "WaitingForCluster" || len(h.publisher.Applied) != 0 {
		t.Errorf("credential of a Provisioning cluster: %s %+v, published %v; want Pending WaitingForCluster, nothing published",
			c.Status.Phase, issued(t, c), h.publisher.Applied)
	}
}

func TestIssuedCredentialEndsByTheClock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*world)
		phase  v1alpha1.BreakglassCredentialPhase
	}{
		{name: "expired", phase: v1alpha1.BreakglassCredentialPhaseExpired, change: func(w *world) {
			w.credential.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(-time.Second)}
		}},
		{name: "revoked after it was made", phase: v1alpha1.BreakglassCredentialPhaseRevoked, change: func(w *world) {
			w.credential.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Hour))
			w.cluster.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionRevokingCredentials, Status: metav1.ConditionFalse,
				Reason: v1alpha1.CredentialsRevoked, LastTransitionTime: metav1.Now()}}
		}},
		{name: "made after the last revocation", phase: v1alpha1.BreakglassCredentialPhaseIssued, change: func(w *world) {
			w.cluster.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionRevokingCredentials, Status: metav1.ConditionFalse,
				Reason: v1alpha1.CredentialsRevoked, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.credential.Status.Phase = v1alpha1.BreakglassCredentialPhaseIssued
			w.credential.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(time.Hour)}
			tc.change(&w)
			h := start(t, w)
			if c := h.sync(t); c.Status.Phase != tc.phase {
				t.Errorf("phase %s, want %s", c.Status.Phase, tc.phase)
			}
		})
	}
}

func TestEndedCredentialIsDeletedAfterItsRetention(t *testing.T) {
	w := newWorld(t)
	w.credential.Finalizers = nil
	w.credential.Status.Phase = v1alpha1.BreakglassCredentialPhaseExpired
	w.credential.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionIssued, Status: metav1.ConditionFalse, Reason: "Expired",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-DefaultRetention - time.Minute))}}
	h := start(t, w)
	if c := h.sync(t); c != nil {
		t.Errorf("a credential Expired longer ago than its retention is still there: %+v", c.Status)
	}
}

func ptrTo[T any](v T) *T { return &v }

// report is the agent's report of generation 1 of the credential's bundle, applied, with feedback.
func report(resources ...protocol.ManifestCondition) source.BundleStatus {
	return source.BundleStatus{Consumer: consumer, ResourceID: "uid-1", Generation: 1, SequenceID: 1, Status: &protocol.ManifestBundleStatus{
		Conditions:     []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		ResourceStatus: resources,
	}}
}

// feedback is a manifest of kind reporting string values, given as name, value, ...
func feedback(kind string, nameValues ...string) protocol.ManifestCondition {
	m := protocol.ManifestCondition{ResourceMeta: protocol.ManifestResourceMeta{Kind: kind}}
	for i := 0; i+1 < len(nameValues); i += 2 {
		m.StatusFeedback.Values = append(m.StatusFeedback.Values, protocol.FeedbackValue{Name: nameValues[i],
			Value: protocol.FieldValue{Type: protocol.ValueString, String: ptrTo(nameValues[i+1])}})
	}
	return m
}

func testCSR(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// testCertificate is a self-signed PEM certificate and its NotAfter.
func testCertificate(t *testing.T) ([]byte, time.Time) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	notAfter := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Minute),
		NotAfter: notAfter, Subject: pkix.Name{CommonName: "system:customer-break-glass:system-admin"}}, &x509.Certificate{SerialNumber: big.NewInt(1)}, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), notAfter
}
