package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// Defaults of Options.
const (
	DefaultStateNamespace = "maestro-agent"
	DefaultResyncInterval = time.Minute
	// DefaultWorkers is high because a bundle's apply waits mostly on the management cluster's API (a
	// record, a read and a write per manifest): on 2 cores 16 workers deliver about twice what 4 do.
	DefaultWorkers = 16
)

// closeTimeout bounds the goodbye to the broker when the agent stops.
const closeTimeout = 5 * time.Second

// Options configure an Agent.
type Options struct {
	// Consumer is the agent's consumer name, the management cluster it serves; Source the source ID it
	// exchanges events with.
	Consumer, Source string
	// BrokerURL (mqtts://host:port) and BrokerTLS, which presents the agent's client certificate, reach
	// the MQTT broker.
	BrokerURL string
	BrokerTLS *tls.Config
	// ClientID is the MQTT client ID; <consumer>-work-agent when empty.
	ClientID string
	// Kube reaches the management cluster.
	Kube *rest.Config
	// StateNamespace holds the agent's bundle records; it is created if missing.
	StateNamespace string
	// ResyncInterval is how often the agent sends the versions it holds besides on every connect; the
	// source also takes it as the agent's heartbeat.
	ResyncInterval time.Duration
	// Workers is how many bundles are applied, and how many statuses built, at once.
	Workers int
}

// Complete fills in the defaults.
func (o *Options) Complete() {
	if o.ClientID == "" && o.Consumer != "" {
		o.ClientID = o.Consumer + "-work-agent"
	}
	if o.StateNamespace == "" {
		o.StateNamespace = DefaultStateNamespace
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
}

// Validate checks completed options.
func (o *Options) Validate() error {
	var errs []error
	if err := protocol.ValidateID("consumer", o.Consumer); err != nil {
		errs = append(errs, err)
	}
	if err := protocol.ValidateID("source", o.Source); err != nil {
		errs = append(errs, err)
	}
	if o.BrokerURL == "" {
		errs = append(errs, errors.New("the MQTT broker URL is empty"))
	}
	if o.BrokerTLS == nil {
		errs = append(errs, errors.New("the MQTT broker needs TLS: the agent authenticates with its client certificate"))
	}
	if o.Kube == nil {
		errs = append(errs, errors.New("no client configuration for the management cluster"))
	}
	if msgs := validation.IsDNS1123Label(o.StateNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("state namespace %q: %v", o.StateNamespace, msgs))
	}
	if o.ResyncInterval <= 0 {
		errs = append(errs, fmt.Errorf("resync interval %v: must be positive", o.ResyncInterval))
	}
	if o.Workers <= 0 {
		errs = append(errs, fmt.Errorf("workers %d: must be at least 1", o.Workers))
	}
	return errors.Join(errs...)
}

// Agent is the maestro-agent of one consumer: it applies the bundles a source sends over MQTT to the
// management cluster, reports their status, and deletes them when the source does.
//
// Events only record what the source wants of a bundle and queue the bundle's resource ID; workers
// bring the cluster there one bundle at a time, retrying with backoff. Before it touches a bundle's
// objects the agent records the bundle on the cluster (record.go), so that after a restart it knows
// what it holds, re-applies it, and finishes the deletions it had started.
type Agent struct {
	opts Options
	// eventSource is the CloudEvents source of what the agent sends, as OCM's agent names it.
	eventSource               string
	sourceEvents, agentEvents string

	applier *Applier
	watcher *Watcher
	records *records
	queue   workqueue.TypedRateLimitingInterface[string]
	seq     *sequence

	// Set once by Run, before any event arrives.
	client *transport.Client
	logger klog.Logger

	resyncNow       chan struct{}
	statusResyncNow chan struct{}
	waiters         sync.WaitGroup

	// connected says the MQTT session is up and subscribed; disconnectedSince when it last went down.
	connected         atomic.Bool
	disconnectedSince atomic.Pointer[time.Time]

	mu      sync.Mutex
	started bool
	bundles map[string]*bundleState
	// waiting are the bundles whose objects are being watched until gone.
	waiting sets.Set[string]
	// statusResync is the newest status.resync_request not answered yet.
	statusResync *protocol.ResourceStatusHashList
}

