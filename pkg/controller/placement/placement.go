// Package placement puts each HCPCluster on a ManagementCluster: one in the cluster's location that is
// schedulable, has free capacity and a connected maestro-agent, the least loaded first. The choice is
// recorded in status.managementCluster, with the condition Placed, and never changes afterwards.
package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// ConnectedFunc says whether the agent of a consumer is connected.
type ConnectedFunc func(consumer string) bool

// byManagementCluster indexes HCPClusters by status.managementCluster, to count each one's load.
const byManagementCluster = "managementCluster"

// Controller places HCPClusters.
type Controller struct {
	client    versioned.Interface
	clusters  listers.HCPClusterLister
	indexer   cache.Indexer
	mcs       listers.ManagementClusterLister
	connected ConnectedFunc
	queue     *queue.Queue
	synced    []cache.InformerSynced

	// assumed are the placements written but perhaps not in the informer yet, per management cluster,
	// so that the next decision counts them.
	assumed map[string]sets.Set[string]
}

func New(client versioned.Interface, clusters informers.HCPClusterInformer, mcs informers.ManagementClusterInformer, connected ConnectedFunc) (*Controller, error) {
	c := &Controller{
		client: client, clusters: clusters.Lister(), indexer: clusters.Informer().GetIndexer(), mcs: mcs.Lister(), connected: connected,
		synced:  []cache.InformerSynced{clusters.Informer().HasSynced, mcs.Informer().HasSynced},
		assumed: map[string]sets.Set[string]{},
	}
	// One worker: placements are decided one at a time, so that two clusters never take the last seat.
	c.queue = queue.New("placement", c.sync)
	err := clusters.Informer().AddIndexers(cache.Indexers{byManagementCluster: func(obj any) ([]string, error) {
		if cluster, ok := obj.(*v1alpha1.HCPCluster); ok && cluster.Status.ManagementCluster != "" {
			return []string{cluster.Status.ManagementCluster}, nil
		}
		return nil, nil
	}})
	if err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	// A new or changed management cluster may fit the clusters waiting for one.
	_, err = mcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueUnplaced() },
		UpdateFunc: func(any, any) { c.enqueueUnplaced() },
	})
	return c, err
}

// Run places clusters until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	c.queue.Run(ctx, 1)
}

func (c *Controller) enqueueUnplaced() {
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cluster := range clusters {
		if cluster.Status.ManagementCluster == "" {
			c.queue.Enqueue(cluster)
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	cluster, err := c.clusters.HCPClusters(namespace).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && (cluster.DeletionTimestamp != nil || cluster.Status.ManagementCluster != "")) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	mcs, err := c.mcs.List(labels.Everything())
	if err != nil {
		return 0, err
	}
	chosen, why := c.choose(cluster, mcs)
	_, err = clusterstatus.Update(ctx, c.client, "placement", cluster, func(cluster *v1alpha1.HCPCluster) {
		if chosen == nil {
			// Unchanged from the create's own condition when no management cluster is there at all: no write.
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionPlaced, metav1.ConditionFalse, v1alpha1.ReasonNoManagementCluster, why)
			return
		}
		cluster.Status.ManagementCluster = chosen.Name
		clusterstatus.SetCondition(cluster, v1alpha1.ConditionPlaced, metav1.ConditionTrue, "Placed",
			fmt.Sprintf("placed on management cluster %s", chosen.Name))
	})
	if err != nil {
		return 0, err
	}
	if chosen != nil {
		if c.assumed[chosen.Name] == nil {
			c.assumed[chosen.Name] = sets.New[string]()
		}
		c.assumed[chosen.Name].Insert(key)
	}
	// A cluster that fits nowhere waits for a management cluster to change: the managementcluster
	// controller writes AgentConnected when an agent comes or goes and the load when clusters leave,
	// so every change that could make room is an update event here, and no timer polls 100,000 clusters.
	return 0, nil
}

// choose returns the management cluster for cluster, or why there is none.
func (c *Controller) choose(cluster *v1alpha1.HCPCluster, mcs []*v1alpha1.ManagementCluster) (*v1alpha1.ManagementCluster, string) {
	type candidate struct {
		mc   *v1alpha1.ManagementCluster
		load int
	}
	var candidates []candidate
	var full, disconnected, unschedulable []string
	for _, mc := range mcs {
		if mc.Spec.Location != cluster.Spec.Location || mc.DeletionTimestamp != nil {
			continue
		}
		if mc.Spec.Schedulable != nil && !*mc.Spec.Schedulable {
			unschedulable = append(unschedulable, mc.Name)
			continue
		}
		load, err := c.load(mc.Name)
		if err != nil {
			continue
		}
		if load >= int(mc.Spec.Capacity) {
			full = append(full, mc.Name)
			continue
		}
		if !c.connected(mc.Spec.ConsumerName) {
			disconnected = append(disconnected, mc.Name)
			continue
		}
		candidates = append(candidates, candidate{mc, load})
	}
	if len(candidates) == 0 {
		why := clusterfacts.UnplacedMessage(cluster.Spec.Location)
		for _, group := range []struct {
			what  string
			names []string
		}{{"full", full}, {"without a connected agent", disconnected}, {"unschedulable", unschedulable}} {
			if len(group.names) > 0 {
				slices.Sort(group.names)
				why += fmt.Sprintf("; %s: %s", group.what, strings.Join(group.names, ", "))
			}
		}
		return nil, why
	}
	slices.SortFunc(candidates, func(x, y candidate) int {
		if x.load != y.load {
			return x.load - y.load
		}
		return strings.Compare(x.mc.Name, y.mc.Name)
	})
	return candidates[0].mc, ""
}

// load counts the clusters placed on a management cluster, the informer's and those just placed.
func (c *Controller) load(mcName string) (int, error) {
	placed, err := c.indexer.IndexKeys(byManagementCluster, mcName)
	if err != nil {
		return 0, err
	}
	keys := sets.New(placed...)
	if assumed := c.assumed[mcName]; assumed != nil {
		// Once the informer shows a placement, it need not be assumed any more.
		assumed.Delete(placed...)
		keys = keys.Union(assumed)
	}
	return keys.Len(), nil
}

// Consumer returns the Maestro consumer of the management cluster a cluster is placed on; empty while it is
// not placed. Every kind delivered for a cluster goes there.
func Consumer(mcs listers.ManagementClusterLister, cluster *v1alpha1.HCPCluster) (string, error) {
	if cluster.Status.ManagementCluster == "" {
		return "", nil
	}
	mc, err := mcs.Get(cluster.Status.ManagementCluster)
	if err != nil {
		return "", fmt.Errorf("management cluster %s of cluster %s: %w", cluster.Status.ManagementCluster, klog.KObj(cluster), err)
	}
	return mc.Spec.ConsumerName, nil
}

// ClusterConsumer returns the consumer of the cluster namespace/name: empty while it is not placed, and once
// it is gone, since its delete took its control plane, and all that was delivered for it, with it.
func ClusterConsumer(clusters listers.HCPClusterLister, mcs listers.ManagementClusterLister, namespace, name string) (string, error) {
	cluster, err := clusters.HCPClusters(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return Consumer(mcs, cluster)
}
