// Package nodepool delivers each NodePool of a delivered HCPCluster to the cluster's management cluster:
// the node pool's adapter of the bundle reconciler. It renders the pool's HyperShift NodePool, says in
// Ready what a pool waits for, and turns what the agent feeds back into the pool's status.
//
// The bundle of a pool is keyed by the pool's UID with its generation as version, so a change of replicas,
// version, labels, taints or config is a new generation of the same bundle. The pool's HyperShift NodePool
// lives in its HostedCluster's namespace: a pool waits until its cluster's bundle is applied, and a pool
// whose cluster is gone has nothing left on the management cluster, since the cluster's delete removed
// that namespace.
package nodepool

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
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
const Name = "nodepool-delivery"

// adapter delivers NodePools.
type adapter struct {
	client   versioned.Interface
	clusters listers.HCPClusterLister
	mcs      listers.ManagementClusterLister
	catalog  *versioncatalog.Catalog
	render   render.Options
}

// New returns the reconciler that delivers NodePools.
func New(client versioned.Interface, pools informers.NodePoolInformer, clusters informers.HCPClusterInformer,
	mcs informers.ManagementClusterInformer, catalog *versioncatalog.Catalog, publisher bundle.Publisher,
	renderOptions render.Options) (*bundle.Reconciler[*v1alpha1.NodePool], error) {
	a := &adapter{client: client, clusters: clusters.Lister(), mcs: mcs.Lister(), catalog: catalog, render: renderOptions}
	r, err := bundle.New[*v1alpha1.NodePool](Name, pools.Informer(), a, publisher, clusters.Informer().HasSynced, mcs.Informer().HasSynced)
	if err != nil {
		return nil, err
	}
	// A pool waits for its cluster to be placed and delivered, and goes once its cluster is gone.
	if err := r.FollowChanges(clusters.Informer(), clusterKeyOf); err != nil {
		return nil, err
	}
	return r, nil
}

// clusterKeyOf is the key of the pool's cluster, <namespace>/<spec.clusterName>.
func clusterKeyOf(np *v1alpha1.NodePool) string {
	return np.Namespace + "/" + np.Spec.ClusterName
}

func (a *adapter) Client(namespace string) bundle.Client[*v1alpha1.NodePool] {
	return a.client.HcpV1alpha1().NodePools(namespace)
}

// Consumer returns the consumer a pool's cluster is placed on: empty while it is not placed, and once the
// cluster is gone, since the cluster's delete removed its namespace and the pool's objects with it.
func (a *adapter) Consumer(np *v1alpha1.NodePool) (string, error) {
	_, consumer, err := a.placement(np)
	return consumer, err
}

// placement returns the cluster of a pool (nil once it is gone) and the consumer the cluster is placed on
// (empty while it is not placed).
func (a *adapter) placement(np *v1alpha1.NodePool) (*v1alpha1.HCPCluster, string, error) {
	cluster, err := a.clusters.HCPClusters(np.Namespace).Get(np.Spec.ClusterName)
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return cluster, "", err
	}
	consumer, err := placement.Consumer(a.mcs, cluster)
	if err != nil {
		return nil, "", err
	}
	return cluster, consumer, nil
}

