// Package nodepool delivers each NodePool of a delivered HCPCluster to the cluster's management cluster
// through the Maestro source, turns the status the agent feeds back into the pool's status, and, when a
// pool is deleted, has the agent delete what it delivered before it lets the pool go.
//
// The bundle of a pool is keyed by the pool's UID with its generation as version, so a change of replicas,
// version, labels, taints or config is a new generation of the same bundle. The pool's HyperShift NodePool
// lives in its HostedCluster's namespace: a pool waits until its cluster's bundle is applied, and a pool
// whose cluster is gone has nothing left on the management cluster, since the cluster's delete removed
// that namespace.
package nodepool

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/delivery"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/version"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

const byCluster = "cluster"

// Controller delivers NodePools.
type Controller struct {
	client    versioned.Interface
	pools     listers.NodePoolLister
	indexer   cache.Indexer
	clusters  listers.HCPClusterLister
	mcs       listers.ManagementClusterLister
	catalog   *versioncatalog.Catalog
	publisher delivery.Publisher
	render    render.Options
	queue     *clusterstatus.Queue
	synced    []cache.InformerSynced

	// reports routes the agent's reports to the pools, and knows which bundles it reported deleted.
	reports *clusterstatus.Reports

	mu sync.Mutex
	// consumers maps the UID of every pool applied since the start to its consumer, so that the bundle of a
	// pool whose cluster is gone can still be deleted on the agent.
	consumers map[string]string
}

func New(client versioned.Interface, pools informers.NodePoolInformer, clusters informers.HCPClusterInformer,
	mcs informers.ManagementClusterInformer, catalog *versioncatalog.Catalog, publisher delivery.Publisher,
	renderOptions render.Options) (*Controller, error) {
	c := &Controller{
		client: client, pools: pools.Lister(), indexer: pools.Informer().GetIndexer(), clusters: clusters.Lister(),
		mcs: mcs.Lister(), catalog: catalog, publisher: publisher, render: renderOptions,
		synced:    []cache.InformerSynced{pools.Informer().HasSynced, clusters.Informer().HasSynced, mcs.Informer().HasSynced},
		consumers: map[string]string{},
	}
	c.queue = clusterstatus.NewQueue("nodepool", c.sync)
	c.reports = clusterstatus.NewReports(pools.Informer().GetIndexer(), c.queue)
	if err := pools.Informer().AddIndexers(cache.Indexers{clusterstatus.ByUID: clusterstatus.IndexByUID, byCluster: indexByCluster}); err != nil {
		return nil, err
	}
	if _, err := pools.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	// A pool waits for its cluster to be placed and delivered, and goes once its cluster is gone.
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueuePoolsOf,
		UpdateFunc: func(_, obj any) { c.enqueuePoolsOf(obj) },
		DeleteFunc: c.enqueuePoolsOf,
	}); err != nil {
		return nil, err
	}
	publisher.AddStatusHandler(c.reports.OnStatus)
	return c, nil
}

// indexByCluster keys a pool by the key of its cluster, <namespace>/<spec.clusterName>.
func indexByCluster(obj any) ([]string, error) {
	if np, ok := obj.(*v1alpha1.NodePool); ok {
		return []string{np.Namespace + "/" + np.Spec.ClusterName}, nil
	}
	return nil, nil
}

func (c *Controller) enqueuePoolsOf(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	pools, err := c.indexer.ByIndex(byCluster, key)
	if err != nil {
		return
	}
	for _, np := range pools {
		c.queue.Enqueue(np)
	}
}

// Run gives the source every pool's bundle, tells it so, and delivers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	ctx = clusterstatus.WithFieldManager(ctx, "nodepool")
	pools, err := c.pools.List(labels.Everything())
	if err == nil {
		for _, np := range pools {
			// Errors are retried by the queue; what counts here is that every bundle the source should
			// hold was offered to it before it may delete unknown ones.
			_, _ = c.publish(ctx, np)
			c.queue.Enqueue(np)
		}
		c.publisher.SetSynced()
	}
	c.queue.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	np, err := c.pools.NodePools(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if np.DeletionTimestamp != nil {
		return 0, c.syncDelete(ctx, np)
	}
	if published, err := c.publish(ctx, np); err != nil || !published {
		return 0, err
	}
	return 0, c.syncStatus(ctx, np)
}

