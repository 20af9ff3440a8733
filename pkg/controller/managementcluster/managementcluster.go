// Package managementcluster writes each ManagementCluster's status: whether its Maestro agent is
// connected and since when, when the agent last resynced, and how full the cluster is (hosted clusters
// and node pools placed, capacity left), so that `kubectl get mc` answers both at a glance.
package managementcluster

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "managementcluster-status"

// Agents is what the Maestro source knows of the consumers' agents.
type Agents interface {
	Consumer(name string) source.ConsumerState
	AddConsumerHandler(source.ConsumerHandler)
}

// refreshLastSeen is how often status.lastSeen of a connected agent is written again: often enough to
// tell a live agent at a glance, seldom enough that agents' chatter costs no writes.
const refreshLastSeen = time.Minute

// countAfter is how long a change of load waits before it is counted: clusters come and go in bursts, and
// a burst costs one status write, not one per cluster.
const countAfter = 2 * time.Second

// The controller's own indexes: named for it, so that other controllers on the same informers keep theirs.
const (
	byManagementCluster = "managementcluster-status/managementCluster"
	byCluster           = "managementcluster-status/cluster"
	byConsumer          = "managementcluster-status/consumer"
)

// Controller writes ManagementCluster status.
type Controller struct {
	client   versioned.Interface
	mcs      listers.ManagementClusterLister
	mcIndex  cache.Indexer
	clusters cache.Indexer
	pools    cache.Indexer
	agents   Agents
	queue    *queue.Queue
	synced   []cache.InformerSynced
}