// Plan waits, in Ready, until the pool's cluster can take it; a pool asking for a version the catalog does
// not offer and its nodes were never sent is Failed, since the user has to change it.
func (a *adapter) Plan(np *v1alpha1.NodePool, consumer string) (bundle.Plan[*v1alpha1.NodePool], error) {
	cluster, _, err := a.placement(np)
	if err != nil {
		return bundle.Plan[*v1alpha1.NodePool]{}, err
	}
	if why := clusterNotReady(np, cluster, consumer); why != "" {
		return waiting(v1alpha1.NodePoolReasonClusterNotReady, why), nil
	}
	image, desired, ok := a.release(cluster, np)
	switch {
	case !ok && desired == "":
		// The pool follows its cluster, whose version is not resolved yet.
		return waiting(v1alpha1.NodePoolReasonClusterNotReady,
			withCondition(fmt.Sprintf("cluster %s is %s; its version %s is not resolved yet", cluster.Name, state(cluster), cluster.Spec.Version.ID),
				cluster, v1alpha1.ConditionVersionResolved)), nil
	case !ok && desired == np.Spec.Version.ID && np.Status.DesiredVersion != desired:
		// A version the pool asks for and was never sent: only the user can pick another.
		return bundle.Plan[*v1alpha1.NodePool]{Wait: func(np *v1alpha1.NodePool) {
			failed(np, "VersionNotInCatalog", fmt.Sprintf("the version catalog has no release %s; pick another spec.version.id", desired))
		}}, nil
	case !ok:
		// The release the nodes were sent (the one the pool names, or the one the graph or their cluster
		// moved them to) was pulled: they are neither failed nor moved down, and keep what was delivered.
		message := fmt.Sprintf("the version catalog no longer offers %s, which the nodes run; they keep what was delivered until it is offered again", desired)
		if desired == np.Spec.Version.ID {
			message += " or spec.version.id names another"
		}
		return bundle.Plan[*v1alpha1.NodePool]{Wait: func(np *v1alpha1.NodePool) {
			setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "VersionNotInCatalog", message)
			setWaiting(np, "VersionNotInCatalog", fmt.Sprintf("the version catalog no longer offers %s", desired))
		}}, nil
	}
	return bundle.Plan[*v1alpha1.NodePool]{
		Input:        image,
		Render:       func() (*protocol.ManifestBundle, error) { return render.NodePoolBundle(cluster, np, image, a.render) },
		RenderFailed: func(np *v1alpha1.NodePool, err error) { failed(np, "RenderFailed", err.Error()) },
		Report: func(np *v1alpha1.NodePool, report source.BundleStatus, reported bool) time.Duration {
			recheck := applyReport(np, report, reported, consumer, desired)
			if np.Spec.Version.ID != "" {
				np.Status.DesiredVersion = desired
				a.moveAlongGraph(np, cluster)
			}
			return recheck
		},
	}, nil
}

// waiting is the plan of a pool that waits: Ready says for what.
func waiting(reason, message string) bundle.Plan[*v1alpha1.NodePool] {
	return bundle.Plan[*v1alpha1.NodePool]{Wait: func(np *v1alpha1.NodePool) { setWaiting(np, reason, message) }}
}

// failed records that the pool's spec cannot be delivered as it is: the user has to change it.
func failed(np *v1alpha1.NodePool, reason, message string) {
	setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionFalse, reason, message)
	setWaiting(np, reason, message)
	np.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
}

// clusterDelivered says whether the cluster's namespace and HostedCluster, which the pool's manifests go
// into, were applied. They stay until the cluster is deleted: a later generation of the cluster on its way
// does not hold its pools back, and a restart in the middle of it still offers their bundles.
func clusterDelivered(cluster *v1alpha1.HCPCluster) bool {
	return cluster.DeletionTimestamp == nil &&
		(cluster.Status.ObservedGeneration > 0 || meta.IsStatusConditionTrue(cluster.Status.Conditions, v1alpha1.ConditionDelivered))
}

// release returns the release image and version of a pool: its own version, or its cluster's when it
// names none.
func (a *adapter) release(cluster *v1alpha1.HCPCluster, np *v1alpha1.NodePool) (image, v string, ok bool) {
	if np.Spec.Version.ID == "" {
		image, ok = versionresolution.ReleaseImage(cluster, a.catalog)
		return image, cluster.Status.Version.Desired, ok
	}
	// Admission found the version in the pool's channel group, which defaults to stable when a version is set.
	group := poolGroup(cluster, np)
	v = np.Spec.Version.ID
	if moved := np.Status.DesiredVersion; moved != "" && moved != v && movedFrom(v, moved) {
		v = moved
	}
	r, ok := a.catalog.Find(group, v)
	return r.Payload, v, ok
}

