// Package breakglasscredential issues break-glass credentials: the BreakglassCredential adapter of the
// bundle reconciler. A Pending credential of a Succeeded cluster is delivered to the cluster's management
// cluster as a CertificateSigningRequest to the control plane's customer break-glass signer, with the
// approval HyperShift asks for; the signed certificate comes back as feedback and the credential is
// Issued. Once issued or failed the bundle is withdrawn, so no CSRs pile up there.
//
// The credential then lives by the clock: Expired at its certificate's NotAfter, Revoked when its
// cluster's credentials are revoked after it was made, and deleted a retention period after either.
package breakglasscredential

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/conditions"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/placement"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// Name names the reconciler in logs and in the managed fields of what it writes.
const Name = "breakglasscredential-delivery"

// Options are the credential lifecycle's clocks.
type Options struct {
	// IssueTimeout is how long a credential may wait for its certificate before it is Failed.
	IssueTimeout time.Duration
	// Retention is how long an Expired, Revoked or Failed credential is kept before it is deleted.
	Retention time.Duration
	// Environment names the service instance, as in render.Options.
	Environment string
}

// DefaultIssueTimeout and DefaultRetention are the clocks when Options leave them out.
const (
	DefaultIssueTimeout = 10 * time.Minute
	DefaultRetention    = 48 * time.Hour
)

// adapter delivers BreakglassCredentials.
type adapter struct {
	client   versioned.Interface
	clusters listers.HCPClusterLister
	mcs      listers.ManagementClusterLister
	opts     Options
	now      func() time.Time
}

