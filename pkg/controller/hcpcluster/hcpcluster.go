// Package hcpcluster delivers each placed HCPCluster to its management cluster: the cluster's adapter of
// the bundle reconciler. It renders the cluster's namespace, pull secret and HostedCluster once the
// cluster's version is resolved for its generation, turns the HostedCluster's feedback into the cluster's
// status, fails a cluster that does not come up within its deadline, and, when a cluster is deleted,
// deletes its node pools, external auths and credentials before its bundle. The cluster's ExternalAuth
// is an input of its HostedCluster: a change of it renders the bundle again.
package hcpcluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/placement"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/versionresolution"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// Name names the reconciler in logs and in the managed fields of what it writes.
const Name = "hcpcluster-delivery"

// Options tune the delivery of clusters.
type Options struct {
	Render render.Options
	// CreateDeadline is how long a cluster may take to become Succeeded, from when nothing held its delivery
	// back (deliverableSince), before it is Failed.
	CreateDeadline time.Duration
	// Azure says the service provisions the clusters' Azure side: a cluster is delivered only once its
	// identities are valid for its generation and its managed resource group is ready.
	Azure bool
}

// adapter delivers HCPClusters.
type adapter struct {
	client    versioned.Interface
	mcs       listers.ManagementClusterLister
	nodePools listers.NodePoolLister
	auths     listers.ExternalAuthLister
	creds     listers.BreakglassCredentialLister
	catalog   *versioncatalog.Catalog
	opts      Options
	now       func() time.Time
}

// New returns the reconciler that delivers HCPClusters.
func New(client versioned.Interface, clusters informers.HCPClusterInformer, mcs informers.ManagementClusterInformer,
	nodePools informers.NodePoolInformer, auths informers.ExternalAuthInformer, creds informers.BreakglassCredentialInformer,
	catalog *versioncatalog.Catalog, publisher bundle.Publisher, opts Options) (*bundle.Reconciler[*v1alpha1.HCPCluster], error) {
	if opts.CreateDeadline <= 0 {
		opts.CreateDeadline = time.Hour
	}
	a := &adapter{
		client: client, mcs: mcs.Lister(), nodePools: nodePools.Lister(), auths: auths.Lister(), creds: creds.Lister(),
		catalog: catalog, opts: opts, now: time.Now,
	}
	r, err := bundle.New[*v1alpha1.HCPCluster](Name, clusters.Informer(), a, publisher,
		mcs.Informer().HasSynced, nodePools.Informer().HasSynced, auths.Informer().HasSynced, creds.Informer().HasSynced)
	if err != nil {
		return nil, err
	}
	// A change of an external auth is a change of its cluster's HostedCluster.
	enqueueCluster := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if ea, ok := obj.(*v1alpha1.ExternalAuth); ok {
			r.EnqueueKey(ea.Namespace + "/" + ea.Spec.ClusterName)
		}
	}
	if _, err := auths.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueCluster,
		UpdateFunc: func(_, obj any) { enqueueCluster(obj) },
		DeleteFunc: enqueueCluster,
	}); err != nil {
		return nil, err
	}
	return r, nil
}

func (a *adapter) Client(namespace string) bundle.Client[*v1alpha1.HCPCluster] {
	return a.client.HcpV1alpha1().HCPClusters(namespace)
}

// Consumer returns the consumer a cluster is placed on; empty while it is not placed.
func (a *adapter) Consumer(cluster *v1alpha1.HCPCluster) (string, error) {
	return placement.Consumer(a.mcs, cluster)
}

// Plan renders a placed cluster once its version is resolved for this very generation: what is
// published for a generation must not change, and an upgrade changes generation and version at once.
func (a *adapter) Plan(cluster *v1alpha1.HCPCluster, consumer string) (bundle.Plan[*v1alpha1.HCPCluster], error) {
	plan := bundle.Plan[*v1alpha1.HCPCluster]{
		RenderFailed: func(cluster *v1alpha1.HCPCluster, err error) {
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionFalse, clusterstatus.ReasonRenderFailed, err.Error())
			cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		},
		Report: func(cluster *v1alpha1.HCPCluster, report source.BundleStatus, reported bool) time.Duration {
			return a.report(cluster, report, reported, consumer)
		},
	}
	// Only the first delivery waits: a cluster already out there keeps getting its new generations. Its
	// later checks show in their conditions.
	if a.opts.Azure && !clusterstatus.Published(cluster) {
		if waiting := awaitedAzure(cluster); waiting != "" {
			plan.Wait = func(cluster *v1alpha1.HCPCluster) {
				clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonAwaitingAzure,
					"the cluster is delivered once "+waiting)
			}
			return plan, nil
		}
		// Nothing reports on an unplaced cluster; once Azure is ready, its Delivered is gone, as that of a
		// cluster that never waited for it, and Placed says what it waits for.
		if delivered := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionDelivered); consumer == "" &&
			delivered != nil && delivered.Reason == v1alpha1.ReasonAwaitingAzure {
			plan.Wait = func(cluster *v1alpha1.HCPCluster) {
				meta.RemoveStatusCondition(&cluster.Status.Conditions, v1alpha1.ConditionDelivered)
			}
			return plan, nil
		}
	}
	resolved := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
	if resolved == nil || resolved.Status != metav1.ConditionTrue || resolved.ObservedGeneration != cluster.Generation {
		return plan, nil
	}
	image, ok := versionresolution.ReleaseImage(cluster, a.catalog)
	if !ok {
		return plan, nil
	}
	auth, err := a.externalAuth(cluster)
	if err != nil {
		return plan, err
	}
	plan.Input = image
	if auth != nil {
		plan.Input += fmt.Sprintf(" auth=%s/%d", auth.UID, auth.Generation)
	}
	plan.Render = func() (*protocol.ManifestBundle, error) {
		return render.ClusterBundle(render.ClusterInput{Cluster: cluster, ReleaseImage: image, ExternalAuth: auth}, a.opts.Render)
	}
	return plan, nil
}

