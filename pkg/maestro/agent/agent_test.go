package agent

import (
	"crypto/tls"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

const (
	testConsumer = "mc-1"
	testSource   = "hcp"
)

// eventAgent is an agent that only receives events: no cluster, no broker.
func eventAgent(t *testing.T) *Agent {
	t.Helper()
	RegisterMetrics()
	sourceEvents, err := protocol.SourceEventsTopic(testSource, testConsumer)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{
		opts:            Options{Consumer: testConsumer, Source: testSource},
		sourceEvents:    sourceEvents,
		queue:           workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		logger:          ktesting.NewLogger(t, ktesting.NewConfig()),
		bundles:         map[string]*bundleState{},
		statusResyncNow: make(chan struct{}, 1),
	}
	t.Cleanup(a.queue.ShutDown)
	return a
}

func specEvent(t *testing.T, action protocol.Action, cluster, id string, generation int64, bundle *protocol.ManifestBundle) protocol.Event {
	t.Helper()
	e, err := protocol.NewSpecEvent(testSource, action, protocol.BundleRef{ClusterName: cluster, ResourceID: id, ResourceVersion: generation}, bundle)
	if err != nil {
		t.Fatal(err)
	}
	if action == protocol.ActionDeleteRequest {
		e.SetDeletionTimestamp(time.Now())
	}
	return e
}

func TestHandleEvent(t *testing.T) {
	a := eventAgent(t)
	bundle := func(name string) *protocol.ManifestBundle {
		return &protocol.ManifestBundle{Manifests: []json.RawMessage{
			json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"}}`)}}
	}
	const id = "5b7c1c1e-94a2-4f4e-8a53-0e1b9e0c7a11"
	want := func(generation int64, deleting bool, manifestName string) {
		t.Helper()
		st := a.bundle(id)
		if st == nil {
			t.Fatalf("bundle %s is not held", id)
		}
		if st.want.generation != generation || st.want.deleting != deleting {
			t.Fatalf("holding generation %d deleting %v, want generation %d deleting %v", st.want.generation, st.want.deleting, generation, deleting)
		}
		if manifestName != "" && !strings.Contains(string(st.want.bundle.Manifests[0]), manifestName) {
			t.Errorf("holding manifests %s, want %s", st.want.bundle.Manifests[0], manifestName)
		}
	}

	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionCreateRequest, testConsumer, id, 1, bundle("first")))
	want(1, false, "first")
	if a.queue.Len() != 1 {
		t.Errorf("%d bundles queued, want 1", a.queue.Len())
	}

	// Two updates before a worker gets to the bundle: only the newest is kept, queued once.
	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionUpdateRequest, testConsumer, id, 3, bundle("third")))
	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionResyncResponse, testConsumer, id, 2, bundle("second")))
	want(3, false, "third")
	if a.queue.Len() != 1 {
		t.Errorf("%d bundles queued, want 1", a.queue.Len())
	}

	// Not for this agent.
	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionUpdateRequest, "mc-2", id, 4, bundle("other-cluster")))
	otherTopic, _ := protocol.SourceEventsTopic(testSource, "mc-2")
	a.handleEvent(otherTopic, specEvent(t, protocol.ActionUpdateRequest, testConsumer, id, 5, bundle("other-topic")))
	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionUpdateRequest, testConsumer, "Not_A_UID", 1, bundle("bad-id")))
	want(3, false, "third")
	if a.bundle("Not_A_UID") != nil {
		t.Error("a bundle whose resource ID cannot name a record was taken")
	}
	status, err := protocol.NewStatusEvent(testSource, protocol.ActionUpdateRequest, protocol.BundleRef{ClusterName: testConsumer, ResourceID: id}, &protocol.ManifestBundleStatus{})
	if err != nil {
		t.Fatal(err)
	}
	status.SetSequenceID("1")
	a.handleEvent(a.sourceEvents, status)
	want(3, false, "third")

	// A deletion without data works from the bundle as known.
	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionDeleteRequest, testConsumer, id, 3, nil))
	want(3, true, "third")
	a.handleEvent(a.sourceEvents, specEvent(t, protocol.ActionUpdateRequest, testConsumer, id, 6, bundle("after-delete")))
	want(3, true, "third")

	// A status resync request, with clustername empty as Maestro sends it, is kept for the answering loop.
	resync, err := protocol.NewStatusResyncRequest(testSource, "", []protocol.ResourceStatusHash{{ResourceID: id, StatusHash: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	a.handleEvent(a.sourceEvents, resync)
	if a.statusResync == nil || len(a.statusResync.Hashes) != 1 || len(a.statusResyncNow) != 1 {
		t.Errorf("the status resync request was not kept: %+v", a.statusResync)
	}
}

func TestOptionsValidate(t *testing.T) {
	valid := func() Options {
		o := Options{Consumer: "mc-1", Source: "hcp", BrokerURL: "mqtts://broker:8883", BrokerTLS: &tls.Config{}, Kube: &rest.Config{}}
		o.Complete()
		return o
	}
	o := valid()
	if o.ClientID != "mc-1-work-agent" || o.StateNamespace != DefaultStateNamespace || o.ResyncInterval != DefaultResyncInterval || o.Workers != DefaultWorkers {
		t.Errorf("Complete left %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate() = %v for complete options", err)
	}
	tests := []struct {
		name   string
		modify func(*Options)
		want   string
	}{
		{"consumer", func(o *Options) { o.Consumer = "MC_1" }, `consumer ID "MC_1"`},
		{"source", func(o *Options) { o.Source = "" }, "source ID is empty"},
		{"state namespace", func(o *Options) { o.StateNamespace = "Agent.State" }, `state namespace "Agent.State"`},
		{"resync interval", func(o *Options) { o.ResyncInterval = -time.Second }, "resync interval -1s"},
		{"workers", func(o *Options) { o.Workers = -1 }, "workers -1"},
		{"kube", func(o *Options) { o.Kube = nil }, "management cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.modify(&o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
