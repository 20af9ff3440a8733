package source

import (
	"context"
	"slices"

	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// enqueueResync records the newest spec resync request of a consumer; an older one not answered yet is
// superseded, since the agent's newest list is what counts.
func (s *Source) enqueueResync(consumerName string, versions *protocol.ResourceVersionList) {
	s.mu.Lock()
	s.pendingResyncs[consumerName] = versions
	s.mu.Unlock()
	s.resyncQueue.Add(consumerName)
}

func (s *Source) processNextResync(ctx context.Context) bool {
	consumerName, shutdown := s.resyncQueue.Get()
	if shutdown {
		return false
	}
	defer s.resyncQueue.Done(consumerName)
	if err := s.answerResync(ctx, consumerName); err != nil {
		klog.FromContext(ctx).V(2).Info("Answering a spec resync request failed; retrying", "consumer", consumerName, "err", err)
		s.resyncQueue.AddRateLimited(consumerName)
		return true
	}
	s.resyncQueue.Forget(consumerName)
	return true
}

// answerResync answers the pending spec resync request of a consumer: every bundle the agent lacks or
// holds at an older generation is sent again, a delete is sent again for every bundle being deleted that
// the agent still holds, and, once the source is synced, every bundle the agent holds that the source
// does not is deleted on the agent. A bundle being deleted that the agent does not hold is done.
func (s *Source) answerResync(ctx context.Context, consumerName string) error {
	s.mu.Lock()
	versions := s.pendingResyncs[consumerName]
	if versions == nil {
		s.mu.Unlock()
		return nil
	}
	held := make(map[string]int64, len(versions.Versions))
	for _, v := range versions.Versions {
		held[v.ResourceID] = v.ResourceVersion
	}
	answers, done := s.resyncAnswersLocked(consumerName, held)
	client := s.client
	handlers := s.handlers
	s.mu.Unlock()

	for _, d := range done {
		for _, h := range handlers {
			h(d)
		}
	}
	for _, e := range answers {
		if err := s.publish(ctx, client, consumerName, e); err != nil {
			// The request stays pending; answering it again is harmless, as the agent drops what it has.
			return err
		}
	}
	// An agent resyncs after it (re)connects, when statuses it sent may have been lost on the way: ask
	// for those whose hash the source lacks.
	if err := s.publishStatusResync(ctx, client, consumerName, s.statusHashes(consumerName)); err != nil {
		return err
	}
	s.mu.Lock()
	if s.pendingResyncs[consumerName] == versions {
		delete(s.pendingResyncs, consumerName)
	}
	s.mu.Unlock()
	resyncs.WithLabelValues("received").Inc()
	klog.FromContext(ctx).V(2).Info("Answered a spec resync request", "consumer", consumerName,
		"held", len(held), "sent", len(answers), "deletesFinished", len(done))
	return nil
}

// resyncAnswersLocked returns the events that answer an agent holding held (resource ID to generation),
// and the statuses of the deletes that are finished because the agent does not hold the bundle.
func (s *Source) resyncAnswersLocked(consumerName string, held map[string]int64) ([]protocol.Event, []BundleStatus) {
	var answers []protocol.Event
	var done []BundleStatus
	ids := make([]string, 0, len(s.bundles))
	for id, b := range s.bundles {
		if b.consumer == consumerName {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		b := s.bundles[id]
		generation, holds := held[id]
		switch {
		case !b.deleting.IsZero() && !holds:
			delete(s.bundles, id)
			done = append(done, BundleStatus{Consumer: consumerName, ResourceID: id, Generation: b.generation, Deleted: true})
			continue
		case !b.deleting.IsZero(), !holds, generation < b.generation:
		default:
			continue
		}
		e, err := s.specEventLocked(b, protocol.ActionResyncResponse)
		if err != nil {
			continue
		}
		answers = append(answers, e)
	}
	if !s.synced {
		return answers, done
	}
	var unknown []string
	for id := range held {
		if b := s.bundles[id]; b == nil || b.consumer != consumerName {
			unknown = append(unknown, id)
		}
	}
	slices.Sort(unknown)
	for _, id := range unknown {
		e, err := protocol.NewSpecEvent(s.opts.Source, protocol.ActionResyncResponse,
			protocol.BundleRef{ClusterName: consumerName, ResourceID: id, ResourceVersion: held[id]}, nil)
		if err != nil {
			continue
		}
		e.SetDeletionTimestamp(s.now())
		answers = append(answers, e)
	}
	return answers, done
}
