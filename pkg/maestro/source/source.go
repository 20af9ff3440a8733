// Package source is the server side of Maestro (DESIGN.md section 4), run inside hcp-apiserver: it
// publishes one ManifestBundle per resource to the agent of the consumer it is placed on, keyed by the
// resource's UID with its generation as resource version, takes the status events agents send back, and
// repairs what the network lost with resyncs in both directions.
//
// The source holds the bundles its owner gave it in memory; the owner (the controllers) is the durable
// truth and gives every bundle again after a restart, then calls SetSynced. Until then the source does not
// tell agents to delete bundles it does not know, since it may just not know them yet.
package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// Options configure a Source.
type Options struct {
	// Source is this source's ID: the <source> of the topics, and the CloudEvents source.
	Source string
	// Broker is how to reach the broker: URL, TLS and client ID. The source sets the rest.
	Broker transport.Config
	// Workers publish bundles concurrently, one bundle at a time each. Default 4.
	Workers int
	// RepublishAfter is how long a published generation may go without a status from a connected agent
	// before it is sent again: a lost message costs this much, not a resync interval. Default 30s.
	RepublishAfter time.Duration
	// LivenessTimeout is how long a consumer's agent may stay silent and still count as connected. Agents
	// send a spec resync request at least every minute. Default 3m.
	LivenessTimeout time.Duration
}

// BundleStatus is the last status an agent reported for a bundle.
type BundleStatus struct {
	Consumer   string
	ResourceID string
	// Generation is the bundle generation the agent reported on.
	Generation int64
	Status     *protocol.ManifestBundleStatus
	Hash       string
	SequenceID uint64
	// Deleted says the agent deleted the bundle's objects; the source has forgotten the bundle.
	Deleted bool
}

// StatusHandler is told of every status the source accepts. It runs on the MQTT reader and must not block.
type StatusHandler func(BundleStatus)

// ConsumerHandler is told the name of a consumer whose agent connected or went silent, or sent a spec
// resync request. It may run on any goroutine and must not block.
type ConsumerHandler func(consumer string)

// ConsumerState is what the source knows of a consumer's agent.
type ConsumerState struct {
	// Connected says the agent was heard from within the liveness timeout.
	Connected bool
	// LastSeen is when the agent last sent a valid event; zero if never.
	LastSeen time.Time
	// Since is when Connected last changed; zero if the agent was never heard from.
	Since time.Time
	// LastResync is when the agent last sent a spec resync request, as it does on every (re)connect;
	// zero if never.
	LastResync time.Time
}

// Source publishes bundles and ingests their status. New makes one, Run serves it.
type Source struct {
	opts   Options
	client *transport.Client
	now    func() time.Time

	// bundles is keyed by resource ID; resyncQueue by consumer name.
	bundleQueue workqueue.TypedRateLimitingInterface[string]
	resyncQueue workqueue.TypedRateLimitingInterface[string]

	mu        sync.Mutex
	bundles   map[string]*bundle
	consumers map[string]*consumer
	handlers  []StatusHandler
	// consumerHandlers are told of consumers whose state changed.
	consumerHandlers []ConsumerHandler
	synced    bool
	connected bool
	// pendingResyncs holds, per consumer, the versions of the newest spec resync request not answered yet.
	pendingResyncs map[string]*protocol.ResourceVersionList
}

// bundle is the desired state of one resource and what is known of its delivery.
type bundle struct {
	consumer   string
	id         string
	generation int64
	// firstGeneration is the generation the bundle was created with: until the agent reports on it, it
	// goes out as a create_request, however often it is sent.
	firstGeneration int64
	spec            *protocol.ManifestBundle
	// deleting is when Delete was called; zero while the bundle is wanted.
	deleting time.Time

	// published is the newest generation the broker accepted, and whether as a delete; publishedAt
	// when it first did, for the delivery latency.
	published         int64
	publishedDeleting bool
	publishedAt       time.Time

	status *BundleStatus
}

type consumer struct {
	lastSeen   time.Time
	lastResync time.Time
	// connected is what Consumer reports; it changes on an event and when the liveness timeout passes,
	// at since.
	connected bool
	since     time.Time
}

