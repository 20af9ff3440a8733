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
	"reflect"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
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
	// LivenessInterval is how often the source asks each consumer's agent for a status, to learn whether
	// it is there (consumers.go). Default 1m.
	LivenessInterval time.Duration
	// LivenessTimeout is how long a consumer's agent may leave that question unanswered (or, if it
	// resyncs periodically, stay silent) and still count as connected. Default 3m.
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

// ConsumerHandler is told the name of a consumer whose Connected changed (the agent was heard from, was
// found gone, or the source's own connection to the broker came or went), or whose agent sent a spec
// resync request. It may run on any goroutine and must not block.
type ConsumerHandler func(consumer string)

// ConsumerState is what the source knows of a consumer's agent.
type ConsumerState struct {
	// Connected says the agent was heard from and has not been found gone since (see consumers.go), and
	// the source is connected to the broker.
	Connected bool
	// LastSeen is when the agent last sent a valid event, an answer to a liveness probe included; zero if
	// never.
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
	synced           bool
	// kept holds, by resource ID, the bundles the source does not hold but an owner keeps (Keep): a resync
	// neither sends nor deletes them, and their statuses are taken as those of any other.
	kept map[string]*keptBundle
	// connected says the source is connected to the broker, since linkChanged.
	connected   bool
	linkChanged time.Time
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
	// revision counts the specs Apply took, a new generation or new content; changedInPlace says the
	// spec changed since its generation was first given (an input of the bundle changed while its
	// owner's generation did not, such as a cluster's ExternalAuth). Then the generation an agent
	// reports no longer tells whether it holds the newest content.
	revision       int64
	changedInPlace bool
	// deleting is when Delete was called; zero while the bundle is wanted.
	deleting time.Time

	// published is the newest generation the broker accepted, and whether as a delete;
	// publishedRevision the revision it accepted; publishedAt when it first did, for the delivery
	// latency.
	published         int64
	publishedRevision int64
	publishedDeleting bool
	publishedAt       time.Time

	status *BundleStatus
	// reportedAt is when the agent last sent a status, the latest probe answer included.
	reportedAt time.Time
}

// keptBundle is a bundle an owner keeps on its consumer without giving it, and its agent's last status.
type keptBundle struct {
	consumer   string
	status     *BundleStatus
	reportedAt time.Time
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
	if opts.LivenessInterval <= 0 {
		opts.LivenessInterval = time.Minute
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
		kept:           map[string]*keptBundle{},
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
	cfg.OnDisconnect = func() { s.setLink(false) }
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
	go s.runProbes(ctx)

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
// a newer generation, or the same one with the same content, is already known. The same generation with
// other content is published too, once (see sameBundle and syncBundle): a bundle may be made of more
// than its owner, whose generation it carries. Moving a bundle to another consumer is a Delete and a new
// resource, not an Apply.
func (s *Source) Apply(consumerName, id string, generation int64, spec *protocol.ManifestBundle) error {
	if err := validateRef(consumerName, id); err != nil {
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
		if k := s.unkeepLocked(consumerName, id); k != nil {
			b.status, b.reportedAt = k.status, k.reportedAt
			// The agent reported this generation of a bundle whose content the source never had: it is
			// sent all the same, once and on resyncs, as a change in place would be.
			b.changedInPlace = k.status != nil && k.status.Generation >= generation
		}
		s.bundles[id] = b
	case b.consumer != consumerName:
		return fmt.Errorf("bundle %s is placed on consumer %q, not %q: delete it there first", id, b.consumer, consumerName)
	case !b.deleting.IsZero():
		return fmt.Errorf("bundle %s is being deleted", id)
	case generation < b.generation:
		return nil
	case generation == b.generation && b.spec != nil:
		if sameBundle(b.spec, spec) {
			// The same generation again, as a resync of the owner gives it: nothing new to send.
			return nil
		}
		b.changedInPlace = true
	default:
		b.changedInPlace = false
	}
	b.generation, b.spec = generation, spec
	b.revision++
	s.bundleQueue.Add(id)
	return nil
}

// sameBundle says whether two bundles have the same content. The owner renders the same input to the
// same bytes, so comparing them is enough, and costs no more than a read of each; a difference in
// bytes alone costs one needless publish.
func sameBundle(x, y *protocol.ManifestBundle) bool {
	return reflect.DeepEqual(x, y)
}

// Delete asks the agent of consumer to delete resource id's objects with the bundle's delete option; the
// source forgets the bundle once the agent reports them gone, and tells the status handlers so (Deleted).
// A bundle the source does not hold (after a restart, say) is deleted all the same: the agent knows the
// delete option from its own record, and reports Deleted at once for a bundle it never had.
func (s *Source) Delete(consumerName, id string) error {
	if err := validateRef(consumerName, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bundles[id]
	switch {
	case b == nil:
		b = &bundle{consumer: consumerName, id: id}
		if k := s.unkeepLocked(consumerName, id); k != nil {
			b.status, b.reportedAt = k.status, k.reportedAt
		}
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

// validateRef checks a consumer's name and a resource ID as the topics and events carry them.
func validateRef(consumerName, id string) error {
	if err := protocol.ValidateID("consumer", consumerName); err != nil {
		return err
	}
	return protocol.ValidateID("resource ID", id)
}

// Keep says that resource id stays on consumer as its agent holds it, at whatever generation, while its
// owner has nothing to give the source for it (an object waiting on something, or whose spec no longer
// renders): after a restart the source holds no bundle of it, and a resync would otherwise delete it on
// the agent, with everything it applied. Its statuses are taken, and asked for, as any bundle's. A bundle
// the source holds is sent and deleted as before; Apply or Delete ends the keeping.
func (s *Source) Keep(consumerName, id string) error {
	if err := validateRef(consumerName, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.kept[id]; s.bundles[id] == nil && (k == nil || k.consumer != consumerName) {
		s.kept[id] = &keptBundle{consumer: consumerName}
	}
	return nil
}

// unkeepLocked ends the keeping of resource id, and returns what was kept on consumer.
func (s *Source) unkeepLocked(consumerName, id string) *keptBundle {
	k := s.kept[id]
	delete(s.kept, id)
	if k == nil || k.consumer != consumerName {
		return nil
	}
	return k
}

// Forget ends the keeping of resource id, whose owner is gone without deleting it (its placement went
// first): the agent's next resync deletes it, as any bundle the source does not know.
func (s *Source) Forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.kept, id)
}

// Status returns the last accepted status of resource id, held or kept.
func (s *Source) Status(id string) (BundleStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bundles[id]; b != nil && b.status != nil {
		return *b.status, true
	}
	if k := s.kept[id]; s.bundles[id] == nil && k != nil && k.status != nil {
		return *k.status, true
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
// the bundles the source neither holds nor keeps.
func (s *Source) SetSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synced = true
}
