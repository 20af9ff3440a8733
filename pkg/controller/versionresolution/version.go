// Package versionresolution resolves the version an HCPCluster asks for (MAJOR.MINOR in a channel group) to a full
// release of the version catalog, recorded as status.version.desired with the condition VersionResolved.
package versionresolution

import (
	"context"
	"time"

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
}

func New(client versioned.Interface, clusters informers.HCPClusterInformer, catalog *versioncatalog.Catalog) (*Controller, error) {
	c := &Controller{client: client, clusters: clusters.Lister(), catalog: catalog, synced: clusters.Informer().HasSynced}
	c.queue = queue.New("version", c.sync)
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	return c, nil
}

// Run resolves versions until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
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
	_, err = clusterstatus.Update(ctx, c.client, "version", cluster, func(cluster *v1alpha1.HCPCluster) { Resolve(cluster, c.catalog) })
	return 0, err
}

// Resolve sets status.version.desired and the condition VersionResolved of cluster, as the registry does
// when the cluster is created or its spec.version changes.
func Resolve(cluster *v1alpha1.HCPCluster, catalog *versioncatalog.Catalog) {
	r := clusterfacts.ResolveVersion(catalog, cluster.Spec.Version.ChannelGroup, cluster.Spec.Version.ID, cluster.Status.Version.Desired)
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
