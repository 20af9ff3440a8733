package bundle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/conditions"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// configMapAdapter delivers an HCPCluster as one ConfigMap to the consumer named in status.managementCluster:
// the smallest kind the reconciler can drive, so that these tests see the reconciler and nothing else.
type configMapAdapter struct {
	client versioned.Interface
	// input is what the bundle is rendered from besides the generation.
	input string

	mu sync.Mutex
	// holding, when not empty, is why the adapter has nothing to publish: "wait", "no render",
	// "render fails", "plan fails" or "withdraw" (it needs no bundle).
	holding string
}

// holdingLabel, on an object, is what holds it, whatever the adapter's holding says.
const holdingLabel = "test.hcp.aro.azure.com/holding"

func (a *configMapAdapter) hold(why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.holding = why
}

func (a *configMapAdapter) Client(namespace string) bundle.Client[*v1alpha1.HCPCluster] {
	return a.client.HcpV1alpha1().HCPClusters(namespace)
}

func (a *configMapAdapter) Consumer(c *v1alpha1.HCPCluster) (string, error) {
	return c.Status.ManagementCluster, nil
}

func (a *configMapAdapter) Plan(c *v1alpha1.HCPCluster, consumer string) (bundle.Plan[*v1alpha1.HCPCluster], error) {
	a.mu.Lock()
	holding := a.holding
	a.mu.Unlock()
	// An object can say what holds it, for a test that changes it and the object in one write.
	if why, ok := c.Labels[holdingLabel]; ok {
		holding = why
	}
	setDelivered := func(reason string) func(*v1alpha1.HCPCluster) {
		return func(c *v1alpha1.HCPCluster) {
			conditions.Set(&c.Status.Conditions, c.Generation, v1alpha1.ConditionDelivered, metav1.ConditionFalse, reason, holding)
		}
	}
	switch holding {
	case "wait":
		return bundle.Plan[*v1alpha1.HCPCluster]{Wait: setDelivered("Waiting")}, nil
	case "withdraw":
		return bundle.Plan[*v1alpha1.HCPCluster]{Withdraw: true}, nil
	case "plan fails":
		return bundle.Plan[*v1alpha1.HCPCluster]{}, fmt.Errorf("the plan failed")
	}
	render := func() (*protocol.ManifestBundle, error) {
		cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"input":%q}}`, c.Name, a.input)
		return &protocol.ManifestBundle{Manifests: []json.RawMessage{json.RawMessage(cm)}}, nil
	}
	switch holding {
	case "no render":
		render = nil
	case "render fails":
		render = func() (*protocol.ManifestBundle, error) { return nil, fmt.Errorf("the spec does not render") }
	}
	return bundle.Plan[*v1alpha1.HCPCluster]{
		Input:        a.input,
		Render:       render,
		RenderFailed: func(c *v1alpha1.HCPCluster, err error) { setDelivered("RenderFailed")(c) },
		Report: func(c *v1alpha1.HCPCluster, report source.BundleStatus, reported bool) time.Duration {
			d := bundle.Outcome(report, reported, c.Generation, consumer, "the ConfigMap")
			conditions.Set(&c.Status.Conditions, c.Generation, v1alpha1.ConditionDelivered, d.Status, d.Reason, d.Message)
			if d.Reason == "Applied" {
				c.Status.ObservedGeneration = report.Generation
			}
			return 0
		},
	}, nil
}

// harness is a reconciler over a fake clientset, with its informers running.
type harness struct {
	r         *bundle.Reconciler[*v1alpha1.HCPCluster]
	client    *fake.Clientset
	publisher *controllertest.RecordingPublisher
	adapter   *configMapAdapter
}

func newHarness(t *testing.T, publisher bundle.Publisher, recorder *controllertest.RecordingPublisher) *harness {
	t.Helper()
	return newHarnessHolding(t, publisher, recorder, "")
}

// newHarnessHolding starts a harness whose adapter has nothing to publish, for the reason holding.
func newHarnessHolding(t *testing.T, publisher bundle.Publisher, recorder *controllertest.RecordingPublisher, holding string) *harness {
	t.Helper()
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.UID, cluster.Generation = types.UID("uid-1"), 1
	cluster.Finalizers = []string{v1alpha1.DeliveryFinalizer}
	cluster.Status.ManagementCluster = "consumer-1"
	client := fake.NewClientset(cluster)
	controllertest.ConflictOnStaleWrites(client)
	factory := informers.NewSharedInformerFactory(client, 0)
	adapter := &configMapAdapter{client: client, input: "image-1", holding: holding}
	r, err := bundle.New[*v1alpha1.HCPCluster]("test", factory.Hcp().V1alpha1().HCPClusters().Informer(), adapter, publisher)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	go r.Run(ctx, 2)
	return &harness{r: r, client: client, publisher: recorder, adapter: adapter}
}

// eventually polls cond until it holds, or fails the test with what it last said.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		ok, said := cond()
		last = said
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: never; last %s", what, last)
	}
}

func (h *harness) stored(t *testing.T) *v1alpha1.HCPCluster {
	t.Helper()
	c, err := h.client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// update changes the stored object as a user would, from a fresh read: the reconciler writes its status
// meanwhile, and a write from an older read is refused as stale.
func (h *harness) update(t *testing.T, change func(*v1alpha1.HCPCluster)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := h.client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "dev", metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(c)
		_, err = h.client.HcpV1alpha1().HCPClusters("ns").Update(context.Background(), c, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (h *harness) delivered(t *testing.T) (*metav1.Condition, int64) {
	c := h.stored(t)
	return meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionDelivered), c.Status.ObservedGeneration
}

func applied(generation int64, seq uint64) source.BundleStatus {
	return source.BundleStatus{Consumer: "consumer-1", ResourceID: "uid-1", Generation: generation, SequenceID: seq,
		Status: &protocol.ManifestBundleStatus{Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}}}}
}

func (h *harness) waitForReason(t *testing.T, reason string, generation int64) {
	t.Helper()
	eventually(t, "Delivered "+reason, func() (bool, string) {
		d, observed := h.delivered(t)
		return d != nil && d.Reason == reason && observed == generation, fmt.Sprintf("%+v, observedGeneration %d", d, observed)
	})
}

// A report renders nothing again: only a new generation, consumer or input does.
func TestBundleIsRenderedOnlyWhenItsInputsChange(t *testing.T) {
	p := controllertest.NewRecordingPublisher()
	h := newHarness(t, p, p)
	h.waitForReason(t, "Pending", 0)
	p.Report(applied(1, 1))
	h.waitForReason(t, "Applied", 1)
	p.Report(applied(1, 2))
	p.Report(applied(1, 3))
	time.Sleep(100 * time.Millisecond)
	p.Lock()
	renders := p.Renders
	p.Unlock()
	if renders != 1 {
		t.Errorf("rendered %d times for one generation and three reports, want once", renders)
	}

	h.update(t, func(c *v1alpha1.HCPCluster) {
		c.Generation = 2
	})
	eventually(t, "generation 2 published", func() (bool, string) {
		p.Lock()
		defer p.Unlock()
		return p.Applied["consumer-1/uid-1"] == 2, fmt.Sprint(p.Applied)
	})
}

// A report of a bundle no object has (another kind's, or one deleted meanwhile) changes nothing.
func TestReportOfAnUnknownUIDIsIgnored(t *testing.T) {
	p := controllertest.NewRecordingPublisher()
	h := newHarness(t, p, p)
	h.waitForReason(t, "Pending", 0)
	other := applied(1, 1)
	other.ResourceID = "uid-of-something-else"
	p.Report(other)
	time.Sleep(100 * time.Millisecond)
	if d, observed := h.delivered(t); d.Reason != "Pending" || observed != 0 {
		t.Errorf("Delivered %+v, observedGeneration %d after another bundle's report; want still Pending", d, observed)
	}
}

// A report older than the one held (a resync answer racing a newer status) does not turn status back.
func TestOlderReportDoesNotWin(t *testing.T) {
	p := controllertest.NewRecordingPublisher()
	h := newHarness(t, p, p)
	h.waitForReason(t, "Pending", 0)
	h.update(t, func(c *v1alpha1.HCPCluster) {
		c.Generation = 2
	})
	p.Report(applied(2, 5))
	h.waitForReason(t, "Applied", 2)
	p.Report(applied(1, 9))
	p.Report(applied(2, 4))
	time.Sleep(100 * time.Millisecond)
	if d, observed := h.delivered(t); d.Reason != "Applied" || observed != 2 {
		t.Errorf("Delivered %+v, observedGeneration %d after older reports; want generation 2 kept", d, observed)
	}
}

// A first status lost on the way leaves the object Pending until the source's status resync brings it
// again; then it is Applied.
func TestLostReportIsRepairedByResync(t *testing.T) {
	p := controllertest.NewRecordingPublisher()
	h := newHarness(t, p, p)
	h.waitForReason(t, "Pending", 0)
	// The agent's status of generation 1 never arrives; the resync answer does.
	p.Report(applied(1, 7))
	h.waitForReason(t, "Applied", 1)
}

// blockingPublisher holds every Apply until released, as a publish in flight.
type blockingPublisher struct {
	*controllertest.RecordingPublisher
	applying chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (p *blockingPublisher) Apply(consumer, id string, generation int64, b *protocol.ManifestBundle) error {
	p.once.Do(func() { close(p.applying) })
	<-p.release
	return p.RecordingPublisher.Apply(consumer, id, generation, b)
}

// An object deleted while its bundle is being published gets its delete published after it, and keeps
// its finalizer until the agent reports the delete done: a late report of the applied generation does
// not let it go.
func TestDeleteWhilePublishInFlight(t *testing.T) {
	p := &blockingPublisher{RecordingPublisher: controllertest.NewRecordingPublisher(), applying: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, p, p.RecordingPublisher)
	<-p.applying
	h.update(t, func(c *v1alpha1.HCPCluster) {
		c.DeletionTimestamp = ptr.To(metav1.Now())
	})
	close(p.release)
	eventually(t, "the delete published", func() (bool, string) {
		p.Lock()
		defer p.Unlock()
		return p.Deleted.Has("consumer-1/uid-1"), fmt.Sprint(p.Deleted)
	})
	p.Report(applied(1, 1))
	time.Sleep(100 * time.Millisecond)
	if f := h.stored(t).Finalizers; len(f) != 1 {
		t.Fatalf("finalizers %v after a report of the applied bundle, want the finalizer kept until the delete is done", f)
	}
	p.Report(source.BundleStatus{Consumer: "consumer-1", ResourceID: "uid-1", Generation: 1, Deleted: true})
	eventually(t, "the finalizer removed", func() (bool, string) {
		f := h.stored(t).Finalizers
		return len(f) == 0, fmt.Sprint(f)
	})
}

// A reconciler that starts (after a restart, say) with nothing to publish for an object placed on a
// consumer (it waits, its plan has no bundle, its spec does not render, its plan failed) keeps what the
// agent holds of it, before it tells the source that everything was offered: a bundle neither offered nor
// kept is deleted by the agent's next resync, with all it applied. Once it renders, it is published.
func TestObjectWithNothingToPublishKeepsItsBundle(t *testing.T) {
	for _, holding := range []string{"wait", "no render", "render fails", "plan fails"} {
		t.Run(holding, func(t *testing.T) {
			p := controllertest.NewRecordingPublisher()
			h := newHarnessHolding(t, p, p, holding)
			eventually(t, "everything offered", func() (bool, string) {
				p.Lock()
				defer p.Unlock()
				return p.Offered != nil, "not yet"
			})
			p.Lock()
			kept, applied, deleted := p.KeptWhenSynced.Has("consumer-1/uid-1"), len(p.Applied), p.Deleted.Len()
			p.Unlock()
			if !kept || applied != 0 || deleted != 0 {
				t.Fatalf("when synced: kept %v, %d applied, %d deleted; want the bundle kept, nothing applied or deleted", kept, applied, deleted)
			}

			h.adapter.hold("")
			h.update(t, func(c *v1alpha1.HCPCluster) {
				c.Generation = 2
			})
			eventually(t, "generation 2 published and kept no more", func() (bool, string) {
				p.Lock()
				defer p.Unlock()
				return p.Applied["consumer-1/uid-1"] == 2 && !p.Kept.Has("consumer-1/uid-1"), fmt.Sprint(p.Applied, p.Kept)
			})
		})
	}
}

// awaitKept waits until uid-1 is kept on consumer-1, or is not.
func awaitKept(t *testing.T, p *controllertest.RecordingPublisher, kept bool, what string) {
	t.Helper()
	eventually(t, what, func() (bool, string) {
		p.Lock()
		defer p.Unlock()
		return p.Kept.Has("consumer-1/uid-1") == kept, fmt.Sprint(p.Kept)
	})
}

// An object gone while kept (its finalizer removed without a delete of its bundle, as when its placement
// went first) is forgotten: the agent's next resync deletes what it holds.
func TestGoneObjectIsKeptNoMore(t *testing.T) {
	p := controllertest.NewRecordingPublisher()
	h := newHarnessHolding(t, p, p, "wait")
	awaitKept(t, p, true, "kept")
	if err := h.client.HcpV1alpha1().HCPClusters("ns").Delete(context.Background(), "dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitKept(t, p, false, "forgotten")
}

// A kept bundle whose object then needs none, and was neither sent nor reported on by this process, is
// kept no more: the agent's next resync deletes it.
func TestWithdrawnBundleIsKeptNoMore(t *testing.T) {
	p := controllertest.NewRecordingPublisher()
	h := newHarnessHolding(t, p, p, "wait")
	awaitKept(t, p, true, "kept")
	// In one write: a withdrawal that came with the finalizer still there would rightly delete the bundle.
	h.update(t, func(c *v1alpha1.HCPCluster) {
		c.Finalizers = nil
		c.Labels = map[string]string{holdingLabel: "withdraw"}
	})
	awaitKept(t, p, false, "kept no more")
	p.Lock()
	defer p.Unlock()
	if len(p.Deleted) != 0 {
		t.Errorf("deleted %v; want nothing sent for a bundle this process never sent", p.Deleted)
	}
}