// placement returns the cluster of a pool (nil once it is gone) and the consumer the cluster is placed on
// (empty while it is not placed).
func (c *Controller) placement(np *v1alpha1.NodePool) (*v1alpha1.HCPCluster, string, error) {
	cluster, err := c.clusters.HCPClusters(np.Namespace).Get(np.Spec.ClusterName)
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil || cluster.Status.ManagementCluster == "" {
		return cluster, "", err
	}
	mc, err := c.mcs.Get(cluster.Status.ManagementCluster)
	if err != nil {
		return nil, "", fmt.Errorf("management cluster %s of cluster %s: %w", cluster.Status.ManagementCluster, klog.KObj(cluster), err)
	}
	return cluster, mc.Spec.ConsumerName, nil
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
func (c *Controller) release(cluster *v1alpha1.HCPCluster, np *v1alpha1.NodePool) (image, v string, ok bool) {
	if np.Spec.Version.ID == "" {
		image, ok = version.ReleaseImage(cluster, c.catalog)
		return image, cluster.Status.Version.Desired, ok
	}
	// Admission found the version in the pool's channel group, which defaults to stable when a version is set.
	group := np.Spec.Version.ChannelGroup
	if group == "" {
		group = cluster.Spec.Version.ChannelGroup
	}
	r, ok := c.catalog.Find(group, np.Spec.Version.ID)
	return r.Payload, np.Spec.Version.ID, ok
}

// publish hands the source the pool's bundle, or its delete, and says whether it did. A pool of a cluster
// not placed or not delivered yet has nothing to publish, and says so in its Ready condition; one that
// cannot be rendered is Failed.
func (c *Controller) publish(ctx context.Context, np *v1alpha1.NodePool) (bool, error) {
	cluster, consumer, err := c.placement(np)
	if err != nil {
		return false, err
	}
	id := string(np.UID)
	if np.DeletionTimestamp != nil {
		if consumer == "" {
			return false, nil
		}
		return true, c.publisher.Delete(consumer, id)
	}
	if why := clusterNotReady(np, cluster, consumer); why != "" {
		return false, c.waiting(ctx, np, v1alpha1.NodePoolReasonClusterNotReady, why)
	}
	image, v, ok := c.release(cluster, np)
	switch {
	case !ok && v == "":
		// The pool follows its cluster, whose version is not resolved yet.
		return false, c.waiting(ctx, np, v1alpha1.NodePoolReasonClusterNotReady,
			withCondition(fmt.Sprintf("cluster %s is %s; its version %s is not resolved yet", cluster.Name, state(cluster), cluster.Spec.Version.ID),
				cluster, v1alpha1.ConditionVersionResolved))
	case !ok:
		return false, c.failed(ctx, np, "VersionNotInCatalog",
			fmt.Sprintf("the version catalog has no release %s; pick another spec.version.id", v))
	}
	bundle, err := render.NodePoolBundle(cluster, np, image, c.render)
	if err != nil {
		return false, c.failed(ctx, np, "RenderFailed", err.Error())
	}
	c.mu.Lock()
	c.consumers[id] = consumer
	c.mu.Unlock()
	return true, c.publisher.Apply(consumer, id, np.Generation, bundle)
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

// waiting says in the pool's Ready condition what the pool waits for.
func (c *Controller) waiting(ctx context.Context, np *v1alpha1.NodePool, reason, message string) error {
	_, err := updateStatus(ctx, c.client, np, func(np *v1alpha1.NodePool) { setWaiting(np, reason, message) })
	return err
}

// failed records that the pool's spec cannot be delivered as it is: the user has to change it.
func (c *Controller) failed(ctx context.Context, np *v1alpha1.NodePool, reason, message string) error {
	_, err := updateStatus(ctx, c.client, np, func(np *v1alpha1.NodePool) {
		setCondition(np, v1alpha1.ConditionDelivered, metav1.ConditionFalse, reason, message)
		setWaiting(np, reason, message)
		np.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
	})
	return err
}

// syncStatus turns the agent's last report of a published pool into its status.
func (c *Controller) syncStatus(ctx context.Context, np *v1alpha1.NodePool) error {
	cluster, consumer, err := c.placement(np)
	if err != nil || consumer == "" {
		return err
	}
	_, desired, _ := c.release(cluster, np)
	st, reported := c.publisher.Status(string(np.UID))
	_, err = updateStatus(ctx, c.client, np, func(np *v1alpha1.NodePool) {
		applyReport(np, st, reported, consumer, desired)
	})
	return err
}

// syncDelete has the agent delete the pool's bundle and removes the finalizer once it reported it gone. A
// pool whose cluster was never placed has nothing to delete, and one whose cluster is gone has nothing
// left: both go at once.
func (c *Controller) syncDelete(ctx context.Context, np *v1alpha1.NodePool) error {
	if !slices.Contains(np.Finalizers, v1alpha1.DeliveryFinalizer) {
		return nil
	}
	cluster, consumer, err := c.placement(np)
	if err != nil {
		return err
	}
	id := string(np.UID)
	done := c.reports.Deleted(id)
	c.mu.Lock()
	applied := c.consumers[id]
	c.mu.Unlock()
	switch {
	case consumer != "" && !done:
		// The status handler queues the pool again when the agent reports the delete done.
		_, err := c.publish(ctx, np)
		return err
	case cluster == nil && applied != "":
		// The agent still keeps its record of the bundle; with the objects gone it reports the delete done
		// at once. Bundles applied before a restart are deleted by the agent's next resync instead.
		if err := c.publisher.Delete(applied, id); err != nil {
			return err
		}
	}
	updated := np.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool { return f == v1alpha1.DeliveryFinalizer })
	_, err = c.client.HcpV1alpha1().NodePools(np.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: clusterstatus.FieldManager(ctx)})
	if err == nil {
		c.reports.Forget(id)
		c.mu.Lock()
		delete(c.consumers, id)
		c.mu.Unlock()
		klog.FromContext(ctx).V(2).Info("Deleted node pool", "nodePool", klog.KObj(np))
	}
	return err
}
