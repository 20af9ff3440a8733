// Package armoperation keeps each ARMOperation's status in step with the object it follows, as ARM's
// operation status endpoint reports it: a create or update follows its HCPCluster's or NodePool's
// provisioningState once the object's status describes the generation the operation wrote, a delete
// ends when the object is gone, a credential request follows its BreakglassCredential's phase, and a
// revocation its cluster's RevokingCredentials condition. A final operation is deleted a retention
// period after it was created, as ARM's operation documents expire.
package armoperation

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "armoperation-status"

// DefaultRetention is how long an operation is kept after it was created: ARM's 7 days.
const DefaultRetention = 7 * 24 * time.Hour

// informerLag is how long after an operation was created its target's informer may still not have seen
// the target: an operation is written in its object's own write (or just after it), and the two informers
// deliver their events independently. Until then, the target's event moves the operation, and a target
// missing from its informer is not asked of the server: under load, about one new operation in seven came
// before its object, each a read of etcd through the API.
const informerLag = 2 * time.Second

// errNotSeenYet says the informer of a new operation's target has not seen the target yet.
var errNotSeenYet = errors.New("the operation's target is not in its informer yet")

// byTarget indexes operations by the object they follow, so that an event of the object finds them.
// Named for the controller, so that others on the same informer keep their own.
const byTarget = "armoperation-status/target"

// The resources an operation can follow, as spec.target.resource names them.
const (
	resourceClusters    = "hcpclusters"
	resourceNodePools   = "nodepools"
	resourceAuths       = "externalauths"
	resourceCredentials = "breakglasscredentials"
)

// Controller writes ARMOperation status.
type Controller struct {
	client      versioned.Interface
	operations  listers.ARMOperationLister
	clusters    listers.HCPClusterLister
	pools       listers.NodePoolLister
	auths       listers.ExternalAuthLister
	credentials listers.BreakglassCredentialLister
	byTarget    cache.Indexer
	retention   time.Duration
	now         func() time.Time
	queue       *queue.Queue
	synced      []cache.InformerSynced
}

// New returns the controller; a retention of 0 is DefaultRetention.
func New(client versioned.Interface, operations informers.ARMOperationInformer, clusters informers.HCPClusterInformer,
	pools informers.NodePoolInformer, auths informers.ExternalAuthInformer, credentials informers.BreakglassCredentialInformer,
	retention time.Duration) (*Controller, error) {
	if retention <= 0 {
		retention = DefaultRetention
	}
	c := &Controller{
		client: client, operations: operations.Lister(), clusters: clusters.Lister(), pools: pools.Lister(), auths: auths.Lister(),
		credentials: credentials.Lister(), byTarget: operations.Informer().GetIndexer(), retention: retention, now: time.Now,
		synced: []cache.InformerSynced{operations.Informer().HasSynced, clusters.Informer().HasSynced,
			pools.Informer().HasSynced, auths.Informer().HasSynced, credentials.Informer().HasSynced},
	}
	c.queue = queue.New(Name, c.sync)
	if err := operations.Informer().AddIndexers(cache.Indexers{byTarget: indexByTarget}); err != nil {
		return nil, err
	}
	if _, err := operations.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	for resource, informer := range map[string]cache.SharedIndexInformer{
		resourceClusters: clusters.Informer(), resourceNodePools: pools.Informer(), resourceAuths: auths.Informer(),
		resourceCredentials: credentials.Informer(),
	} {
		enqueue := func(obj any) { c.enqueueFollowing(resource, obj) }
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
			DeleteFunc: enqueue,
		}); err != nil {
			return nil, err
		}
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

func targetKey(resource, namespace, name string) string {
	return resource + "/" + namespace + "/" + name
}

func indexByTarget(obj any) ([]string, error) {
	op, ok := obj.(*v1alpha1.ARMOperation)
	if !ok {
		return nil, nil
	}
	t := op.Spec.Target
	return []string{targetKey(t.Resource, t.Namespace, t.Name)}, nil
}

// enqueueFollowing queues the operations that follow obj, an object of resource (or its tombstone).
func (c *Controller) enqueueFollowing(resource string, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	ops, err := c.byTarget.ByIndex(byTarget, targetKey(resource, m.GetNamespace(), m.GetName()))
	if err != nil {
		return
	}
	for _, op := range ops {
		// Final operations wait for their retention only; their target no longer matters.
		if !op.(*v1alpha1.ARMOperation).Status.State.Final() {
			c.queue.Enqueue(op)
		}
	}
}

func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	op, err := c.operations.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	now := c.now()
	if op.Status.State.Final() {
		return c.expire(ctx, op, now)
	}
	recent := now.Sub(op.CreationTimestamp.Time) < informerLag
	want, known, err := c.progress(ctx, op, recent)
	if errors.Is(err, errNotSeenYet) {
		// The target's event brings the operation back; this is in case it never comes.
		return informerLag, nil
	}
	if err != nil || !known {
		return 0, err
	}
	if want.state == op.Status.State {
		return 0, nil
	}
	updated := op.DeepCopy()
	at := metav1.NewTime(now)
	updated.Status.State, updated.Status.LastTransitionTime, updated.Status.Error = want.state, &at, want.err
	if want.state.Final() {
		updated.Status.EndTime = &at
		// An operation with spec.notificationURI is where ARM's async notification would be posted
		// from; the service does not post them.
	}
	if _, err := c.client.HcpV1alpha1().ARMOperations().UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: Name}); err != nil {
		return 0, err
	}
	klog.FromContext(ctx).V(2).Info("Operation moved", "operation", name, "request", op.Spec.Request,
		"from", op.Status.State, "to", want.state)
	// The informer's event of this write brings the operation back, final or not.
	return 0, nil
}

