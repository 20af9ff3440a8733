// Package managedresourcegroup keeps each cluster's managed resource group in the customer's subscription:
// created, in the cluster's location and tagged as the cluster's (azure.OwnershipTag), once the cluster's
// identities are valid and before it is delivered; deleted once its control plane is gone from the
// management cluster. The result is the cluster's ManagedResourceGroupReady condition. A group of that name
// that exists and is not the cluster's is a failure the condition names: it is never adopted, and never
// deleted. Finalizer keeps a deleted cluster until its group is gone.
package managedresourcegroup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "managed-resource-group"

// Finalizer keeps a deleted cluster until its managed resource group is gone.
const Finalizer = v1alpha1.ManagedResourceGroupFinalizer

// Reasons of ManagedResourceGroupReady.
const (
	ReasonAwaitingIdentities = "AwaitingIdentities"
	ReasonCreated            = "Created"
	// ReasonNotOurs: a group of that name exists and is not the cluster's.
	ReasonNotOurs = "ResourceGroupNotOurs"
	// ReasonAzureRefused: Azure refused to make the group for good (a policy forbids it, say); it is
	// tried again every poll interval, as for another's group.
	ReasonAzureRefused = "AzureRefused"
	// ReasonAzureError: Azure could not be asked (throttled, unavailable); the group is tried again.
	ReasonAzureError = "AzureError"
)

// ResourceGroups is what the controller asks Azure (pkg/azure.ResourceGroupsClient).
type ResourceGroups interface {
	EnsureResourceGroup(ctx context.Context, subscriptionID, name, location string, tags map[string]string) (bool, error)
	DeleteResourceGroup(ctx context.Context, subscriptionID, name, clusterID, resumeToken string) (*azure.DeleteOperation, error)
}

// Options tune the controller.
type Options struct {
	// PollInterval is how often a group being deleted is asked about, and a group that is not the
	// cluster's looked at again.
	PollInterval time.Duration
	// Tags are the service's tags on every managed resource group, besides the ownership tag.
	Tags map[string]string
}

// Controller creates and deletes managed resource groups.
type Controller struct {
	client   versioned.Interface
	clusters listers.HCPClusterLister
	groups   ResourceGroups
	queue    *queue.Queue
	synced   cache.InformerSynced
	opts     Options

	mu sync.Mutex
	// deleting holds the deletions this process follows, by cluster UID. One lost with a restart is
	// started again: Azure answers a DELETE of a group being deleted as the first.
	deleting map[string]*azure.DeleteOperation
}

// New returns the controller. Without groups (the server provisions no Azure) it only lets deleted
// clusters go that still hold the finalizer from a time it did, leaving their groups to their owners.
func New(client versioned.Interface, clusters informers.HCPClusterInformer, groups ResourceGroups, opts Options) (*Controller, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 10 * time.Second
	}
	c := &Controller{client: client, clusters: clusters.Lister(), groups: groups, synced: clusters.Informer().HasSynced,
		opts: opts, deleting: map[string]*azure.DeleteOperation{}}
	c.queue = queue.New(Name, c.sync)
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	return c, nil
}

