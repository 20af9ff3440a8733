// Package clusterstatus is what the HCPCluster controllers share: how they write status, and the work
// queue loop they all run.
package clusterstatus

import (
	"context"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

// Update writes the status mutate makes of a copy of cluster, unless it changes nothing. A conflict
// comes back as an error: the caller's queue retries with the informer's newer copy.
func Update(ctx context.Context, client versioned.Interface, cluster *v1alpha1.HCPCluster, mutate func(*v1alpha1.HCPCluster)) (*v1alpha1.HCPCluster, error) {
	updated := cluster.DeepCopy()
	mutate(updated)
	if apiequality.Semantic.DeepEqual(updated.Status, cluster.Status) {
		return cluster, nil
	}
	return client.HcpV1alpha1().HCPClusters(cluster.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager(ctx)})
}

// SetCondition sets a condition of cluster for its current generation.
func SetCondition(cluster *v1alpha1.HCPCluster, conditionType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: cluster.Generation,
	})
}

type fieldManagerKey struct{}

// WithFieldManager names the controller that writes, in the managed fields of what it writes.
func WithFieldManager(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, fieldManagerKey{}, name)
}

func fieldManager(ctx context.Context) string {
	if name, ok := ctx.Value(fieldManagerKey{}).(string); ok {
		return name
	}
	return "hcp-controller"
}

// Queue is a controller's work queue of object keys and the loop that drains it.
type Queue struct {
	Name  string
	queue workqueue.TypedRateLimitingInterface[string]
	sync  func(ctx context.Context, key string) (requeueAfter time.Duration, err error)
}

// NewQueue returns a queue whose keys sync handles.
func NewQueue(name string, sync func(ctx context.Context, key string) (time.Duration, error)) *Queue {
	return &Queue{
		Name: name,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
		sync: sync,
	}
}

// Add queues a key now.
func (q *Queue) Add(key string) { q.queue.Add(key) }

// AddAfter queues a key later.
func (q *Queue) AddAfter(key string, d time.Duration) { q.queue.AddAfter(key, d) }

// Enqueue queues the key of an informer's object (or tombstone).
func (q *Queue) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	q.queue.Add(key)
}

// Handler queues every object an informer adds, changes or deletes.
func (q *Queue) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    q.Enqueue,
		UpdateFunc: func(_, obj any) { q.Enqueue(obj) },
		DeleteFunc: q.Enqueue,
	}
}

// Run runs workers until ctx ends.
func (q *Queue) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer q.queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", q.Name)
	ctx = WithFieldManager(klog.NewContext(ctx, logger), q.Name)
	logger.Info("Starting controller")
	defer logger.Info("Stopped controller")
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for q.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
}

func (q *Queue) processNext(ctx context.Context) bool {
	key, shutdown := q.queue.Get()
	if shutdown {
		return false
	}
	defer q.queue.Done(key)
	after, err := q.sync(ctx, key)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Sync failed; retrying", "key", key, "err", err)
		q.queue.AddRateLimited(key)
		return true
	}
	q.queue.Forget(key)
	if after > 0 {
		q.queue.AddAfter(key, after)
	}
	return true
}
