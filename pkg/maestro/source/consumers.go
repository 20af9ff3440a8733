package source

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// Liveness: whether a consumer's agent is there decides where clusters are placed and whether
// unacknowledged bundles are sent again. It is read from what every agent does, on any broker:
//   - it answers a status resync request naming a bundle it holds with a hash that is not that bundle's:
//     every LivenessInterval the source sends each consumer such a request (a probe), and an agent that
//     leaves one unanswered for LivenessTimeout is gone. The OCM work agent sends nothing unasked once
//     connected, so this is the only sign of it an idle source gets;
//   - it sends a spec resync request when it (re)connects, and maestro-agent also every minute: an agent
//     seen doing so periodically is gone once silent for LivenessTimeout, which covers an agent that holds
//     nothing to ask about.
//
// An OCM agent that holds nothing cannot be asked anything it would answer: it counts as connected from
// its last (re)connect until it is given a bundle and leaves the probe about it unanswered.
//
// While the source itself is not connected to the broker no agent counts as connected; what the source
// knew of each stays, since an agent that does not resync on its own could not tell it again.

// consumer is what the source knows of one consumer's agent.
type consumer struct {
	lastSeen   time.Time
	lastResync time.Time
	// periodic says the agent sent two spec resync requests within LivenessTimeout of each other, so its
	// silence alone says it is gone.
	periodic bool
	// askedAt is when the oldest probe the agent has not answered yet was sent; zero when none is pending.
	askedAt time.Time
	// connected says the agent is there, as long as the source is connected too; it changes when the
	// agent is heard from and when expire finds it gone, at since.
	connected bool
	since     time.Time
}

// AddConsumerHandler adds h to those told when a consumer's agent connects, is found gone, or sends a
// spec resync request. Add handlers before Run.
func (s *Source) AddConsumerHandler(h ConsumerHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.consumerHandlers = append(s.consumerHandlers, h)
}

// Consumer returns what the source knows of a consumer's agent.
func (s *Source) Consumer(name string) ConsumerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.consumers[name]
	if c == nil {
		return ConsumerState{}
	}
	state := ConsumerState{Connected: s.aliveLocked(c), LastSeen: c.lastSeen, Since: c.since, LastResync: c.lastResync}
	if c.connected && s.linkChanged.After(state.Since) {
		// The source's own connection came or went since the agent was last found there or gone.
		state.Since = s.linkChanged
	}
	return state
}

// setLink records that the source connected to the broker or lost it, which changes whether every agent
// found there counts as connected.
func (s *Source) setLink(up bool) {
	s.mu.Lock()
	s.connected, s.linkChanged = up, s.now()
	var changed []string
	for name, c := range s.consumers {
		if c.connected {
			changed = append(changed, name)
		}
	}
	s.countConnectedLocked()
	s.mu.Unlock()
	s.notifyConsumers(changed...)
}

func (s *Source) aliveLocked(c *consumer) bool {
	return s.connected && c != nil && c.connected
}

// runProbes sends every consumer a probe each LivenessInterval, and finds the agents gone every second.
func (s *Source) runProbes(ctx context.Context) {
	probe := time.NewTicker(s.opts.LivenessInterval)
	defer probe.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-probe.C:
			s.probeAll(ctx)
		case <-check.C:
			s.expire()
		}
	}
}

// probeAll sends a probe to every consumer the source has heard from, or holds or keeps bundles for.
func (s *Source) probeAll(ctx context.Context) {
	s.mu.Lock()
	names := s.knownConsumersLocked()
	client := s.client
	s.mu.Unlock()
	for _, name := range sets.List(names) {
		if err := s.requestStatuses(ctx, client, name, true); err != nil {
			klog.FromContext(ctx).V(2).Info("Sending a liveness probe failed", "consumer", name, "err", err)
		}
	}
}

// knownConsumersLocked names every consumer the source has heard from, or holds or keeps bundles for: a
// consumer whose agent holds only kept bundles is asked for their statuses too.
func (s *Source) knownConsumersLocked() sets.Set[string] {
	names := sets.New[string]()
	for name := range s.consumers {
		names.Insert(name)
	}
	for _, b := range s.bundles {
		names.Insert(b.consumer)
	}
	for _, k := range s.kept {
		names.Insert(k.consumer)
	}
	return names
}

// asked records that a consumer's agent was sent a probe it would answer if it is there.
func (s *Source) asked(consumerName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.consumers[consumerName]; c != nil && c.askedAt.IsZero() {
		c.askedAt = s.now()
	}
}

// expire finds gone the agents that left a probe unanswered, or stopped their periodic resyncs, for the
// liveness timeout.
func (s *Source) expire() {
	s.mu.Lock()
	now := s.now()
	var changed []string
	for name, c := range s.consumers {
		if !c.connected {
			continue
		}
		unanswered := !c.askedAt.IsZero() && now.Sub(c.askedAt) >= s.opts.LivenessTimeout
		silent := c.periodic && now.Sub(c.lastSeen) >= s.opts.LivenessTimeout
		if unanswered || silent {
			c.connected, c.since = false, now
			changed = append(changed, name)
		}
	}
	s.countConnectedLocked()
	s.mu.Unlock()
	s.notifyConsumers(changed...)
}

func (s *Source) countConnectedLocked() {
	n := 0
	for _, c := range s.consumers {
		if s.aliveLocked(c) {
			n++
		}
	}
	connectedConsumers.Set(float64(n))
}

// notifyConsumers tells the consumer handlers of changed consumers. Call it without the lock.
func (s *Source) notifyConsumers(names ...string) {
	if len(names) == 0 {
		return
	}
	s.mu.Lock()
	handlers := s.consumerHandlers
	s.mu.Unlock()
	for _, name := range names {
		for _, h := range handlers {
			h(name)
		}
	}
}

// seen records that a consumer's agent sent a valid event, and, when resync, that it was a spec resync
// request.
func (s *Source) seen(consumerName string, resync bool) {
	s.mu.Lock()
	changed := s.seenLocked(consumerName)
	if resync {
		c := s.consumers[consumerName]
		c.periodic = !c.lastResync.IsZero() && c.lastSeen.Sub(c.lastResync) < s.opts.LivenessTimeout
		c.lastResync = c.lastSeen
		changed = true
	}
	s.mu.Unlock()
	if changed {
		s.notifyConsumers(consumerName)
	}
}

// seenLocked records that a consumer's agent sent a valid event, and says whether that connected it.
func (s *Source) seenLocked(consumerName string) bool {
	c := s.consumers[consumerName]
	if c == nil {
		c = &consumer{}
		s.consumers[consumerName] = c
	}
	c.lastSeen, c.askedAt = s.now(), time.Time{}
	if c.connected {
		return false
	}
	c.connected, c.since = true, c.lastSeen
	s.countConnectedLocked()
	return true
}
