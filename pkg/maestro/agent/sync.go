package agent

import (
	"context"
	"fmt"
	"reflect"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Applying and deleting: workers take a bundle's resource ID off the queue and bring the management
// cluster to the newest spec received, one bundle at a time, retrying with backoff. The record of the
// bundle is written before its objects are touched and removed last, so that a restart resumes the work.

func (a *Agent) runWorker(ctx context.Context) {
	for a.processNextWorkItem(ctx) {
	}
}

func (a *Agent) processNextWorkItem(ctx context.Context) bool {
	id, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(id)
	if err := a.sync(ctx, id); err != nil {
		applyErrors.Inc()
		utilruntime.HandleErrorWithContext(ctx, err, "Syncing bundle; retrying", "bundle", id)
		a.queue.AddRateLimited(id)
		return true
	}
	a.queue.Forget(id)
	return true
}

// sync brings the management cluster to the newest spec of a bundle.
func (a *Agent) sync(ctx context.Context, id string) error {
	a.mu.Lock()
	st := a.bundles[id]
	if st == nil {
		a.mu.Unlock()
		return nil
	}
	want, recorded := st.want, st.recorded
	a.mu.Unlock()
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("bundle", id, "generation", want.generation))
	if want.deleting {
		return a.syncDelete(ctx, id, st, want, recorded)
	}
	return a.syncApply(ctx, id, st, want, recorded)
}

func (a *Agent) syncApply(ctx context.Context, id string, st *bundleState, want spec, recorded *spec) error {
	logger := klog.FromContext(ctx)
	// Recorded first: a crash in the middle of the apply must leave the agent knowing the bundle.
	if err := a.record(ctx, id, st, want, recorded); err != nil {
		return err
	}
	release, err := a.acquireSlot(ctx)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	applied, err := a.applier.Apply(ctx, id, want.generation, want.bundle)
	applyDuration.Observe(time.Since(start).Seconds())
	if IsStaleGeneration(err) {
		// The cluster holds a newer generation than the record did; the next resync brings the newest.
		eventsRefused.WithLabelValues(refusedStale).Inc()
		logger.Info("Dropped a bundle generation older than one applied", "err", err.Error())
		return nil
	}
	if applied != nil {
		// Also when some manifests failed: their status says why.
		a.watcher.Track(id, want.generation, want.bundle, applied)
	}
	if err != nil {
		return fmt.Errorf("applying bundle %s generation %d: %w", id, want.generation, err)
	}
	bundlesApplied.Inc()
	logger.V(2).Info("Applied bundle", "manifests", len(applied))
	return nil
}

// syncDelete deletes the objects of a bundle; once they are gone it reports the bundle Deleted and
// forgets it. It does not wait for the objects: a watch queues the bundle again when they are gone.
func (a *Agent) syncDelete(ctx context.Context, id string, st *bundleState, want spec, recorded *spec) error {
	logger := klog.FromContext(ctx)
	a.mu.Lock()
	if st.lastStatus == nil {
		st.lastStatus, _, _ = a.watcher.Status(id)
	}
	a.mu.Unlock()
	// Statuses of the objects going away would only race the Deleted status.
	a.watcher.Forget(id)

	if !st.deletedReported {
		// A bundle the agent never had, deleted without manifests, has nothing to delete nor record.
		if recorded != nil || (want.bundle != nil && len(want.bundle.Manifests) > 0) {
			if err := a.record(ctx, id, st, want, recorded); err != nil {
				return err
			}
		}
		gone, err := a.deleteObjects(ctx, id, want.bundle)
		if err != nil {
			return fmt.Errorf("deleting bundle %s: %w", id, err)
		}
		if !gone {
			logger.V(2).Info("Waiting for the objects of the deleted bundle to be gone")
			a.waitGone(ctx, id, want.bundle)
			return nil
		}
		a.mu.Lock()
		previous := st.lastStatus
		a.mu.Unlock()
		if err := a.publishDeleted(ctx, id, st, want.generation, previous); err != nil {
			return err
		}
	}
	// The record goes last: until the source has the Deleted status, a restart must resume the deletion.
	if err := a.records.remove(ctx, id); err != nil {
		return err
	}
	a.applier.Forget(id)
	a.mu.Lock()
	if a.bundles[id] == st {
		delete(a.bundles, id)
	}
	a.mu.Unlock()
	deletesCompleted.Inc()
	logger.V(2).Info("Deleted bundle")
	return nil
}

// deleteObjects deletes, or orphans, the objects of a bundle and says whether they are gone.
func (a *Agent) deleteObjects(ctx context.Context, id string, bundle *protocol.ManifestBundle) (bool, error) {
	release, err := a.acquireSlot(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	if err := a.applier.Delete(ctx, id, bundle); err != nil {
		return false, err
	}
	return a.applier.Gone(ctx, id, bundle)
}

// acquireSlot waits for a worker slot (see Agent.slots) and returns what gives it back.
func (a *Agent) acquireSlot(ctx context.Context) (release func(), err error) {
	if a.slots == nil {
		return func() {}, nil
	}
	select {
	case a.slots <- struct{}{}:
		return func() { <-a.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// record writes want as the bundle's record unless the record holds it already.
func (a *Agent) record(ctx context.Context, id string, st *bundleState, want spec, recorded *spec) error {
	if recorded != nil && sameSpec(*recorded, want) {
		return nil
	}
	if err := a.records.save(ctx, id, want); err != nil {
		return err
	}
	a.mu.Lock()
	st.recorded = &want
	a.mu.Unlock()
	return nil
}

func sameSpec(x, y spec) bool {
	return x.generation == y.generation && x.deleting == y.deleting && reflect.DeepEqual(x.bundle, y.bundle)
}

// waitGone watches, in the background, until the objects of a bundle are gone and queues it again then.
func (a *Agent) waitGone(ctx context.Context, id string, bundle *protocol.ManifestBundle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting.Has(id) {
		return
	}
	a.waiting.Insert(id)
	a.waiters.Go(func() {
		err := a.applier.WaitGone(ctx, id, bundle)
		a.mu.Lock()
		a.waiting.Delete(id)
		a.mu.Unlock()
		switch {
		case ctx.Err() != nil:
		case err != nil:
			utilruntime.HandleErrorWithContext(ctx, err, "Waiting for the objects of a deleted bundle to be gone; retrying", "bundle", id)
			a.queue.AddRateLimited(id)
		default:
			a.queue.Add(id)
		}
	})
}
