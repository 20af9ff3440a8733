// Package delivery delivers each placed HCPCluster to its management cluster through the Maestro source,
// turns the status the agent feeds back into the cluster's status, and, when a cluster is deleted, deletes
// its node pools and credentials, has the agent delete what it delivered, and only then lets the cluster go.
//
// The bundle of a cluster is keyed by the cluster's UID with its generation as version, so a spec change
// is a new generation of the same bundle. The controller gives the source every bundle again when it
// starts (the source keeps nothing across restarts), and tells it when it has: only then may the source
// have agents delete bundles it does not know.
package delivery

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/version"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// Publisher is the part of the Maestro source the controller uses.
type Publisher interface {
	Apply(consumer, id string, generation int64, bundle *protocol.ManifestBundle) error
	Delete(consumer, id string) error
	Status(id string) (source.BundleStatus, bool)
	AddStatusHandler(source.StatusHandler)
	SetSynced()
}

// Options tune the controller.
type Options struct {
	Render render.Options
	// CreateDeadline is how long a cluster may take to become Succeeded before it is Failed.
	CreateDeadline time.Duration
}

// Controller delivers HCPClusters.
type Controller struct {
	client    versioned.Interface
	clusters  listers.HCPClusterLister
	mcs       listers.ManagementClusterLister
	nodePools listers.NodePoolLister
	creds     listers.BreakglassCredentialLister
	catalog   *versioncatalog.Catalog
	publisher Publisher
	opts      Options
	queue     *clusterstatus.Queue
	synced    []cache.InformerSynced
	now       func() time.Time

	// reports routes the agent's reports to the clusters, and knows which bundles it reported deleted.
	reports *clusterstatus.Reports
}

func New(client versioned.Interface, clusters informers.HCPClusterInformer, mcs informers.ManagementClusterInformer,
	nodePools informers.NodePoolInformer, creds informers.BreakglassCredentialInformer,
	catalog *versioncatalog.Catalog, publisher Publisher, opts Options) (*Controller, error) {
	if opts.CreateDeadline <= 0 {
		opts.CreateDeadline = time.Hour
	}
	c := &Controller{
		client: client, clusters: clusters.Lister(), mcs: mcs.Lister(),
		nodePools: nodePools.Lister(), creds: creds.Lister(), catalog: catalog, publisher: publisher, opts: opts,
		synced: []cache.InformerSynced{clusters.Informer().HasSynced, mcs.Informer().HasSynced,
			nodePools.Informer().HasSynced, creds.Informer().HasSynced},
		now: time.Now,
	}
	c.queue = clusterstatus.NewQueue("delivery", c.sync)
	c.reports = clusterstatus.NewReports(clusters.Informer().GetIndexer(), c.queue)
	if err := clusters.Informer().AddIndexers(cache.Indexers{clusterstatus.ByUID: clusterstatus.IndexByUID}); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	publisher.AddStatusHandler(c.reports.OnStatus)
	return c, nil
}