// Run keeps groups until ctx ends.
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
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if cluster.DeletionTimestamp != nil {
		return c.syncDelete(ctx, cluster)
	}
	if c.groups == nil {
		return 0, nil
	}
	// A cluster created while the service provisioned no Azure says AzureDisabled: it has no group yet.
	if clusterstatus.AzureChecked(cluster, v1alpha1.ConditionManagedResourceGroupReady) != nil {
		return 0, nil
	}
	if cluster.Status.ClusterID == "" {
		// Stored before clusters had IDs, so delivered before the service provisioned Azure: nothing
		// holds it back, and without an ID its group could not be told from another's.
		return 0, nil
	}
	if clusterstatus.AzureChecked(cluster, v1alpha1.ConditionAzureIdentitiesValid) == nil {
		// No resource is made in the customer's subscription for a cluster that may be refused.
		_, err := clusterstatus.Update(ctx, c.client, Name, cluster, func(cluster *v1alpha1.HCPCluster) {
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionManagedResourceGroupReady, metav1.ConditionFalse, ReasonAwaitingIdentities,
				"the managed resource group is created once the cluster's managed identities are valid")
		})
		return 0, err
	}
	// The registry adds the finalizer to every cluster created while the service provisions Azure; this is
	// for clusters created before it did, before anything is made in Azure.
	if cluster, err = clusterstatus.AddFinalizer(ctx, c.client, Name, cluster, Finalizer); err != nil {
		return 0, err
	}

	subscription, group := cluster.Spec.Azure.SubscriptionID, render.ManagedResourceGroup(cluster)
	tags := map[string]string{}
	for k, v := range c.opts.Tags {
		tags[k] = v
	}
	tags[azure.OwnershipTag] = cluster.Status.ClusterID
	_, ensureErr := c.groups.EnsureResourceGroup(ctx, subscription, group, cluster.Spec.Location, tags)
	var notOurs *azure.NotOursError
	refused := errors.As(ensureErr, &notOurs) || azure.IsRefusal(ensureErr)
	// Only a cluster not delivered yet is held back, so only such a one fails.
	published := clusterstatus.Published(cluster)
	_, err = clusterstatus.Update(ctx, c.client, Name, cluster, func(cluster *v1alpha1.HCPCluster) {
		switch {
		case notOurs != nil:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionManagedResourceGroupReady, metav1.ConditionFalse, ReasonNotOurs, notOurs.Error())
		case refused:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionManagedResourceGroupReady, metav1.ConditionFalse, ReasonAzureRefused,
				fmt.Sprintf("Azure refused to make the managed resource group /subscriptions/%s/resourceGroups/%s: %v", subscription, group, ensureErr))
		case ensureErr != nil:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionManagedResourceGroupReady, metav1.ConditionFalse, ReasonAzureError,
				fmt.Sprintf("the managed resource group /subscriptions/%s/resourceGroups/%s is not created yet: %v", subscription, group, ensureErr))
		}
		switch {
		case refused && !published:
			cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		case ensureErr == nil:
			// A cluster failed before its first delivery, now with its group, is provisioned again.
			if !published && cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateFailed {
				cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
			}
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionManagedResourceGroupReady, metav1.ConditionTrue, ReasonCreated,
				fmt.Sprintf("the managed resource group /subscriptions/%s/resourceGroups/%s exists in %s, tagged %s=%s",
					subscription, group, cluster.Spec.Location, azure.OwnershipTag, cluster.Status.ClusterID))
		}
	})
	switch {
	case err != nil:
		return 0, err
	case refused:
		// The customer may remove the other group, or lift the policy.
		return clusterstatus.RecheckAfter(cluster, v1alpha1.ConditionManagedResourceGroupReady, c.opts.PollInterval, time.Now()), nil
	case ensureErr != nil:
		return 0, ensureErr
	}
	return 0, nil
}

// syncDelete deletes the group of a deleted cluster once its control plane is gone (the delivery
// finalizer is), follows the deletion, and lets the cluster go once the group is gone.
func (c *Controller) syncDelete(ctx context.Context, cluster *v1alpha1.HCPCluster) (time.Duration, error) {
	if !slices.Contains(cluster.Finalizers, Finalizer) {
		return 0, nil
	}
	if slices.Contains(cluster.Finalizers, v1alpha1.DeliveryFinalizer) {
		return 0, nil // the update that removes it queues the cluster again
	}
	uid := string(cluster.UID)
	subscription, group := cluster.Spec.Azure.SubscriptionID, render.ManagedResourceGroup(cluster)
	logger := klog.FromContext(ctx).WithValues("cluster", klog.KObj(cluster), "resourceGroup", group)

	c.mu.Lock()
	op := c.deleting[uid]
	c.mu.Unlock()
	var err error
	switch {
	case c.groups == nil:
		logger.Info("The server provisions no Azure now: the cluster goes, and its managed resource group, if it has one, is left to its owner")
	case cluster.Status.ClusterID == "":
		// Nothing is made for a cluster without an ID.
	case op == nil:
		op, err = c.groups.DeleteResourceGroup(ctx, subscription, group, cluster.Status.ClusterID, "")
		var notOurs *azure.NotOursError
		if errors.As(err, &notOurs) {
			logger.Info("Leaving a resource group that is not the cluster's", "reason", notOurs.Error())
			op, err = nil, nil
		}
	default:
		err = op.Poll(ctx)
	}
	if err != nil {
		c.forget(uid)
		return 0, err
	}
	if op != nil && !op.Done() {
		c.mu.Lock()
		c.deleting[uid] = op
		c.mu.Unlock()
		return c.opts.PollInterval, nil
	}
	c.forget(uid)
	if err := clusterstatus.RemoveFinalizer(ctx, c.client, Name, cluster, Finalizer); err != nil {
		return 0, err
	}
	logger.Info("Managed resource group gone with its cluster")
	return 0, nil
}

func (c *Controller) forget(uid string) {
	c.mu.Lock()
	delete(c.deleting, uid)
	c.mu.Unlock()
}