// New checks opts and returns a Source; nothing connects until Run.
func New(opts Options) (*Source, error) {
	if err := protocol.ValidateID("source", opts.Source); err != nil {
		return nil, err
	}
	if opts.Broker.URL == "" {
		return nil, errors.New("maestro source: no broker URL")
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.RepublishAfter <= 0 {
		opts.RepublishAfter = 30 * time.Second
	}
	if opts.LivenessTimeout <= 0 {
		opts.LivenessTimeout = 3 * time.Minute
	}
	if opts.Broker.ClientID == "" {
		opts.Broker.ClientID = opts.Source
	}
	registerMetrics()
	return &Source{
		opts: opts,
		now:  time.Now,
		bundleQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "maestro-source-bundles"}),
		resyncQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "maestro-source-resyncs"}),
		bundles:        map[string]*bundle{},
		consumers:      map[string]*consumer{},
		pendingResyncs: map[string]*protocol.ResourceVersionList{},
	}, nil
}

// Run connects to the broker, subscribes to every consumer's agent events, and publishes until ctx ends.
func (s *Source) Run(ctx context.Context) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer s.bundleQueue.ShutDown()
	defer s.resyncQueue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("source", s.opts.Source)
	ctx = klog.NewContext(ctx, logger)

	subscription, err := protocol.AgentEventsSubscription(s.opts.Source)
	if err != nil {
		return err
	}
	cfg := s.opts.Broker
	cfg.Subscriptions = []string{subscription}
	cfg.OnEvent = func(topic string, e protocol.Event) { s.receive(ctx, topic, e) }
	cfg.OnInvalid = func(topic string, err error) {
		eventsRefused.WithLabelValues("undecodable").Inc()
		logger.Info("Dropped a message that is not a valid event", "topic", topic, "err", err)
	}
	cfg.OnConnect = s.onConnect
	cfg.OnDisconnect = func() {
		s.mu.Lock()
		s.connected = false
		s.mu.Unlock()
		s.expire()
	}
	client, err := transport.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.client = client
	s.mu.Unlock()
	logger.Info("Starting the Maestro source", "broker", cfg.URL)

	for range s.opts.Workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for s.processNextBundle(ctx) {
			}
		}, time.Second)
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for s.processNextResync(ctx) {
		}
	}, time.Second)
	go wait.UntilWithContext(ctx, func(context.Context) { s.expire() }, time.Second)

	<-ctx.Done()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := client.Close(closeCtx); err != nil {
		logger.V(2).Info("Closing the MQTT session", "err", err)
	}
	logger.Info("Stopped the Maestro source")
	return nil
}

// Apply makes generation of bundle the desired state of resource id on consumer, and publishes it unless
// that generation or a newer one is already known. Moving a bundle to another consumer is a Delete and a
// new resource, not an Apply.
func (s *Source) Apply(consumerName, id string, generation int64, spec *protocol.ManifestBundle) error {
	if err := protocol.ValidateID("consumer", consumerName); err != nil {
		return err
	}
	if err := protocol.ValidateID("resource ID", id); err != nil {
		return err
	}
	if spec == nil {
		return fmt.Errorf("bundle %s has no manifests", id)
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("bundle %s: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bundles[id]
	switch {
	case b == nil:
		b = &bundle{consumer: consumerName, id: id, firstGeneration: generation}
		s.bundles[id] = b
	case b.consumer != consumerName:
		return fmt.Errorf("bundle %s is placed on consumer %q, not %q: delete it there first", id, b.consumer, consumerName)
	case !b.deleting.IsZero():
		return fmt.Errorf("bundle %s is being deleted", id)
	case generation < b.generation:
		return nil
	case generation == b.generation && b.spec != nil:
		// The same generation again, as a resync of the owner gives it: nothing new to send.
		return nil
	}
	b.generation, b.spec = generation, spec
	s.bundleQueue.Add(id)
	return nil
}

// Delete asks the agent of consumer to delete resource id's objects with the bundle's delete option; the
// source forgets the bundle once the agent reports them gone, and tells the status handlers so (Deleted).
// A bundle the source does not hold (after a restart, say) is deleted all the same: the agent knows the
// delete option from its own record, and reports Deleted at once for a bundle it never had.
func (s *Source) Delete(consumerName, id string) error {
	if err := protocol.ValidateID("consumer", consumerName); err != nil {
		return err
	}
	if err := protocol.ValidateID("resource ID", id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bundles[id]
	switch {
	case b == nil:
		b = &bundle{consumer: consumerName, id: id}
		s.bundles[id] = b
	case b.consumer != consumerName:
		return fmt.Errorf("bundle %s is placed on consumer %q, not %q", id, b.consumer, consumerName)
	case !b.deleting.IsZero():
		return nil
	}
	b.deleting = s.now()
	s.bundleQueue.Add(id)
	return nil
}

// Status returns the last accepted status of resource id.
func (s *Source) Status(id string) (BundleStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bundles[id]; b != nil && b.status != nil {
		return *b.status, true
	}
	return BundleStatus{}, false
}

// Has says whether the source holds resource id (being deleted or not).
func (s *Source) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bundles[id] != nil
}

// AddStatusHandler adds h to those told of every accepted status. Add handlers before Run.
func (s *Source) AddStatusHandler(h StatusHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = append(s.handlers, h)
}

// SetSynced says the owner has given every bundle it wants: from now on a resync deletes, on the agent,
// the bundles the source does not hold.
func (s *Source) SetSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synced = true
}

// AddConsumerHandler adds h to those told when a consumer's agent connects, goes silent, or sends a
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
	return ConsumerState{Connected: c.connected, LastSeen: c.lastSeen, Since: c.since, LastResync: c.lastResync}
}