// bundleState is what the agent knows of one bundle.
type bundleState struct {
	// want is the newest spec received; workers move the cluster to it.
	want spec
	// recorded is what the bundle's record holds; nil while there is none.
	recorded *spec
	// lastStatus is the status reported before the deletion started, for the Deleted status to build on.
	lastStatus *protocol.ManifestBundleStatus
	// deletedReported says the Deleted status went out, so a retry of the rest does not send it again.
	deletedReported bool

	// publish orders the bundle's status events, so that nothing follows its Deleted status.
	publish sync.Mutex
}

// New completes and validates opts and returns an agent; Run starts it.
func New(opts Options) (*Agent, error) {
	opts.Complete()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	RegisterMetrics()
	sourceEvents, err := protocol.SourceEventsTopic(opts.Source, opts.Consumer)
	if err != nil {
		return nil, err
	}
	agentEvents, err := protocol.AgentEventsTopic(opts.Source, opts.Consumer)
	if err != nil {
		return nil, err
	}
	applier, err := NewApplier(opts.Kube)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(opts.Kube)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		opts:         opts,
		eventSource:  opts.Consumer + "-work-agent",
		sourceEvents: sourceEvents,
		agentEvents:  agentEvents,
		applier:      applier,
		records:      newRecords(kube, opts.StateNamespace, opts.Consumer, opts.Source),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "maestro_agent_bundles"}),
		seq:             newSequence(time.Now()),
		logger:          klog.Background(),
		resyncNow:       make(chan struct{}, 1),
		statusResyncNow: make(chan struct{}, 1),
		bundles:         map[string]*bundleState{},
		waiting:         sets.New[string](),
	}
	if a.watcher, err = NewWatcher(opts.Kube, a.reportStatus); err != nil {
		return nil, err
	}
	return a, nil
}

// Run loads the agent's records, connects to the broker and serves until ctx ends; then it leaves the
// broker and returns nil. It returns an error only when it cannot start. An Agent runs once.
func (a *Agent) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("the agent was started before: make a new one")
	}
	a.started = true
	a.mu.Unlock()
	defer utilruntime.HandleCrashWithContext(ctx)
	defer a.queue.ShutDown()

	logger := klog.FromContext(ctx).WithValues("consumer", a.opts.Consumer, "source", a.opts.Source)
	ctx = klog.NewContext(ctx, logger)
	a.logger = logger
	if err := a.restore(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	// The session outlives ctx by the moment it takes to leave the broker cleanly.
	connCtx, cancelConn := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConn()
	client, err := transport.Connect(connCtx, transport.Config{
		URL:           a.opts.BrokerURL,
		TLS:           a.opts.BrokerTLS,
		ClientID:      a.opts.ClientID,
		Subscriptions: []string{a.sourceEvents},
		OnEvent:       a.handleEvent,
		OnInvalid:     a.handleInvalid,
		OnConnect:     a.onConnect,
		OnDisconnect: func() {
			now := time.Now()
			a.disconnectedSince.Store(&now)
			a.connected.Store(false)
		},
	})
	if err != nil {
		return err
	}
	a.client = client

	var wg sync.WaitGroup
	wg.Go(func() { a.watcher.Run(ctx, a.opts.Workers) })
	for range a.opts.Workers {
		wg.Go(func() { wait.UntilWithContext(ctx, a.runWorker, time.Second) })
	}
	wg.Go(func() { a.runSpecResync(ctx) })
	wg.Go(func() { a.runStatusResync(ctx) })
	logger.Info("Started the maestro agent", "broker", a.opts.BrokerURL, "subscription", a.sourceEvents, "stateNamespace", a.opts.StateNamespace)

	<-ctx.Done()
	logger.Info("Stopping the maestro agent")
	a.queue.ShutDown()
	closeCtx, cancel := context.WithTimeout(connCtx, closeTimeout)
	if err := client.Close(closeCtx); err != nil {
		logger.Info("Leaving the MQTT broker failed", "err", err)
	}
	cancel()
	wg.Wait()
	a.waiters.Wait()
	return nil
}

