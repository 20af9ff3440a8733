package source

import (
	"context"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// Resync repairs what the network lost, both ways: an agent sends a spec resync request with the
// generations it holds and is sent what it lacks; the source sends a status resync request with the
// status hashes it holds and is sent the statuses that differ.

// maxHashesPerRequest keeps a status resync request well under protocol.MaxEventBytes (an entry is about
// 130 bytes); an agent answers each request about the bundles it names, so a long list goes in parts.
const maxHashesPerRequest = 2000

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
// holds at an older generation is sent again, and so is every bundle whose content changed at the
// generation the agent holds (the generation cannot say whether the agent has that content; applying
// it again is harmless); a delete is sent again for every bundle being deleted that the agent still
// holds, and, once the source is synced, every bundle the agent holds that the source neither holds
// nor keeps is deleted on the agent. A bundle being deleted that the agent does not hold is done.
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
	if err := s.requestStatuses(ctx, client, consumerName, false); err != nil {
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
		case !b.deleting.IsZero(), !holds, generation < b.generation, generation == b.generation && b.changedInPlace:
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
		if b, k := s.bundles[id], s.kept[id]; (b == nil || b.consumer != consumerName) && (k == nil || k.consumer != consumerName) {
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

// onConnect runs after every (re)connect: what was published while the connection was down failed and is
// being retried; what agents sent meanwhile is asked for again with a status resync request per consumer,
// which also probes whether each agent is still there.
func (s *Source) onConnect(ctx context.Context) {
	s.setLink(true)
	s.mu.Lock()
	consumers := s.knownConsumersLocked()
	for _, b := range s.bundles {
		// What failed while the connection was down goes out now, not when its backoff (up to 30 s) ends.
		if b.published < b.generation || b.publishedDeleting != !b.deleting.IsZero() || (b.changedInPlace && b.publishedRevision < b.revision) {
			s.bundleQueue.Forget(b.id)
			s.bundleQueue.Add(b.id)
		}
	}
	client := s.client
	s.mu.Unlock()
	for _, consumerName := range sets.List(consumers) {
		if err := s.requestStatuses(ctx, client, consumerName, true); err != nil {
			klog.FromContext(ctx).Error(err, "Sending a status resync request", "consumer", consumerName)
		}
	}
}

// requestStatuses sends a consumer's agent a status resync request that names every bundle the source
// holds for it, with the hash of the status the source holds, or an empty one when it holds none. An OCM
// work agent answers about the bundles named only, so a bundle whose first status was lost must be named
// to be repaired. As a probe, the request also leaves out the hash of the status heard longest ago, so
// that an agent that is there has something to answer (see consumers.go).
func (s *Source) requestStatuses(ctx context.Context, client *transport.Client, consumerName string, probe bool) error {
	s.mu.Lock()
	hashes, answerable := s.statusHashesLocked(consumerName, probe)
	s.mu.Unlock()
	if probe && answerable {
		// Before it goes out: the answer may come back before Publish returns.
		s.asked(consumerName)
	}
	for start := 0; start == 0 || start < len(hashes); start += maxHashesPerRequest {
		part := hashes[start:min(start+maxHashesPerRequest, len(hashes))]
		e, err := protocol.NewStatusResyncRequest(s.opts.Source, consumerName, part)
		if err != nil {
			return err
		}
		if err := s.publish(ctx, client, consumerName, e); err != nil {
			return err
		}
	}
	resyncs.WithLabelValues("sent").Inc()
	return nil
}

// statusHashesLocked lists, by resource ID, every bundle the source holds or keeps for a consumer with
// the hash of its status. With probe, the status heard longest ago of a bundle not being deleted is listed
// without its hash. answerable says an agent that is there would answer: it was sent a bundle it still
// holds, or reported on one kept.
func (s *Source) statusHashesLocked(consumerName string, probe bool) (hashes []protocol.ResourceStatusHash, answerable bool) {
	probed := -1 // the index in hashes of the status heard longest ago
	var probedAt time.Time
	add := func(id string, status *BundleStatus, reportedAt time.Time, probeable bool) {
		h := protocol.ResourceStatusHash{ResourceID: id}
		if status != nil {
			h.StatusHash = status.Hash
			if probeable && (probed < 0 || reportedAt.Before(probedAt)) {
				probed, probedAt = len(hashes), reportedAt
			}
		}
		hashes = append(hashes, h)
	}
	for _, b := range s.bundles {
		if b.consumer != consumerName {
			continue
		}
		if b.deleting.IsZero() && b.published > 0 {
			answerable = true
		}
		add(b.id, b.status, b.reportedAt, b.deleting.IsZero())
	}
	for id, k := range s.kept {
		if k.consumer != consumerName {
			continue
		}
		if k.status != nil {
			answerable = true
		}
		add(id, k.status, k.reportedAt, true)
	}
	if probe && probed >= 0 {
		hashes[probed].StatusHash = ""
	}
	slices.SortFunc(hashes, func(x, y protocol.ResourceStatusHash) int { return strings.Compare(x.ResourceID, y.ResourceID) })
	return hashes, answerable
}
