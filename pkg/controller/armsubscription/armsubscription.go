// Package armsubscription acts on ARM's subscription lifecycle: when Azure Resource Manager reports a
// subscription Deleted, every HCPCluster of the subscription (labelled v1alpha1.ARMSubscriptionLabel) is
// deleted, as the ARM frontend deletes all resources of a deleted subscription, and the ARMSubscription's
// ResourcesDeleted condition tells how many are left.
package armsubscription

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "armsubscription-lifecycle"

// The reasons of ResourcesDeleted.
const (
	reasonDeleting = "DeletingClusters"
	reasonDeleted  = "AllClustersDeleted"
)

// Controller deletes the clusters of Deleted subscriptions.
type Controller struct {
	client        versioned.Interface
	subscriptions listers.ARMSubscriptionLister
	clusters      listers.HCPClusterLister
	queue         *queue.Queue
	synced        []cache.InformerSynced
}

// New returns the controller.
func New(client versioned.Interface, subscriptions informers.ARMSubscriptionInformer, clusters informers.HCPClusterInformer) (*Controller, error) {
	c := &Controller{
		client: client, subscriptions: subscriptions.Lister(), clusters: clusters.Lister(),
		synced: []cache.InformerSynced{subscriptions.Informer().HasSynced, clusters.Informer().HasSynced},
	}
	c.queue = queue.New(Name, c.sync)
	if _, err := subscriptions.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	// The label names the subscription, so a cluster's event finds it without an index. Only a cluster
	// going, or one added to a Deleted subscription, changes what is left to do.
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOfCluster,
		DeleteFunc: c.enqueueOfCluster,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run acts on subscriptions until ctx ends.
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
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if subscription := m.GetLabels()[v1alpha1.ARMSubscriptionLabel]; subscription != "" {
		c.queue.Add(subscription)
	}
}

func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	sub, err := c.subscriptions.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	updated := sub.DeepCopy()
	updated.Status.ObservedGeneration = sub.Generation
	if sub.Spec.State != v1alpha1.ARMSubscriptionDeleted {
		meta.RemoveStatusCondition(&updated.Status.Conditions, v1alpha1.ConditionResourcesDeleted)
	} else {
		left, err := c.deleteClusters(ctx, name)
		if err != nil {
			return 0, err
		}
		condition := metav1.Condition{Type: v1alpha1.ConditionResourcesDeleted, ObservedGeneration: sub.Generation,
			Status: metav1.ConditionTrue, Reason: reasonDeleted, Message: "no HCPCluster of the subscription is left"}
		if left > 0 {
			condition.Status, condition.Reason = metav1.ConditionFalse, reasonDeleting
			condition.Message = fmt.Sprintf("%d HCPClusters of the subscription are being deleted", left)
		}
		meta.SetStatusCondition(&updated.Status.Conditions, condition)
	}
	if apiequality.Semantic.DeepEqual(updated.Status, sub.Status) {
		return 0, nil
	}
	_, err = c.client.HcpV1alpha1().ARMSubscriptions().UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: Name})
	return 0, err
}

// deleteClusters deletes the subscription's clusters not deleted yet, and returns how many are left,
// those being deleted included: a cluster goes once its control plane is gone from its management cluster.
func (c *Controller) deleteClusters(ctx context.Context, subscription string) (int, error) {
	clusters, err := c.clusters.List(labels.SelectorFromSet(labels.Set{v1alpha1.ARMSubscriptionLabel: subscription}))
	if err != nil {
		return 0, err
	}
	for _, cluster := range clusters {
		if cluster.DeletionTimestamp != nil {
			continue
		}
		uid := cluster.UID
		err := c.client.HcpV1alpha1().HCPClusters(cluster.Namespace).Delete(ctx, cluster.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, err
		}
		klog.FromContext(ctx).V(2).Info("Deleting a cluster of a deleted subscription", "subscription", subscription,
			"cluster", klog.KObj(cluster))
	}
	return len(clusters), nil
}