// restore loads the records into memory and queues every bundle: applied again at its generation, which
// repairs drift and tracks its status, or its deletion resumed. The management cluster may not answer
// yet when the agent starts: it retries until ctx ends.
func (a *Agent) restore(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	var specs map[string]spec
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Cap: 30 * time.Second, Steps: math.MaxInt32}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		err := a.records.ensureNamespace(ctx)
		if err == nil {
			var unreadable []error
			if specs, unreadable, err = a.records.load(ctx); err == nil {
				for _, err := range unreadable {
					logger.Error(err, "Ignoring a bundle record that cannot be read; delete it or repair it")
				}
				return true, nil
			}
		}
		logger.Info("Reading the bundle records failed; retrying", "err", err)
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("reading the bundle records in namespace %s: %w", a.opts.StateNamespace, err)
	}
	a.mu.Lock()
	for id, s := range specs {
		recorded := s
		a.bundles[id] = &bundleState{want: s, recorded: &recorded}
		a.queue.Add(id)
	}
	a.mu.Unlock()
	logger.Info("Loaded the bundle records", "bundles", len(specs))
	return nil
}

// onConnect runs after every (re)connect: the source learns what the agent holds, and the statuses that
// could not go out while disconnected go now.
func (a *Agent) onConnect(context.Context) {
	a.connected.Store(true)
	a.watcher.Requeue()
	select {
	case a.resyncNow <- struct{}{}:
	default:
	}
}

// Ready says whether the agent is doing its work: it has loaded its records and holds a session with
// the broker. It is what /readyz answers; an agent that is not ready says why.
func (a *Agent) Ready() error {
	if a.connected.Load() {
		return nil
	}
	if since := a.disconnectedSince.Load(); since != nil {
		return fmt.Errorf("not connected to the MQTT broker since %s", since.UTC().Format(time.RFC3339))
	}
	return errors.New("not connected to the MQTT broker yet (the management cluster's records load first)")
}

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
		err = validateRecordName(id)
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
		if err := a.applier.Delete(ctx, id, want.bundle); err != nil {
			return fmt.Errorf("deleting bundle %s: %w", id, err)
		}
		gone, err := a.applier.Gone(ctx, id, want.bundle)
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

// reportStatus is the Watcher's StatusFunc: it sends a changed status, unless the bundle is being deleted.
// An error makes the Watcher try again.
func (a *Agent) reportStatus(ctx context.Context, id string, generation int64, status *protocol.ManifestBundleStatus, hash string) error {
	st := a.bundle(id)
	if st == nil {
		return nil
	}
	st.publish.Lock()
	defer st.publish.Unlock()
	if a.deleting(id, st) {
		return nil
	}
	return a.publishStatus(ctx, protocol.ActionUpdateRequest, id, generation, status, hash)
}

// publishDeleted sends the last status of a bundle: the one before with the condition Deleted.
func (a *Agent) publishDeleted(ctx context.Context, id string, st *bundleState, generation int64, previous *protocol.ManifestBundleStatus) error {
	st.publish.Lock()
	defer st.publish.Unlock()
	status := DeletedStatus(generation, previous)
	hash, err := StatusHash(status)
	if err != nil {
		return err
	}
	if err := a.publishStatus(ctx, protocol.ActionUpdateRequest, id, generation, status, hash); err != nil {
		return err
	}
	a.mu.Lock()
	st.deletedReported = true
	a.mu.Unlock()
	return nil
}

// publishStatus sends a status event with the next sequence ID. The caller holds the bundle's publish lock.
func (a *Agent) publishStatus(ctx context.Context, action protocol.Action, id string, generation int64,
	status *protocol.ManifestBundleStatus, hash string) error {
	send := func(status *protocol.ManifestBundleStatus) error {
		e, err := protocol.NewStatusEvent(a.eventSource, action, protocol.BundleRef{ClusterName: a.opts.Consumer, ResourceID: id, ResourceVersion: generation}, status)
		if err != nil {
			return err
		}
		e.SetSequenceID(a.seq.next())
		e.SetStatusHash(hash)
		return a.client.Publish(ctx, a.agentEvents, e)
	}
	err := send(status)
	if errors.Is(err, protocol.ErrEventTooLarge) && status.ManifestBundle != nil {
		// The echoed spec is a courtesy to sources without a cache; the status itself must get through.
		trimmed := *status
		trimmed.ManifestBundle = nil
		err = send(&trimmed)
	}
	if err != nil {
		return err
	}
	statusEventsPublished.WithLabelValues(string(action)).Inc()
	klog.FromContext(ctx).V(4).Info("Published bundle status", "bundle", id, "generation", generation, "action", action, "statusHash", hash)
	return nil
}