func (s *Source) aliveLocked(c *consumer) bool {
	return s.connected && c != nil && c.connected
}

// expire counts as gone the agents not heard from within the liveness timeout, and every agent while the
// source itself is not connected to the broker.
func (s *Source) expire() {
	s.mu.Lock()
	var changed []string
	for name, c := range s.consumers {
		if c.connected && (!s.connected || s.now().Sub(c.lastSeen) >= s.opts.LivenessTimeout) {
			c.connected, c.since = false, s.now()
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

// onConnect runs after every (re)connect: what was published while the connection was down failed and is
// being retried; what agents sent meanwhile is asked for again with a status resync request per consumer.
func (s *Source) onConnect(ctx context.Context) {
	s.mu.Lock()
	s.connected = true
	consumers := sets.New[string]()
	for _, b := range s.bundles {
		consumers.Insert(b.consumer)
		// What failed while the connection was down goes out now, not when its backoff (up to 30 s) ends.
		if b.published < b.generation || b.publishedDeleting != !b.deleting.IsZero() {
			s.bundleQueue.Forget(b.id)
			s.bundleQueue.Add(b.id)
		}
	}
	client := s.client
	s.mu.Unlock()
	for _, consumerName := range sets.List(consumers) {
		if err := s.publishStatusResync(ctx, client, consumerName, s.statusHashes(consumerName)); err != nil {
			klog.FromContext(ctx).Error(err, "Sending a status resync request", "consumer", consumerName)
		}
	}
}

// statusHashes returns the hashes of the statuses the source holds for a consumer's bundles.
func (s *Source) statusHashes(consumerName string) []protocol.ResourceStatusHash {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hashes []protocol.ResourceStatusHash
	for _, b := range s.bundles {
		if b.consumer == consumerName && b.status != nil && b.status.Hash != "" {
			hashes = append(hashes, protocol.ResourceStatusHash{ResourceID: b.id, StatusHash: b.status.Hash})
		}
	}
	slices.SortFunc(hashes, func(x, y protocol.ResourceStatusHash) int { return strings.Compare(x.ResourceID, y.ResourceID) })
	return hashes
}

func (s *Source) publishStatusResync(ctx context.Context, client *transport.Client, consumerName string, hashes []protocol.ResourceStatusHash) error {
	e, err := protocol.NewStatusResyncRequest(s.opts.Source, consumerName, hashes)
	if err != nil {
		return err
	}
	if err := s.publish(ctx, client, consumerName, e); err != nil {
		return err
	}
	resyncs.WithLabelValues("sent").Inc()
	return nil
}

func (s *Source) publish(ctx context.Context, client *transport.Client, consumerName string, e protocol.Event) error {
	if client == nil {
		return errors.New("not connected to the broker yet")
	}
	topic, err := protocol.SourceEventsTopic(s.opts.Source, consumerName)
	if err != nil {
		return err
	}
	if err := client.Publish(ctx, topic, e); err != nil {
		publishErrors.Inc()
		return err
	}
	eventsPublished.WithLabelValues(e.Type()).Inc()
	return nil
}

func (s *Source) processNextBundle(ctx context.Context) bool {
	id, shutdown := s.bundleQueue.Get()
	if shutdown {
		return false
	}
	defer s.bundleQueue.Done(id)
	retryAfter, err := s.syncBundle(ctx, id)
	switch {
	case err != nil:
		klog.FromContext(ctx).V(2).Info("Publishing a bundle failed; retrying", "resourceID", id, "err", err)
		s.bundleQueue.AddRateLimited(id)
	default:
		s.bundleQueue.Forget(id)
		if retryAfter > 0 {
			s.bundleQueue.AddAfter(id, retryAfter)
		}
	}
	return true
}

// syncBundle publishes what the agent of a bundle has not acknowledged: a new generation, a delete, or,
// after RepublishAfter without a status from a connected agent, the same event again. It returns when to
// look again.
func (s *Source) syncBundle(ctx context.Context, id string) (time.Duration, error) {
	s.mu.Lock()
	b := s.bundles[id]
	if b == nil {
		s.mu.Unlock()
		return 0, nil
	}
	deleting := !b.deleting.IsZero()
	acked := b.status != nil && b.status.Generation >= b.generation && !deleting
	fresh := b.published < b.generation || deleting != b.publishedDeleting
	due := s.now().Sub(b.publishedAt) >= s.opts.RepublishAfter
	alive := s.aliveLocked(s.consumers[b.consumer])
	if acked || (!fresh && !(due && alive)) {
		s.mu.Unlock()
		if acked {
			return 0, nil
		}
		// Not acknowledged yet: look again once a republish would be due.
		return max(s.opts.RepublishAfter-s.now().Sub(b.publishedAt), time.Second), nil
	}
	e, err := s.specEventLocked(b, specAction(b))
	generation, client := b.generation, s.client
	s.mu.Unlock()
	if err != nil {
		// A bundle that cannot be encoded never will be; its owner must fix it.
		klog.FromContext(ctx).Error(err, "Cannot encode a bundle", "resourceID", id)
		return 0, nil
	}
	if err := s.publish(ctx, client, b.consumer, e); err != nil {
		return 0, err
	}
	klog.FromContext(ctx).V(4).Info("Published a bundle", "resourceID", id, "generation", generation, "type", e.Type())
	s.mu.Lock()
	if b.published != generation || b.publishedDeleting != deleting {
		b.publishedAt = s.now()
	}
	b.published, b.publishedDeleting = generation, deleting
	s.mu.Unlock()
	return s.opts.RepublishAfter, nil
}

func specAction(b *bundle) protocol.Action {
	switch {
	case !b.deleting.IsZero():
		return protocol.ActionDeleteRequest
	case b.status == nil && b.generation == b.firstGeneration:
		return protocol.ActionCreateRequest
	default:
		return protocol.ActionUpdateRequest
	}
}

// specEventLocked builds the spec event of b. A delete carries the bundle too, so that an agent that
// lost its copy still knows the delete option.
func (s *Source) specEventLocked(b *bundle, action protocol.Action) (protocol.Event, error) {
	ref := protocol.BundleRef{ClusterName: b.consumer, ResourceID: b.id, ResourceVersion: b.generation}
	e, err := protocol.NewSpecEvent(s.opts.Source, action, ref, b.spec)
	if err != nil {
		return e, err
	}
	if !b.deleting.IsZero() {
		e.SetDeletionTimestamp(b.deleting)
	}
	return e, nil
}

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

// seen records that a consumer's agent sent a valid event, and, when resync, that it was a spec resync
// request.
func (s *Source) seen(consumerName string, resync bool) {
	s.mu.Lock()
	changed := s.seenLocked(consumerName)
	if resync {
		s.consumers[consumerName].lastResync = s.now()
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
	c.lastSeen = s.now()
	if c.connected {
		return false
	}
	c.connected, c.since = true, c.lastSeen
	s.countConnectedLocked()
	return true
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
	case b.status != nil && (generation < b.status.Generation || (generation == b.status.Generation && seq <= b.status.SequenceID)):
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
