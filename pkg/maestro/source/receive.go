package source

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// receive handles one event from an agent. It runs on the MQTT reader: status is recorded here, under the
// lock, and anything that publishes goes to a queue.
func (s *Source) receive(ctx context.Context, topic string, e protocol.Event) {
	logger := klog.FromContext(ctx)
	source, consumerName, kind, err := protocol.ParseTopic(topic)
	if err != nil || source != s.opts.Source || kind != protocol.AgentEvents {
		s.refuse(logger, "wrong-topic", e, topic, "the topic is not an agent-events topic of this source")
		return
	}
	// The broker lets an agent publish only on its own topic, so the topic names the sender; the
	// clustername extension is only what the sender claims.
	if e.ClusterName() != consumerName {
		s.refuse(logger, "consumer-mismatch", e, topic,
			fmt.Sprintf("the event claims cluster %q but was published by consumer %q", e.ClusterName(), consumerName))
		return
	}
	t := e.EventType()
	switch t {
	case protocol.StatusUpdateRequest, protocol.StatusResyncResponse:
		s.receiveStatus(logger, topic, consumerName, e)
	case protocol.SpecResyncRequest:
		versions, err := e.ResourceVersions()
		if err != nil {
			s.refuse(logger, "undecodable", e, topic, err.Error())
			return
		}
		s.seen(consumerName, true)
		eventsReceived.WithLabelValues(e.Type()).Inc()
		s.enqueueResync(consumerName, versions)
	default:
		s.refuse(logger, "unexpected-type", e, topic, "agents may send status events and spec resync requests only")
	}
}

func (s *Source) refuse(logger klog.Logger, reason string, e protocol.Event, topic, why string) {
	eventsRefused.WithLabelValues(reason).Inc()
	logger.Info("Refused an event from an agent", "reason", reason, "why", why, "type", e.Type(), "id", e.ID(),
		"resourceID", e.ResourceID(), "topic", topic)
}

func (s *Source) receiveStatus(logger klog.Logger, topic, consumerName string, e protocol.Event) {
	status, err := e.ManifestBundleStatus()
	if err != nil {
		s.refuse(logger, "undecodable", e, topic, err.Error())
		return
	}
	seq, err := parseSequenceID(e.SequenceID())
	if err != nil {
		s.refuse(logger, "bad-sequence-id", e, topic, err.Error())
		return
	}
	id, generation := e.ResourceID(), e.ResourceVersion()

	s.mu.Lock()
	connected := s.seenLocked(consumerName)
	b := s.bundles[id]
	if connected {
		defer s.notifyConsumers(consumerName)
	}
	switch {
	case b == nil && s.kept[id] != nil && s.kept[id].consumer == consumerName:
		s.receiveKeptLocked(logger, topic, s.kept[id], e, status, seq)
		return
	case b == nil:
		s.mu.Unlock()
		// A status of a bundle deleted meanwhile, or not given back yet after a restart: the next
		// resync settles it.
		s.refuse(logger, "unknown-bundle", e, topic, "the source holds no such bundle")
		return
	case b.consumer != consumerName:
		s.mu.Unlock()
		s.refuse(logger, "not-placed", e, topic, fmt.Sprintf("the bundle is placed on consumer %q", b.consumer))
		return
	case b.status.newerThan(generation, seq):
		s.mu.Unlock()
		s.refuse(logger, "stale", e, topic, fmt.Sprintf("older than generation %d sequence %d already received", b.status.Generation, b.status.SequenceID))
		return
	}
	eventsReceived.WithLabelValues(e.Type()).Inc()
	first := b.status == nil || b.status.Generation < generation
	accepted := BundleStatus{
		Consumer: consumerName, ResourceID: id, Generation: generation,
		Status: status, Hash: e.StatusHash(), SequenceID: seq,
		Deleted: !b.deleting.IsZero() && meta.IsStatusConditionTrue(status.Conditions, protocol.ConditionDeleted),
	}
	if first && generation >= b.published && b.published > 0 && !b.publishedAt.IsZero() {
		deliveryLatency.Observe(s.now().Sub(b.publishedAt).Seconds())
		bundlesAcknowledged.Inc()
	}
	b.reportedAt = s.now()
	if !accepted.Deleted && !first && accepted.Hash != "" && accepted.Hash == b.status.Hash {
		// The status the source holds, sent again in answer to a probe: nothing for the handlers.
		b.status.SequenceID = seq
		s.mu.Unlock()
		return
	}
	if accepted.Deleted {
		delete(s.bundles, id)
		bundlesAcknowledged.Inc()
	} else {
		b.status = &accepted
	}
	handlers := s.handlers
	s.mu.Unlock()
	for _, h := range handlers {
		h(accepted)
	}
}

// receiveKeptLocked takes a status of a kept bundle as receiveStatus takes any other, and unlocks s.mu. A
// kept bundle is never being deleted by the source.
func (s *Source) receiveKeptLocked(logger klog.Logger, topic string, k *keptBundle, e protocol.Event, status *protocol.ManifestBundleStatus, seq uint64) {
	generation := e.ResourceVersion()
	if k.status.newerThan(generation, seq) {
		s.mu.Unlock()
		s.refuse(logger, "stale", e, topic, fmt.Sprintf("older than generation %d sequence %d already received", k.status.Generation, k.status.SequenceID))
		return
	}
	eventsReceived.WithLabelValues(e.Type()).Inc()
	if meta.IsStatusConditionTrue(status.Conditions, protocol.ConditionDeleted) {
		// The agent no longer holds it (a delete sent before a restart): there is nothing left to keep, and
		// the owner sends it anew when it can.
		delete(s.kept, e.ResourceID())
		s.mu.Unlock()
		logger.V(2).Info("A kept bundle was deleted on its agent", "consumer", k.consumer, "resourceID", e.ResourceID())
		return
	}
	accepted := BundleStatus{Consumer: k.consumer, ResourceID: e.ResourceID(), Generation: generation, Status: status, Hash: e.StatusHash(), SequenceID: seq}
	same := k.status != nil && k.status.Generation == generation && accepted.Hash != "" && accepted.Hash == k.status.Hash
	k.status, k.reportedAt = &accepted, s.now()
	handlers := s.handlers
	s.mu.Unlock()
	if same {
		return
	}
	for _, h := range handlers {
		h(accepted)
	}
}

// newerThan says whether st, the status held (nil when none), is at least as new as a status of generation
// and sequence ID seq: that one is stale.
func (st *BundleStatus) newerThan(generation int64, seq uint64) bool {
	return st != nil && (generation < st.Generation || (generation == st.Generation && seq <= st.SequenceID))
}

// parseSequenceID reads the sequenceid extension: a decimal number that grows with every status the agent
// sends. An event without one sorts first.
func parseSequenceID(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sequenceid %q is not a decimal number", s)
	}
	return n, nil
}
