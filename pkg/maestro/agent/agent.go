package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// The Agent and its life: New wires the parts, Run loads what the agent held before a restart, connects
// and starts the loops of the other files; Ready tells /readyz how that went.

// workersPerSlot is how many workers there are for each of the Workers slots: the workers without a slot
// wait for their bundles' records, so that many records go out in one write while the slots stay busy.
const workersPerSlot = 4

// closeTimeout bounds the goodbye to the broker when the agent stops.
const closeTimeout = 5 * time.Second

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
	// slots holds a token for each bundle whose objects are being written or deleted: at most Workers.
	// A bundle waits for its record without one, so that while a record write is out the next records
	// gather, and the slots keep the management cluster as busy as Workers clients would.
	slots chan struct{}
	seq   *sequence

	// Set once by Run, before any event arrives.
	client *transport.Client
	logger klog.Logger

	resyncNow       chan struct{}
	statusResyncNow chan struct{}
	// waiters are the goroutines that wait for informers to list (see stillWaiting).
	waiters sync.WaitGroup

	// connected says the MQTT session is up and subscribed; disconnectedSince when it last went down.
	connected         atomic.Bool
	disconnectedSince atomic.Pointer[time.Time]

	mu      sync.Mutex
	started bool
	bundles map[string]*bundleState
	// waiting are the bundles being deleted whose objects are not all gone yet.
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
	// The agent runs beside the management cluster: gzip would cost its kube-apiserver and the agent CPU
	// on every watch event and list (the HostedCluster watch compressed each event of about 6 KB) to save
	// bandwidth it does not lack. hcp-apiserver's loopback clients leave it out for the same reason.
	kubeConfig := rest.CopyConfig(opts.Kube)
	kubeConfig.DisableCompression = true
	applier, err := NewApplier(kubeConfig)
	if err != nil {
		return nil, err
	}
	kube, err := recordsClient(kubeConfig)
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
		slots:           make(chan struct{}, opts.Workers),
		seq:             newSequence(time.Now()),
		logger:          klog.Background(),
		resyncNow:       make(chan struct{}, 1),
		statusResyncNow: make(chan struct{}, 1),
		bundles:         map[string]*bundleState{},
		waiting:         sets.New[string](),
	}
	if a.watcher, err = NewWatcher(kubeConfig, a.reportStatus); err != nil {
		return nil, err
	}
	applier.cached = a.watcher.cachedOwned
	a.watcher.onOwnedGone = a.objectGone
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
	var wg sync.WaitGroup
	defer wg.Wait()
	recordsCtx, stopRecords := context.WithCancel(ctx)
	defer stopRecords()
	// One loop writes the records, for restore's migration of old ones first and then for the workers.
	wg.Go(func() { a.records.run(recordsCtx) })
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

	wg.Go(func() { a.watcher.Run(ctx, a.opts.Workers) })
	for range a.opts.Workers * workersPerSlot {
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
				err = a.records.migrate(ctx, specs)
			}
			if err == nil {
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