// Run gives the source every cluster's bundle, marks it synced, and delivers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	ctx = clusterstatus.WithFieldManager(ctx, "delivery")
	clusters, err := c.clusters.List(labels.Everything())
	if err == nil {
		for _, cluster := range clusters {
			// Errors are retried by the queue; what counts here is that every bundle the source should
			// hold was offered to it before it may delete unknown ones.
			_ = c.publish(ctx, cluster)
			c.queue.Enqueue(cluster)
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
	cluster, err := c.clusters.HCPClusters(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if cluster.DeletionTimestamp != nil {
		return 0, c.syncDelete(ctx, cluster)
	}
	if err := c.publish(ctx, cluster); err != nil {
		return 0, err
	}
	return c.syncStatus(ctx, cluster)
}

// consumer returns the consumer a cluster is placed on; empty when it is not placed.
func (c *Controller) consumer(cluster *v1alpha1.HCPCluster) (string, error) {
	if cluster.Status.ManagementCluster == "" {
		return "", nil
	}
	mc, err := c.mcs.Get(cluster.Status.ManagementCluster)
	if err != nil {
		return "", fmt.Errorf("management cluster %s of cluster %s: %w", cluster.Status.ManagementCluster, klog.KObj(cluster), err)
	}
	return mc.Spec.ConsumerName, nil
}

// publish hands the source the cluster's bundle, or its delete; a cluster not yet placed or resolved has
// nothing to publish.
func (c *Controller) publish(ctx context.Context, cluster *v1alpha1.HCPCluster) error {
	consumer, err := c.consumer(cluster)
	if err != nil || consumer == "" {
		return err
	}
	id := string(cluster.UID)
	if cluster.DeletionTimestamp != nil {
		return c.publisher.Delete(consumer, id)
	}
	// The bundle's version is the generation: what is published for a generation must not change, so
	// wait until the version is resolved for this very generation (an upgrade changes both at once).
	resolved := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
	if resolved == nil || resolved.Status != metav1.ConditionTrue || resolved.ObservedGeneration != cluster.Generation {
		return nil
	}
	image, ok := version.ReleaseImage(cluster, c.catalog)
	if !ok {
		return nil
	}
	bundle, err := render.ClusterBundle(render.ClusterInput{Cluster: cluster, ReleaseImage: image}, c.opts.Render)
	if err != nil {
		_, uerr := clusterstatus.Update(ctx, c.client, cluster, func(cluster *v1alpha1.HCPCluster) {
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDelivered, metav1.ConditionFalse, "RenderFailed", err.Error())
			cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		})
		return uerr
	}
	return c.publisher.Apply(consumer, id, cluster.Generation, bundle)
}

// syncStatus turns the agent's last report into the cluster's status, and returns when to look again
// for the creation deadline.
func (c *Controller) syncStatus(ctx context.Context, cluster *v1alpha1.HCPCluster) (time.Duration, error) {
	consumer, err := c.consumer(cluster)
	if err != nil || consumer == "" {
		return 0, err
	}
	st, reported := c.publisher.Status(string(cluster.UID))
	now := c.now()
	_, err = clusterstatus.Update(ctx, c.client, cluster, func(cluster *v1alpha1.HCPCluster) {
		applyReport(cluster, st, reported, consumer)
		// Checked on every sync, after the report: the agent's Progressing must not hide why it failed.
		if cluster.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded &&
			!everSucceeded(cluster) && now.Sub(cluster.CreationTimestamp.Time) > c.opts.CreateDeadline {
			cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "DeadlineExceeded",
				fmt.Sprintf("the cluster did not become available within %v", c.opts.CreateDeadline))
		}
	})
	if err != nil {
		return 0, err
	}
	if cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateSucceeded {
		return 0, nil
	}
	if left := c.opts.CreateDeadline - now.Sub(cluster.CreationTimestamp.Time); left > 0 {
		return left + time.Second, nil
	}
	return 0, nil
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

// syncDelete deletes what belongs to a deleted cluster, has the agent delete the bundle, and removes the
// finalizer once the agent reported it gone.
func (c *Controller) syncDelete(ctx context.Context, cluster *v1alpha1.HCPCluster) error {
	if !hasFinalizer(cluster) {
		return nil
	}
	if err := c.deleteDependents(ctx, cluster); err != nil {
		return err
	}
	if cluster.Status.ManagementCluster != "" {
		if !c.reports.Deleted(string(cluster.UID)) {
			// The status handler queues the cluster again when the agent reports the delete done.
			return c.publish(ctx, cluster)
		}
	}
	updated := cluster.DeepCopy()
	updated.Finalizers = removeFinalizer(updated.Finalizers)
	_, err := c.client.HcpV1alpha1().HCPClusters(cluster.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: "delivery"})
	if err == nil {
		c.reports.Forget(string(cluster.UID))
		klog.FromContext(ctx).V(2).Info("Deleted cluster", "cluster", klog.KObj(cluster))
	}
	return err
}

// deleteDependents deletes the node pools and break-glass credentials of a deleted cluster.
func (c *Controller) deleteDependents(ctx context.Context, cluster *v1alpha1.HCPCluster) error {
	pools, err := c.nodePools.NodePools(cluster.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, np := range pools {
		if np.Spec.ClusterName != cluster.Name || np.DeletionTimestamp != nil {
			continue
		}
		err := c.client.HcpV1alpha1().NodePools(np.Namespace).Delete(ctx, np.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &np.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	creds, err := c.creds.BreakglassCredentials(cluster.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, cred := range creds {
		if cred.Spec.ClusterName != cluster.Name || cred.DeletionTimestamp != nil {
			continue
		}
		err := c.client.HcpV1alpha1().BreakglassCredentials(cred.Namespace).Delete(ctx, cred.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cred.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

func hasFinalizer(cluster *v1alpha1.HCPCluster) bool {
	for _, f := range cluster.Finalizers {
		if f == v1alpha1.DeliveryFinalizer {
			return true
		}
	}
	return false
}

func removeFinalizer(finalizers []string) []string {
	var kept []string
	for _, f := range finalizers {
		if f != v1alpha1.DeliveryFinalizer {
			kept = append(kept, f)
		}
	}
	return kept
}
