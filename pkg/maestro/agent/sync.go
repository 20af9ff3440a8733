package agent

import (
	"context"
	"errors"
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
	var refused *InspectionRefusedError
	if errors.As(err, &refused) {
		// Refused for good: the status says why, and the next generation is the only retry.
		logger.Info("Refused an inspection bundle", "rule", refused.Rule, "err", err.Error())
		a.watcher.Track(id, want.generation, want.bundle, applied)
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
		if a.stillWaiting(ctx, id, want.bundle) {
			return nil
		}
		gone, err := a.deleteObjects(ctx, id, want.bundle)
		if err != nil {
			return fmt.Errorf("deleting bundle %s: %w", id, err)
		}
		if !gone {
			// The informers queue the bundle again as its objects go (see objectGone).
			logger.V(2).Info("Waiting for the objects of the deleted bundle to be gone")
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
	a.waiting.Delete(id)
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

// stillWaiting marks a bundle as waiting for its objects to be gone, before its deletes go out so that no
// deletion is missed, and says whether it already waited and the informers still hold one of its objects.
// Then nothing needs asking: the source repeats a delete until it hears Deleted, and each repeat, like each
// object that goes, costs only this look at the informers. Only when they hold none of the bundle's objects
// (or have not listed yet) does the management cluster confirm it, with the deletes and a list.
func (a *Agent) stillWaiting(ctx context.Context, id string, bundle *protocol.ManifestBundle) bool {
	a.mu.Lock()
	waited := a.waiting.Has(id)
	a.waiting.Insert(id)
	a.mu.Unlock()
	resources, err := a.applier.resourcesOf(ctx, id, bundle)
	if err != nil {
		return false
	}
	// Also starts the informers of the bundle's resources, whose deletion events objectGone hears.
	holds, known := a.watcher.holdsObjectsOf(id, resources)
	if !known && !waited {
		// An object gone before the informers listed sends no event: look again once they have. Once per
		// bundle: a later look that finds them not listed yet comes from an event or a repeat, and this
		// one is still waiting.
		a.waiters.Go(func() {
			if a.watcher.waitOwnedListed(ctx, resources) {
				a.objectGone(id)
			}
		})
	}
	return waited && known && holds
}

// objectGone queues a bundle waiting for its objects when one of them is deleted or let go of.
func (a *Agent) objectGone(id string) {
	a.mu.Lock()
	waiting := a.waiting.Has(id)
	a.mu.Unlock()
	if waiting {
		a.queue.Add(id)
	}
}