// expire deletes a final operation once it is older than the retention, and otherwise says when it will be.
func (c *Controller) expire(ctx context.Context, op *v1alpha1.ARMOperation, now time.Time) (time.Duration, error) {
	if left := op.CreationTimestamp.Add(c.retention).Sub(now); left > 0 {
		return left, nil
	}
	uid := op.UID
	err := c.client.HcpV1alpha1().ARMOperations().Delete(ctx, op.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	klog.FromContext(ctx).V(2).Info("Deleted an expired operation", "operation", op.Name, "state", op.Status.State)
	return 0, nil
}

// progress reads the operation's target and says where the operation stands; known is false for a
// request the target's resource does not take, whose status is left alone. A recent operation's target
// is read from its informer only (errNotSeenYet).
func (c *Controller) progress(ctx context.Context, op *v1alpha1.ARMOperation, recent bool) (p progress, known bool, err error) {
	t := op.Spec.Target
	switch t.Resource {
	case resourceClusters:
		cluster, err := target(ctx, t.UID, c.clusters.HCPClusters(t.Namespace).Get,
			func(ctx context.Context, name string) (*v1alpha1.HCPCluster, error) {
				return c.client.HcpV1alpha1().HCPClusters(t.Namespace).Get(ctx, name, metav1.GetOptions{})
			}, t.Name, recent)
		if err != nil {
			return progress{}, false, err
		}
		if op.Spec.Request == v1alpha1.ARMOperationRevokeCredentials {
			return ofRevocation(op, cluster), true, nil
		}
		var status *resourceStatus
		if cluster != nil {
			status = &resourceStatus{ObjectMeta: &cluster.ObjectMeta, provisioningState: cluster.Status.ProvisioningState,
				observedGeneration: cluster.Status.ObservedGeneration, conditions: cluster.Status.Conditions}
		}
		p, known := ofResource(op, "cluster", status)
		return p, known, nil
	case resourceNodePools:
		pool, err := target(ctx, t.UID, c.pools.NodePools(t.Namespace).Get,
			func(ctx context.Context, name string) (*v1alpha1.NodePool, error) {
				return c.client.HcpV1alpha1().NodePools(t.Namespace).Get(ctx, name, metav1.GetOptions{})
			}, t.Name, recent)
		if err != nil {
			return progress{}, false, err
		}
		var status *resourceStatus
		if pool != nil {
			status = &resourceStatus{ObjectMeta: &pool.ObjectMeta, provisioningState: pool.Status.ProvisioningState,
				observedGeneration: pool.Status.ObservedGeneration, conditions: pool.Status.Conditions}
		}
		p, known := ofResource(op, "node pool", status)
		return p, known, nil
	case resourceAuths:
		auth, err := target(ctx, t.UID, c.auths.ExternalAuths(t.Namespace).Get,
			func(ctx context.Context, name string) (*v1alpha1.ExternalAuth, error) {
				return c.client.HcpV1alpha1().ExternalAuths(t.Namespace).Get(ctx, name, metav1.GetOptions{})
			}, t.Name, recent)
		if err != nil {
			return progress{}, false, err
		}
		var status *resourceStatus
		if auth != nil {
			status = &resourceStatus{ObjectMeta: &auth.ObjectMeta, provisioningState: auth.Status.ProvisioningState,
				observedGeneration: auth.Status.ObservedGeneration, conditions: auth.Status.Conditions}
		}
		p, known := ofResource(op, "external auth", status)
		return p, known, nil
	case resourceCredentials:
		credential, err := target(ctx, t.UID, c.credentials.BreakglassCredentials(t.Namespace).Get,
			func(ctx context.Context, name string) (*v1alpha1.BreakglassCredential, error) {
				return c.client.HcpV1alpha1().BreakglassCredentials(t.Namespace).Get(ctx, name, metav1.GetOptions{})
			}, t.Name, recent)
		if err != nil {
			return progress{}, false, err
		}
		return ofCredential(op, credential), true, nil
	}
	return progress{}, false, nil
}

// target returns the object an operation follows, nil once no object of that UID is there. The informers
// of operations and of their targets are not in step: an operation can come before the object it was
// written after, so the lister's miss, or its object of another UID, is checked against the server; for a
// recent operation it is errNotSeenYet, the target's event being due.
func target[T metav1.Object](ctx context.Context, uid types.UID, fromCache func(string) (T, error),
	fromServer func(context.Context, string) (T, error), name string, recent bool) (T, error) {
	var none T
	obj, err := fromCache(name)
	if err == nil && obj.GetUID() == uid {
		return obj, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return none, err
	}
	if recent {
		return none, errNotSeenYet
	}
	obj, err = fromServer(ctx, name)
	switch {
	case apierrors.IsNotFound(err):
		return none, nil
	case err != nil:
		return none, err
	case obj.GetUID() != uid:
		return none, nil
	}
	return obj, nil
}