// New returns the controller; agents is nil when Maestro is off, and then no agent is ever connected.
func New(client versioned.Interface, mcs informers.ManagementClusterInformer, clusters informers.HCPClusterInformer,
	pools informers.NodePoolInformer, agents Agents) (*Controller, error) {
	c := &Controller{
		client: client, mcs: mcs.Lister(), mcIndex: mcs.Informer().GetIndexer(),
		clusters: clusters.Informer().GetIndexer(), pools: pools.Informer().GetIndexer(), agents: agents,
		synced: []cache.InformerSynced{mcs.Informer().HasSynced, clusters.Informer().HasSynced, pools.Informer().HasSynced},
	}
	c.queue = queue.New(Name, c.sync)
	if err := mcs.Informer().AddIndexers(cache.Indexers{byConsumer: func(obj any) ([]string, error) {
		if mc, ok := obj.(*v1alpha1.ManagementCluster); ok {
			return []string{mc.Spec.ConsumerName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	if err := clusters.Informer().AddIndexers(cache.Indexers{byManagementCluster: func(obj any) ([]string, error) {
		if cluster, ok := obj.(*v1alpha1.HCPCluster); ok && cluster.Status.ManagementCluster != "" {
			return []string{cluster.Status.ManagementCluster}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	if err := pools.Informer().AddIndexers(cache.Indexers{byCluster: func(obj any) ([]string, error) {
		if np, ok := obj.(*v1alpha1.NodePool); ok {
			return []string{np.Namespace + "/" + np.Spec.ClusterName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	if _, err := mcs.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueOfCluster,
		UpdateFunc: func(old, obj any) {
			// Only a placement changes the load; status updates of placed clusters do not.
			if old.(*v1alpha1.HCPCluster).Status.ManagementCluster != obj.(*v1alpha1.HCPCluster).Status.ManagementCluster {
				c.enqueueOfCluster(old)
				c.enqueueOfCluster(obj)
			}
		},
		DeleteFunc: c.enqueueOfCluster,
	}); err != nil {
		return nil, err
	}
	if _, err := pools.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOfPool,
		DeleteFunc: c.enqueueOfPool,
	}); err != nil {
		return nil, err
	}
	if agents != nil {
		agents.AddConsumerHandler(c.enqueueOfConsumer)
	}
	return c, nil
}

// Run writes status until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	c.queue.Run(ctx, workers)
}

func (c *Controller) enqueueOfCluster(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if cluster, ok := obj.(*v1alpha1.HCPCluster); ok && cluster.Status.ManagementCluster != "" {
		c.queue.AddAfter(cluster.Status.ManagementCluster, countAfter)
	}
}

func (c *Controller) enqueueOfPool(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	np, ok := obj.(*v1alpha1.NodePool)
	if !ok {
		return
	}
	if item, exists, err := c.clusters.GetByKey(np.Namespace + "/" + np.Spec.ClusterName); err == nil && exists {
		c.enqueueOfCluster(item)
	}
}

// enqueueOfConsumer is the source's consumer handler: it runs on the source's goroutines and only queues.
func (c *Controller) enqueueOfConsumer(consumer string) {
	mcs, _ := c.mcIndex.ByIndex(byConsumer, consumer)
	for _, mc := range mcs {
		c.queue.Enqueue(mc)
	}
}

func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	mc, err := c.mcs.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var state source.ConsumerState
	if c.agents != nil {
		state = c.agents.Consumer(mc.Spec.ConsumerName)
	}
	hosted, pools, err := c.load(name)
	if err != nil {
		return 0, err
	}
	updated := mc.DeepCopy()
	setStatus(updated, state, hosted, pools)
	if !apiequality.Semantic.DeepEqual(updated.Status, mc.Status) {
		if _, err := c.client.HcpV1alpha1().ManagementClusters().UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: Name}); err != nil {
			return 0, err
		}
	}
	if state.Connected {
		return refreshLastSeen, nil
	}
	return 0, nil
}

// load counts the hosted clusters placed on a management cluster, and their node pools.
func (c *Controller) load(name string) (hosted, pools int32, err error) {
	clusters, err := c.clusters.ByIndex(byManagementCluster, name)
	if err != nil {
		return 0, 0, err
	}
	for _, obj := range clusters {
		cluster := obj.(*v1alpha1.HCPCluster)
		of, err := c.pools.ByIndex(byCluster, cluster.Namespace+"/"+cluster.Name)
		if err != nil {
			return 0, 0, err
		}
		pools += int32(len(of))
	}
	return int32(len(clusters)), pools, nil
}

// setStatus writes what the source knows of the agent, and the load, into mc's status. Times are cut to
// the second, as the API keeps them, so that an unchanged state writes nothing.
func setStatus(mc *v1alpha1.ManagementCluster, state source.ConsumerState, hosted, pools int32) {
	mc.Status.HostedClusters, mc.Status.NodePools = hosted, pools
	mc.Status.AvailableCapacity = max(mc.Spec.Capacity-hosted, 0)
	seen := state.LastSeen
	if state.Connected {
		// Written once a minute, not on every event a live agent sends.
		seen = seen.Truncate(refreshLastSeen)
	}
	mc.Status.LastSeen, mc.Status.LastResync = timeOrNil(seen), timeOrNil(state.LastResync)
	condition := metav1.Condition{Type: v1alpha1.ConditionAgentConnected, ObservedGeneration: mc.Generation}
	consumer := mc.Spec.ConsumerName
	switch {
	case state.Connected:
		condition.Status, condition.Reason = metav1.ConditionTrue, "Connected"
		condition.Message = fmt.Sprintf("the maestro-agent of consumer %s is connected", consumer)
	case state.LastSeen.IsZero():
		condition.Status, condition.Reason = metav1.ConditionFalse, "NeverConnected"
		condition.Message = fmt.Sprintf("no maestro-agent of consumer %s was heard from since this server started", consumer)
	default:
		condition.Status, condition.Reason = metav1.ConditionFalse, "Disconnected"
		condition.Message = fmt.Sprintf("the maestro-agent of consumer %s was last heard from at %s", consumer, state.LastSeen.UTC().Format(time.RFC3339))
	}
	if !state.Since.IsZero() {
		condition.LastTransitionTime = metav1.NewTime(state.Since.Truncate(time.Second))
	}
	meta.SetStatusCondition(&mc.Status.Conditions, condition)
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t.Truncate(time.Second)}
}