// runSpecResync sends the versions the agent holds on every connect and every resync interval.
func (a *Agent) runSpecResync(ctx context.Context) {
	ticker := time.NewTicker(a.opts.ResyncInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.resyncNow:
		case <-ticker.C:
		}
		if err := a.sendSpecResync(ctx); err != nil && ctx.Err() == nil {
			a.logger.Info("Sending the spec resync request failed; trying again on reconnect or at the next interval", "err", err.Error())
		}
	}
}

func (a *Agent) sendSpecResync(ctx context.Context) error {
	e, err := protocol.NewSpecResyncRequest(a.eventSource, a.opts.Consumer, a.versions())
	if err != nil {
		return err
	}
	if err := a.client.Publish(ctx, a.agentEvents, e); err != nil {
		return err
	}
	resyncRequestsSent.Inc()
	a.logger.V(4).Info("Sent the spec resync request")
	return nil
}

// versions lists the bundles the agent holds, deleting ones included, and their newest generations.
func (a *Agent) versions() []protocol.ResourceVersion {
	a.mu.Lock()
	defer a.mu.Unlock()
	versions := make([]protocol.ResourceVersion, 0, len(a.bundles))
	for id, st := range a.bundles {
		versions = append(versions, protocol.ResourceVersion{ResourceID: id, ResourceVersion: st.want.generation})
	}
	slices.SortFunc(versions, func(x, y protocol.ResourceVersion) int { return strings.Compare(x.ResourceID, y.ResourceID) })
	return versions
}

// runStatusResync answers status.resync_requests off the connection's reader, one at a time.
func (a *Agent) runStatusResync(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.statusResyncNow:
		}
		a.mu.Lock()
		request := a.statusResync
		a.statusResync = nil
		a.mu.Unlock()
		if request != nil {
			a.answerStatusResync(ctx, request.Hashes)
		}
	}
}

// answerStatusResync sends the status of every bundle whose hash the source does not hold. A failure
// ends the answer: the source asks again.
func (a *Agent) answerStatusResync(ctx context.Context, requested []protocol.ResourceStatusHash) {
	current := map[string]string{}
	a.mu.Lock()
	ids := make([]string, 0, len(a.bundles))
	for id, st := range a.bundles {
		if !st.want.deleting {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		if _, hash, ok := a.watcher.Status(id); ok {
			current[id] = hash
		}
	}
	resend := statusesToResend(current, requested)
	for _, id := range resend {
		if err := a.resendStatus(ctx, id); err != nil {
			if ctx.Err() == nil {
				a.logger.Info("Answering the status resync request failed", "bundle", id, "err", err.Error())
			}
			return
		}
	}
	a.logger.V(2).Info("Answered the status resync request", "held", len(requested), "sent", len(resend))
}

func (a *Agent) resendStatus(ctx context.Context, id string) error {
	st := a.bundle(id)
	if st == nil {
		return nil
	}
	st.publish.Lock()
	defer st.publish.Unlock()
	if a.deleting(id, st) {
		return nil
	}
	status, hash, ok := a.watcher.Status(id)
	if !ok {
		return nil
	}
	return a.publishStatus(ctx, protocol.ActionResyncResponse, id, statusGeneration(status, st), status, hash)
}

// statusGeneration is the generation a status describes, as its Applied condition observed it.
func statusGeneration(status *protocol.ManifestBundleStatus, st *bundleState) int64 {
	if c := meta.FindStatusCondition(status.Conditions, ConditionApplied); c != nil {
		return c.ObservedGeneration
	}
	return st.want.generation
}

func (a *Agent) bundle(id string) *bundleState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bundles[id]
}

// deleting says whether the bundle is being deleted or gone, so its status must not be sent.
func (a *Agent) deleting(id string, st *bundleState) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bundles[id] != st || st.want.deleting
}
