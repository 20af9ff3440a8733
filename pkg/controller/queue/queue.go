// Package queue is the work queue loop every controller of this server runs: object keys in, a sync
// function per key, failed keys retried with backoff, kube's controller shape.
package queue

import (
	"context"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// SyncFunc handles one key; it returns when to look at the key again (0: when something changes).
type SyncFunc func(ctx context.Context, key string) (requeueAfter time.Duration, err error)

// Queue is a controller's work queue of object keys and the loop that drains it.
type Queue struct {
	name  string
	queue workqueue.TypedRateLimitingInterface[string]
	sync  SyncFunc
}

// New returns a queue whose keys sync handles; name names it in logs and metrics.
func New(name string, sync SyncFunc) *Queue {
	return &Queue{
		name: name,
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
	logger := klog.FromContext(ctx).WithValues("controller", q.name)
	ctx = klog.NewContext(ctx, logger)
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
