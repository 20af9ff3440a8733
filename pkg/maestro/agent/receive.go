package agent

import (
	"fmt"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Receiving: events arrive on the MQTT connection's reader, which must not block on the management
// cluster. So an event is only checked, merged into what the agent wants of its bundle (nextSpec) and
// queued; the workers in sync.go do the rest.

// handleInvalid counts and logs a message that is no valid event; there is nothing to answer it with.
func (a *Agent) handleInvalid(topic string, err error) {
	eventsRefused.WithLabelValues("invalid_event").Inc()
	a.logger.Info("Refused an invalid event", "topic", topic, "reason", err.Error())
}

// handleEvent runs on the connection's reader: it records what the event asks and queues the work.
func (a *Agent) handleEvent(topic string, e protocol.Event) {
	t := e.EventType()
	eventsReceived.WithLabelValues(string(t.SubResource) + "." + string(t.Action)).Inc()
	logger := a.logger.WithValues("type", e.Type(), "id", e.ID())
	refuse := func(reason string, err error) {
		eventsRefused.WithLabelValues(reason).Inc()
		logger.Info("Refused an event", "reason", reason, "err", err.Error())
	}
	if reason, err := a.checkAddress(topic, e); err != nil {
		refuse(reason, err)
		return
	}
	switch t {
	case protocol.SpecCreateRequest, protocol.SpecUpdateRequest, protocol.SpecDeleteRequest, protocol.SpecResyncResponse:
		if reason, err := a.receiveSpec(e); err != nil {
			refuse(reason, err)
		}
	case protocol.StatusResyncRequest:
		hashes, err := e.StatusHashes()
		if err != nil {
			refuse("undecodable", err)
			return
		}
		a.mu.Lock()
		// A newer request supersedes one not answered yet.
		a.statusResync = hashes
		a.mu.Unlock()
		select {
		case a.statusResyncNow <- struct{}{}:
		default:
		}
	default:
		refuse("unexpected_type", fmt.Errorf("an agent does not take %s events", t))
	}
}

// checkAddress refuses an event that is not for this agent. The broker's permissions should make that
// impossible; the check keeps a misconfigured broker from making one cluster apply another's bundles.
func (a *Agent) checkAddress(topic string, e protocol.Event) (string, error) {
	if topic != a.sourceEvents {
		return "wrong_topic", fmt.Errorf("received on %q, not on %q", topic, a.sourceEvents)
	}
	cluster := e.ClusterName()
	// Maestro addresses status.resync_request by topic only and leaves clustername empty.
	if cluster == "" && e.EventType() == protocol.StatusResyncRequest {
		return "", nil
	}
	if cluster != a.opts.Consumer {
		return "wrong_cluster", fmt.Errorf("clustername is %q, not this agent's consumer %q", cluster, a.opts.Consumer)
	}
	return "", nil
}

// receiveSpec records the spec an event carries as the bundle's newest, and queues the bundle. It
// returns why it drops the event instead.
func (a *Agent) receiveSpec(e protocol.Event) (string, error) {
	id := e.ResourceID()
	err := validateBundleID(id)
	if err == nil {
		err = validateRecordKey(id)
	}
	if err != nil {
		return "invalid_resource_id", err
	}
	bundle, err := e.ManifestBundle()
	if err != nil {
		return "undecodable", err
	}
	in := spec{
		generation: e.ResourceVersion(),
		bundle:     bundle,
		deleting:   e.EventType() == protocol.SpecDeleteRequest || !e.DeletionTimestamp().IsZero(),
	}

	a.mu.Lock()
	st := a.bundles[id]
	var current *spec
	if st != nil {
		current = &st.want
	}
	next, ok, reason := nextSpec(current, in)
	if ok {
		if st == nil {
			st = &bundleState{}
			a.bundles[id] = st
		}
		st.want = next
	}
	a.mu.Unlock()
	if !ok {
		return reason, fmt.Errorf("bundle %s generation %d: the agent holds generation %d (deleting: %v)",
			id, in.generation, current.generation, current.deleting)
	}
	a.logger.V(4).Info("Queued bundle", "bundle", id, "generation", next.generation, "deleting", next.deleting)
	a.queue.Add(id)
	return "", nil
}