// poolGroup is the channel group of a pool that names a version: its own, else its cluster's.
func poolGroup(cluster *v1alpha1.HCPCluster, np *v1alpha1.NodePool) string {
	if group := np.Spec.Version.ChannelGroup; group != "" {
		return group
	}
	return cluster.Spec.Version.ChannelGroup
}

// movedFrom says whether moved is where the update graph may have taken a pool on from: a newer patch of
// from's minor. A user's new spec.version.id (another minor, or a newer patch) replaces what the graph
// did; a release pulled from the catalog since does not, or the nodes would be moved down.
func movedFrom(from, moved string) bool {
	f, errF := version.ParseSemantic(from)
	m, errM := version.ParseSemantic(moved)
	return errF == nil && errM == nil && versioncatalog.MajorMinor(f) == versioncatalog.MajorMinor(m) && m.GreaterThan(f)
}

// moveAlongGraph moves a pool that names its version one edge of the update graph on, as its cluster's
// control plane moves (versionresolution.Upgrade): when the cluster's upgradePolicy is Automatic, the pool
// is Succeeded on its desired version (not updating, not failed), the edge carries no known risk, and the
// new version is not ahead of the control plane's, which the skew policy forbids.
func (a *adapter) moveAlongGraph(np *v1alpha1.NodePool, cluster *v1alpha1.HCPCluster) {
	current := np.Status.DesiredVersion
	if cluster.Spec.Version.UpgradePolicy == v1alpha1.UpgradePolicyManual ||
		np.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded || np.Status.Version != current {
		return
	}
	up, ok := a.catalog.NextPatch(poolGroup(cluster, np), current)
	if !ok {
		return
	}
	controlPlane, err := version.ParseSemantic(cluster.Status.Version.Actual)
	if err != nil || up.Next.Version.GreaterThan(controlPlane) {
		return
	}
	np.Status.DesiredVersion = up.Next.Version.String()
	setCondition(np, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "UpgradeAlongGraph",
		fmt.Sprintf("the nodes move from %s to %s along the update service's edge without a known risk, as the control plane did", current, np.Status.DesiredVersion))
}

// clusterNotReady says why the cluster of a pool cannot take it yet, in its state and the words of its
// controllers, or returns "" once the cluster's HostedCluster is applied.
func clusterNotReady(np *v1alpha1.NodePool, cluster *v1alpha1.HCPCluster, consumer string) string {
	switch {
	case cluster == nil:
		return fmt.Sprintf("cluster %s does not exist", np.Spec.ClusterName)
	case cluster.DeletionTimestamp != nil:
		return fmt.Sprintf("cluster %s is being deleted", cluster.Name)
	case consumer == "":
		return withCondition(fmt.Sprintf("cluster %s is %s and not placed on a management cluster yet", cluster.Name, state(cluster)),
			cluster, v1alpha1.ConditionPlaced)
	case !clusterDelivered(cluster):
		return withCondition(fmt.Sprintf("cluster %s is %s; its HostedCluster is not applied on management cluster %s yet",
			cluster.Name, state(cluster), cluster.Status.ManagementCluster), cluster, v1alpha1.ConditionDelivered)
	}
	return ""
}

// state is the provisioning state of a cluster as kubectl shows it.
func state(cluster *v1alpha1.HCPCluster) v1alpha1.ProvisioningState {
	if cluster.Status.ProvisioningState == "" {
		return v1alpha1.ProvisioningStateAccepted
	}
	return cluster.Status.ProvisioningState
}

// withCondition adds to what a pool waits for the message of the cluster's condition that is not True yet.
func withCondition(why string, cluster *v1alpha1.HCPCluster, conditionType string) string {
	if c := meta.FindStatusCondition(cluster.Status.Conditions, conditionType); c != nil && c.Status != metav1.ConditionTrue && c.Message != "" {
		return why + ": " + c.Message
	}
	return why
}