// awaitedAzure says what of the cluster's Azure side delivery waits for; empty when nothing.
func awaitedAzure(cluster *v1alpha1.HCPCluster) string {
	// A cluster created while the service provisioned no Azure says AzureDisabled: it was never checked.
	if identities := clusterstatus.AzureChecked(cluster, v1alpha1.ConditionAzureIdentitiesValid); identities == nil || identities.ObservedGeneration != cluster.Generation {
		return "its managed identities are valid (" + v1alpha1.ConditionAzureIdentitiesValid + ")"
	}
	if clusterstatus.AzureChecked(cluster, v1alpha1.ConditionManagedResourceGroupReady) == nil {
		return "its managed resource group is ready (" + v1alpha1.ConditionManagedResourceGroupReady + ")"
	}
	return ""
}

// externalAuth returns the identity provider the cluster's HostedCluster carries: its live ExternalAuth,
// nil when it has none or it is being deleted. Storage keeps it to one; were there two (a claim lost
// with its etcd), the oldest is the one.
func (a *adapter) externalAuth(cluster *v1alpha1.HCPCluster) (*v1alpha1.ExternalAuth, error) {
	all, err := a.auths.ExternalAuths(cluster.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var oldest *v1alpha1.ExternalAuth
	for _, ea := range all {
		if ea.Spec.ClusterName != cluster.Name || ea.DeletionTimestamp != nil {
			continue
		}
		if oldest == nil || ea.CreationTimestamp.Before(&oldest.CreationTimestamp) ||
			ea.CreationTimestamp.Equal(&oldest.CreationTimestamp) && ea.Name < oldest.Name {
			oldest = ea
		}
	}
	return oldest, nil
}

// report turns the agent's last report into the cluster's status, fails a cluster past its creation
// deadline, and returns when to look again for that deadline or the end of the agent's retries.
func (a *adapter) report(cluster *v1alpha1.HCPCluster, report source.BundleStatus, reported bool, consumer string) time.Duration {
	recheck := applyReport(cluster, report, reported, consumer, a.opts.Render)
	if cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateSucceeded || everSucceeded(cluster) {
		return recheck
	}
	// Checked after the report: the agent's Progressing must not hide why it failed.
	left := a.opts.CreateDeadline - a.now().Sub(deliverableSince(cluster))
	if left <= 0 {
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "DeadlineExceeded",
			fmt.Sprintf("the cluster did not become available within %v", a.opts.CreateDeadline))
		return 0
	}
	if recheck > 0 && recheck < left {
		return recheck
	}
	return left + time.Second
}

// deliverableSince is when the create deadline starts: when nothing held the cluster's delivery back any
// more, the latest of its creation, its placement, its version's resolution and its Azure side's readiness.
// Waiting for capacity, or for the customer to fix an identity, is not the service's time to bring it up.
func deliverableSince(cluster *v1alpha1.HCPCluster) time.Time {
	since := cluster.CreationTimestamp.Time
	for _, conditionType := range []string{v1alpha1.ConditionPlaced, v1alpha1.ConditionVersionResolved,
		v1alpha1.ConditionAzureIdentitiesValid, v1alpha1.ConditionManagedResourceGroupReady} {
		if c := meta.FindStatusCondition(cluster.Status.Conditions, conditionType); c != nil && c.Status == metav1.ConditionTrue &&
			c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return since
}

// everSucceeded says whether the cluster's control plane once completed a version: a later upgrade
// that takes long is not a failed creation.
func everSucceeded(cluster *v1alpha1.HCPCluster) bool {
	for _, h := range cluster.Status.Version.History {
		if h.State == "Completed" {
			return true
		}
	}
	return false
}

// Cleanup deletes the node pools, external auths and break-glass credentials of a deleted cluster.
func (a *adapter) Cleanup(ctx context.Context, cluster *v1alpha1.HCPCluster) error {
	pools, err := a.nodePools.NodePools(cluster.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, np := range pools {
		if np.Spec.ClusterName != cluster.Name || np.DeletionTimestamp != nil {
			continue
		}
		err := a.client.HcpV1alpha1().NodePools(np.Namespace).Delete(ctx, np.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &np.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	auths, err := a.auths.ExternalAuths(cluster.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, ea := range auths {
		if ea.Spec.ClusterName != cluster.Name || ea.DeletionTimestamp != nil {
			continue
		}
		err := a.client.HcpV1alpha1().ExternalAuths(ea.Namespace).Delete(ctx, ea.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ea.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	creds, err := a.creds.BreakglassCredentials(cluster.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, cred := range creds {
		if cred.Spec.ClusterName != cluster.Name || cred.DeletionTimestamp != nil {
			continue
		}
		err := a.client.HcpV1alpha1().BreakglassCredentials(cred.Namespace).Delete(ctx, cred.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cred.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}
