// Package clusterstatus is what the HCPCluster controllers share: how they write status, how they read
// what agents report, and the work queue loop they all run.
package clusterstatus

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Update writes the status mutate makes of a copy of cluster, unless it changes nothing. A conflict
// comes back as an error: the caller's queue retries with the informer's newer copy.
func Update(ctx context.Context, client versioned.Interface, cluster *v1alpha1.HCPCluster, mutate func(*v1alpha1.HCPCluster)) (*v1alpha1.HCPCluster, error) {
	updated := cluster.DeepCopy()
	mutate(updated)
	if apiequality.Semantic.DeepEqual(updated.Status, cluster.Status) {
		return cluster, nil
	}
	return client.HcpV1alpha1().HCPClusters(cluster.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager(ctx)})
}

// SetCondition sets a condition of cluster for its current generation.
func SetCondition(cluster *v1alpha1.HCPCluster, conditionType string, status metav1.ConditionStatus, reason, message string) {
	// Statuses and messages come from the agent's feedback, outside input: a condition the API refuses
	// would stop every later status write of the cluster.
	switch status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
	default:
		status = metav1.ConditionUnknown
	}
	if len(message) > maxConditionMessage {
		message = strings.ToValidUTF8(message[:maxConditionMessage-len(" ...")], "") + " ..."
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: cluster.Generation,
	})
}

// maxConditionMessage is the longest condition message the API accepts, in bytes.
const maxConditionMessage = 32768

type fieldManagerKey struct{}

// WithFieldManager names the controller that writes, in the managed fields of what it writes.
func WithFieldManager(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, fieldManagerKey{}, name)
}

// FieldManager is the name WithFieldManager put in ctx.
func FieldManager(ctx context.Context) string {
	if name, ok := ctx.Value(fieldManagerKey{}).(string); ok {
		return name
	}
	return "hcp-controller"
}

// Feedback returns the feedback values the agent reported of the manifests of kind in a bundle, as
// strings (JSON for lists).
func Feedback(status *protocol.ManifestBundleStatus, kind string) map[string]string {
	values := map[string]string{}
	for _, r := range status.ResourceStatus {
		if r.ResourceMeta.Kind != kind {
			continue
		}
		for _, v := range r.StatusFeedback.Values {
			switch {
			case v.Value.String != nil:
				values[v.Name] = *v.Value.String
			case v.Value.JSONRaw != nil:
				values[v.Name] = *v.Value.JSONRaw
			case v.Value.Integer != nil:
				values[v.Name] = strconv.FormatInt(*v.Value.Integer, 10)
			case v.Value.Boolean != nil:
				values[v.Name] = strconv.FormatBool(*v.Value.Boolean)
			}
		}
	}
	return values
}

// Refusals lists why the management cluster did not apply a bundle's manifests.
func Refusals(status *protocol.ManifestBundleStatus) string {
	var reasons []string
	for _, r := range status.ResourceStatus {
		for _, c := range r.Conditions {
			if c.Type == protocol.ConditionApplied && c.Status != metav1.ConditionTrue {
				reasons = append(reasons, fmt.Sprintf("%s %s: %s", r.ResourceMeta.Kind, r.ResourceMeta.Name, c.Message))
			}
		}
	}
	if len(reasons) == 0 {
		if c := meta.FindStatusCondition(status.Conditions, protocol.ConditionApplied); c != nil {
			return c.Message
		}
		return "no reason given"
	}
	return strings.Join(reasons, "; ")
}

// OfferGate tells a Maestro source it is synced once every controller that publishes to it has offered
// all of its bundles since the start. Told by the first one alone, the source would have an agent's resync
// delete the bundles of the others, which they had not offered yet.
type OfferGate struct {
	mu      sync.Mutex
	waiting int
	synced  func()
}

// NewOfferGate returns a gate that calls synced once every controller that joined it has offered its
// bundles.
func NewOfferGate(synced func()) *OfferGate {
	return &OfferGate{synced: synced}
}

// Join counts one more controller; all join before any of them runs. The controller calls offered once it
// has offered every bundle; calls after the first count for nothing.
func (g *OfferGate) Join() (offered func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.waiting--
			last := g.waiting == 0
			g.mu.Unlock()
			if last {
				g.synced()
			}
		})
	}
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
