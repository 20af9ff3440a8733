// Package credentialrevocation revokes the break-glass credentials of an HCPCluster: a Secondary adapter
// of the bundle reconciler, next to the cluster's own delivery. While the cluster's RevokingCredentials
// condition is True (hcpclusters/revokecredentials set it), a HyperShift CertificateRevocationRequest for
// the customer break-glass signer class goes to the control-plane namespace. When HyperShift reports the
// previous certificates revoked, the condition turns False with reason CredentialsRevoked at that time:
// the credential controller marks every credential made before it Revoked, admission takes new requests
// again, and the request is withdrawn from the management cluster.
package credentialrevocation

import (
	"slices"
	"strconv"
	"time"

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
const Name = "credential-revocation"

// bundleSuffix follows the cluster's UID in the ID of its revocation bundle.
const bundleSuffix = "-revocation"

type adapter struct {
	client versioned.Interface
	mcs    listers.ManagementClusterLister
	env    string
}

// New returns the reconciler that revokes clusters' break-glass credentials; environment names the
// service instance, as in render.Options.
func New(client versioned.Interface, clusters informers.HCPClusterInformer, mcs informers.ManagementClusterInformer,
	publisher bundle.Publisher, environment string) (*bundle.Reconciler[*v1alpha1.HCPCluster], error) {
	if environment == "" {
		environment = render.DefaultEnvironment
	}
	a := &adapter{client: client, mcs: mcs.Lister(), env: environment}
	return bundle.New[*v1alpha1.HCPCluster](Name, clusters.Informer(), a, publisher, mcs.Informer().HasSynced)
}

func (a *adapter) BundleSuffix() string { return bundleSuffix }

func (a *adapter) Client(namespace string) bundle.Client[*v1alpha1.HCPCluster] {
	return a.client.HcpV1alpha1().HCPClusters(namespace)
}

func (a *adapter) Consumer(cluster *v1alpha1.HCPCluster) (string, error) {
	return placement.Consumer(a.mcs, cluster)
}

// Plan delivers the revocation request of a cluster whose revocation was asked for, and withdraws it
// otherwise.
func (a *adapter) Plan(cluster *v1alpha1.HCPCluster, consumer string) (bundle.Plan[*v1alpha1.HCPCluster], error) {
	requested := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
	if requested == nil || requested.Status != metav1.ConditionTrue {
		return bundle.Plan[*v1alpha1.HCPCluster]{Withdraw: true}, nil
	}
	if consumer == "" {
		return bundle.Plan[*v1alpha1.HCPCluster]{Wait: func(c *v1alpha1.HCPCluster) {
			setRevoking(c, metav1.ConditionFalse, "NotPlaced", "the cluster is not placed on a management cluster: it has no credentials to revoke")
		}}, nil
	}
	// One request per revocation: a second one is a new object, not an update of the first.
	name := "break-glass-" + strconv.FormatInt(requested.LastTransitionTime.Unix(), 10)
	hcpNamespace := render.ControlPlaneNamespace(a.env, cluster)
	return bundle.Plan[*v1alpha1.HCPCluster]{
		Input:  name,
		Render: func() (*protocol.ManifestBundle, error) { return render.CertificateRevocation(hcpNamespace, name) },
		RenderFailed: func(c *v1alpha1.HCPCluster, err error) {
			setRevoking(c, metav1.ConditionFalse, "RenderFailed", err.Error())
		},
		Report: func(c *v1alpha1.HCPCluster, report source.BundleStatus, reported bool) time.Duration {
			progress(c, report, reported, consumer, name)
			return 0
		},
	}, nil
}

// progress reads the agent's report of the revocation request called name: a report of an earlier
// request, whose bundle the agent held until this one replaced it, says nothing of this one.
func progress(c *v1alpha1.HCPCluster, report source.BundleStatus, reported bool, consumer, name string) {
	d := bundle.Outcome(report, reported, c.Generation, consumer, "the certificate revocation request")
	if d.Failed {
		setRevoking(c, metav1.ConditionTrue, v1alpha1.RevocationRequested, d.Message+"; retrying")
		return
	}
	if !d.Feedback || report.Status == nil {
		setRevoking(c, metav1.ConditionTrue, v1alpha1.RevocationRequested, d.Message)
		return
	}
	if !reportsOn(report.Status, name) {
		setRevoking(c, metav1.ConditionTrue, v1alpha1.RevocationRequested, "the revocation request is on its way to "+consumer)
		return
	}
	crr := bundle.FeedbackOf(report.Status, "CertificateRevocationRequest", name)
	if crr[render.FeedbackPreviousCertificatesRevoked] == string(metav1.ConditionTrue) {
		message := "every break-glass certificate issued before this time no longer works"
		if at := crr[render.FeedbackRevocationTimestamp]; at != "" {
			message = "every break-glass certificate issued before " + at + " no longer works"
		}
		setRevoking(c, metav1.ConditionFalse, v1alpha1.CredentialsRevoked, message)
		return
	}
	message := "HyperShift is replacing the break-glass signer on " + consumer
	if m := crr[render.FeedbackPreviousCertificatesRevokedMessage]; m != "" {
		message += ": " + m
	}
	setRevoking(c, metav1.ConditionTrue, v1alpha1.RevocationRequested, message)
}

// setRevoking sets RevokingCredentials. While True its message changes but its transition time, which
// names the request, does not.
func setRevoking(c *v1alpha1.HCPCluster, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&c.Status.Conditions, c.Generation, v1alpha1.ConditionRevokingCredentials, status, reason, message)
}

// reportsOn says whether a report is about the CertificateRevocationRequest called name.
func reportsOn(status *protocol.ManifestBundleStatus, name string) bool {
	return slices.ContainsFunc(status.ResourceStatus, func(r protocol.ManifestCondition) bool {
		return r.ResourceMeta.Kind == "CertificateRevocationRequest" && r.ResourceMeta.Name == name
	})
}
