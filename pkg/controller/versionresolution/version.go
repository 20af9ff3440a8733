// Package versionresolution resolves the version an HCPCluster asks for (MAJOR.MINOR in a channel group) to a full
// release of the version catalog, recorded as status.version.desired with the condition VersionResolved, and
// moves a running cluster on to newer patches of its minor along the update graph (Upgrade) when the catalog
// changes. A new desired version is delivered as a user's upgrade is: its release image is an input of the
// cluster's bundle.
package versionresolution

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// Controller keeps status.version.desired of every HCPCluster resolved.
type Controller struct {
	client   versioned.Interface
	clusters listers.HCPClusterLister
	catalog  *versioncatalog.Catalog
	queue    *queue.Queue
	synced   cache.InformerSynced
	// all lists the keys of every cluster.
	all func() []string
}

func New(client versioned.Interface, clusters informers.HCPClusterInformer, catalog *versioncatalog.Catalog) (*Controller, error) {
	c := &Controller{client: client, clusters: clusters.Lister(), catalog: catalog, synced: clusters.Informer().HasSynced}
	c.queue = queue.New("version", c.sync)
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	c.all = clusters.Informer().GetIndexer().ListKeys
	return c, nil
}

// Run resolves versions until ctx ends, every cluster again whenever the catalog is replaced: a new graph
// may move each of them.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.catalog.OnReplace(func() {
		for _, key := range c.all() {
			c.queue.Add(key)
		}
	})()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	c.queue.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	cluster, err := c.clusters.HCPClusters(namespace).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && cluster.DeletionTimestamp != nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	_, err = clusterstatus.Update(ctx, c.client, "version", cluster, func(cluster *v1alpha1.HCPCluster) {
		Resolve(cluster, c.catalog)
		Upgrade(cluster, c.catalog)
	})
	return 0, err
}

// The reasons of VersionResolved when the update graph moves a cluster, or would.
const (
	// ReasonUpgradeAlongGraph: desired moved one edge of the update graph, without the user.
	ReasonUpgradeAlongGraph = "UpgradeAlongGraph"
	// ReasonUpgradeAvailable: the graph offers a newer patch, and the cluster's upgradePolicy is Manual.
	ReasonUpgradeAvailable = "UpgradeAvailable"
)

// Upgrade moves a running cluster one edge of the update graph on within its minor (catalog.NextPatch:
// an edge without a known risk, never past the release the service picks for the minor): one upgrade at
// a time, only a cluster that is Succeeded on its desired version (not updating, not failed) and whose
// version is resolved for its generation, and not when its upgradePolicy is Manual, which the condition
// then says. Minor upgrades are the user's: spec.version.id does not change.
func Upgrade(cluster *v1alpha1.HCPCluster, catalog *versioncatalog.Catalog) {
	resolved := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
	current := cluster.Status.Version.Desired
	if resolved == nil || resolved.Status != metav1.ConditionTrue || resolved.ObservedGeneration != cluster.Generation ||
		cluster.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded || current == "" || cluster.Status.Version.Actual != current {
		return
	}
	group := cluster.Spec.Version.ChannelGroup
	up, ok := catalog.NextPatch(group, current)
	if !ok {
		return
	}
	next, goal := up.Next.Version.String(), up.Goal.Version.String()
	if cluster.Spec.Version.UpgradePolicy == v1alpha1.UpgradePolicyManual {
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionVersionResolved, metav1.ConditionTrue, ReasonUpgradeAvailable,
			fmt.Sprintf("%s is on %s; the update service offers %s (toward %s) in channel group %s, and upgradePolicy Manual keeps it where it is",
				cluster.Spec.Version.ID, current, next, goal, group))
		return
	}
	cluster.Status.Version.Desired = next
	clusterstatus.SetCondition(cluster, v1alpha1.ConditionVersionResolved, metav1.ConditionTrue, ReasonUpgradeAlongGraph,
		fmt.Sprintf("%s moves from %s to %s along the update service's edge without a known risk, toward %s, the newest release of %s in channel group %s it can reach",
			cluster.Spec.Version.ID, current, next, goal, cluster.Spec.Version.ID, group))
}

// Resolve sets status.version.desired and the condition VersionResolved of cluster, as the registry does
// when the cluster is created or its spec.version changes.
func Resolve(cluster *v1alpha1.HCPCluster, catalog *versioncatalog.Catalog) {
	r := clusterfacts.ResolveVersion(catalog, cluster.Spec.Version.ChannelGroup, cluster.Spec.Version.ID, cluster.Status.Version.Desired)
	if c := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved); c != nil && c.Reason == ReasonUpgradeAlongGraph &&
		c.ObservedGeneration == cluster.Generation && r.Desired == cluster.Status.Version.Desired && r.Condition.Status == metav1.ConditionTrue {
		return // the graph's move is still what the cluster runs toward: its condition says why
	}
	cluster.Status.Version.Desired = r.Desired
	clusterstatus.SetCondition(cluster, r.Condition.Type, r.Condition.Status, r.Condition.Reason, r.Condition.Message)
}

// ReleaseImage returns the release image of the version cluster resolved to.
func ReleaseImage(cluster *v1alpha1.HCPCluster, catalog *versioncatalog.Catalog) (string, bool) {
	if cluster.Status.Version.Desired == "" {
		return "", false
	}
	release, ok := catalog.Find(cluster.Spec.Version.ChannelGroup, cluster.Status.Version.Desired)
	return release.Payload, ok
}