// New returns the reconciler that issues BreakglassCredentials.
func New(client versioned.Interface, creds informers.BreakglassCredentialInformer, clusters informers.HCPClusterInformer,
	mcs informers.ManagementClusterInformer, publisher bundle.Publisher, opts Options) (*bundle.Reconciler[*v1alpha1.BreakglassCredential], error) {
	if opts.IssueTimeout <= 0 {
		opts.IssueTimeout = DefaultIssueTimeout
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Environment == "" {
		opts.Environment = render.DefaultEnvironment
	}
	a := &adapter{client: client, clusters: clusters.Lister(), mcs: mcs.Lister(), opts: opts, now: time.Now}
	r, err := bundle.New[*v1alpha1.BreakglassCredential](Name, creds.Informer(), a, publisher,
		clusters.Informer().HasSynced, mcs.Informer().HasSynced)
	if err != nil {
		return nil, err
	}
	// A credential waits for its cluster, and is revoked by a revocation of its cluster's credentials.
	if err := r.FollowChanges(clusters.Informer(), clusterKeyOf); err != nil {
		return nil, err
	}
	return r, nil
}

// clusterKeyOf is the key of the credential's cluster, <namespace>/<spec.clusterName>.
func clusterKeyOf(c *v1alpha1.BreakglassCredential) string {
	return c.Namespace + "/" + c.Spec.ClusterName
}

func (a *adapter) Client(namespace string) bundle.Client[*v1alpha1.BreakglassCredential] {
	return a.client.HcpV1alpha1().BreakglassCredentials(namespace)
}

// Consumer returns the consumer the credential's cluster is placed on; empty once the cluster is gone,
// since the cluster's delete took its control plane, and the credential's approval, with it.
func (a *adapter) Consumer(c *v1alpha1.BreakglassCredential) (string, error) {
	return placement.ClusterConsumer(a.clusters, a.mcs, c.Namespace, c.Spec.ClusterName)
}

// Plan issues a Pending credential of a Succeeded cluster, and lets every other one live by the clock.
func (a *adapter) Plan(c *v1alpha1.BreakglassCredential, consumer string) (bundle.Plan[*v1alpha1.BreakglassCredential], error) {
	now := a.now()
	cluster, err := a.clusters.HCPClusters(c.Namespace).Get(c.Spec.ClusterName)
	if err != nil && !apierrors.IsNotFound(err) {
		return bundle.Plan[*v1alpha1.BreakglassCredential]{}, err
	}
	if cluster == nil {
		cluster = &v1alpha1.HCPCluster{}
	}
	if terminal(c.Status.Phase) || revoked(c, cluster) {
		if terminal(c.Status.Phase) && c.Status.Phase != v1alpha1.BreakglassCredentialPhaseIssued && a.retained(c, now) <= 0 {
			return bundle.Plan[*v1alpha1.BreakglassCredential]{Delete: true}, nil
		}
		return bundle.Plan[*v1alpha1.BreakglassCredential]{
			Withdraw: true,
			Report: func(c *v1alpha1.BreakglassCredential, _ source.BundleStatus, _ bool) time.Duration {
				return a.live(c, cluster, now)
			},
		}, nil
	}
	if deadline := c.CreationTimestamp.Add(a.opts.IssueTimeout); !now.Before(deadline) {
		return bundle.Plan[*v1alpha1.BreakglassCredential]{Wait: func(c *v1alpha1.BreakglassCredential) {
			fail(c, "IssueTimedOut", fmt.Sprintf("the management cluster did not sign the certificate within %s; create a new credential", a.opts.IssueTimeout))
		}}, nil
	}
	if why := clusterNotReady(c, cluster, consumer); why != "" {
		return bundle.Plan[*v1alpha1.BreakglassCredential]{Wait: func(c *v1alpha1.BreakglassCredential) {
			pending(c, "WaitingForCluster", why)
		}}, nil
	}
	hcpNamespace := render.ControlPlaneNamespace(a.opts.Environment, cluster)
	expiration := int64(86400)
	if c.Spec.ExpirationSeconds != nil {
		expiration = *c.Spec.ExpirationSeconds
	}
	return bundle.Plan[*v1alpha1.BreakglassCredential]{
		Render: func() (*protocol.ManifestBundle, error) {
			return render.BreakglassCredential(hcpNamespace, CSRName(c), []byte(c.Spec.CertificateSigningRequest), expiration)
		},
		RenderFailed: func(c *v1alpha1.BreakglassCredential, err error) { fail(c, "RenderFailed", err.Error()) },
		Report: func(c *v1alpha1.BreakglassCredential, report source.BundleStatus, reported bool) time.Duration {
			issue(c, report, reported, consumer)
			if c.Status.Phase == v1alpha1.BreakglassCredentialPhasePending {
				return c.CreationTimestamp.Add(a.opts.IssueTimeout).Sub(now)
			}
			return a.live(c, cluster, now)
		},
	}, nil
}

// CSRName is the name of a credential's CertificateSigningRequest on the management cluster, where CSRs
// of every hosted cluster meet, and of its approval.
func CSRName(c *v1alpha1.BreakglassCredential) string { return "break-glass-" + string(c.UID) }

func terminal(phase v1alpha1.BreakglassCredentialPhase) bool {
	switch phase {
	case v1alpha1.BreakglassCredentialPhaseIssued, v1alpha1.BreakglassCredentialPhaseFailed,
		v1alpha1.BreakglassCredentialPhaseExpired, v1alpha1.BreakglassCredentialPhaseRevoked:
		return true
	}
	return false
}

// revoked says whether a revocation of the cluster's credentials completed after c was made: its
// certificate, issued or to be, was signed by the signer the revocation replaced.
func revoked(c *v1alpha1.BreakglassCredential, cluster *v1alpha1.HCPCluster) bool {
	cond := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
	return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == v1alpha1.CredentialsRevoked &&
		c.CreationTimestamp.Before(&cond.LastTransitionTime)
}

// live moves a credential that was issued along the clock, and returns when to look again.
func (a *adapter) live(c *v1alpha1.BreakglassCredential, cluster *v1alpha1.HCPCluster, now time.Time) time.Duration {
	switch {
	case c.Status.Phase == v1alpha1.BreakglassCredentialPhaseExpired, c.Status.Phase == v1alpha1.BreakglassCredentialPhaseRevoked,
		c.Status.Phase == v1alpha1.BreakglassCredentialPhaseFailed:
	case revoked(c, cluster):
		c.Status.Phase = v1alpha1.BreakglassCredentialPhaseRevoked
		cond := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
		setIssued(c, metav1.ConditionFalse, "Revoked", fmt.Sprintf("the credentials of cluster %s were revoked at %s",
			cluster.Name, cond.LastTransitionTime.UTC().Format(time.RFC3339)))
	case c.Status.ExpirationTimestamp != nil && !now.Before(c.Status.ExpirationTimestamp.Time):
		c.Status.Phase = v1alpha1.BreakglassCredentialPhaseExpired
		setIssued(c, metav1.ConditionFalse, "Expired", "the certificate expired at "+c.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
	case c.Status.ExpirationTimestamp != nil:
		return c.Status.ExpirationTimestamp.Sub(now)
	default:
		return 0
	}
	return max(a.retained(c, now), time.Second)
}

// retained is how much longer an ended credential is kept, from when its Issued condition last changed.
func (a *adapter) retained(c *v1alpha1.BreakglassCredential, now time.Time) time.Duration {
	ended := c.CreationTimestamp.Time
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionIssued); cond != nil {
		ended = cond.LastTransitionTime.Time
	}
	return ended.Add(a.opts.Retention).Sub(now)
}

// clusterNotReady says why a credential cannot be issued yet; empty when it can.
func clusterNotReady(c *v1alpha1.BreakglassCredential, cluster *v1alpha1.HCPCluster, consumer string) string {
	switch {
	case cluster.Name == "":
		return fmt.Sprintf("cluster %s does not exist", c.Spec.ClusterName)
	case cluster.DeletionTimestamp != nil:
		return fmt.Sprintf("cluster %s is being deleted", cluster.Name)
	case cluster.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded:
		return fmt.Sprintf("cluster %s is %s, not Succeeded", cluster.Name, cluster.Status.ProvisioningState)
	case consumer == "":
		return fmt.Sprintf("cluster %s is not placed on a management cluster", cluster.Name)
	case meta.IsStatusConditionTrue(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials):
		return fmt.Sprintf("the credentials of cluster %s are being revoked", cluster.Name)
	case c.Spec.CertificateSigningRequest == "":
		return "the credential has no certificate signing request yet"
	}
	return ""
}

// issue reads the agent's report of the credential's CSR.
func issue(c *v1alpha1.BreakglassCredential, report source.BundleStatus, reported bool, consumer string) {
	d := bundle.Outcome(report, reported, c.Generation, consumer, "the certificate signing request")
	switch {
	case d.Failed:
		fail(c, "ApplyFailed", d.Message)
		return
	case !d.Feedback || report.Status == nil:
		pending(c, "WaitingForSigner", d.Message)
		return
	}
	csr := bundle.Feedback(report.Status, "CertificateSigningRequest")
	switch {
	case csr[render.FeedbackCSRDenied] == string(metav1.ConditionTrue):
		fail(c, "Denied", "the signer denied the certificate signing request: "+csr[render.FeedbackCSRDeniedMessage])
	case csr[render.FeedbackCSRFailed] == string(metav1.ConditionTrue):
		fail(c, "SigningFailed", "the signer could not sign the certificate signing request: "+csr[render.FeedbackCSRFailedMessage])
	case csr[render.FeedbackCertificate] != "":
		certPEM, notAfter, err := signedCertificate(csr[render.FeedbackCertificate])
		if err != nil {
			fail(c, "SigningFailed", "the signer returned a certificate that does not parse: "+err.Error())
			return
		}
		c.Status.Phase = v1alpha1.BreakglassCredentialPhaseIssued
		c.Status.Certificate = certPEM
		c.Status.ExpirationTimestamp = &metav1.Time{Time: notAfter}
		c.Status.CertificateAuthority = bundle.Feedback(report.Status, "ConfigMap")[render.FeedbackCA]
		setIssued(c, metav1.ConditionTrue, "Issued", "the certificate is signed and valid until "+notAfter.UTC().Format(time.RFC3339))
	case csr[render.FeedbackCSRApproved] == string(metav1.ConditionTrue):
		pending(c, "WaitingForSigner", "the certificate signing request is approved; waiting for the signer of "+consumer)
	default:
		pending(c, "WaitingForApproval", "the certificate signing request is on "+consumer+"; waiting for HyperShift to approve it")
	}
}

// signedCertificate decodes the CSR's status.certificate as the agent reports it (the API's base64 of a
// []byte), and returns its PEM and the first certificate's NotAfter.
func signedCertificate(reported string) (string, time.Time, error) {
	raw, err := base64.StdEncoding.DecodeString(reported)
	if err != nil {
		return "", time.Time{}, err
	}
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", time.Time{}, errors.New(`not a PEM block of type "CERTIFICATE"`)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", time.Time{}, err
	}
	return string(raw), cert.NotAfter, nil
}

func pending(c *v1alpha1.BreakglassCredential, reason, message string) {
	c.Status.Phase = v1alpha1.BreakglassCredentialPhasePending
	setIssued(c, metav1.ConditionFalse, reason, message)
}

func fail(c *v1alpha1.BreakglassCredential, reason, message string) {
	c.Status.Phase = v1alpha1.BreakglassCredentialPhaseFailed
	setIssued(c, metav1.ConditionFalse, reason, message)
}

func setIssued(c *v1alpha1.BreakglassCredential, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&c.Status.Conditions, c.Generation, v1alpha1.ConditionIssued, status, reason, message)
}
