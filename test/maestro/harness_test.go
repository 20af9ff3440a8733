// Package maestro tests delivery end to end: hcp-apiserver's Maestro source (the package the server runs)
// publishes bundles through a real MQTT broker (the embedded one, or Mosquitto with client certificates and
// Event Grid-like topic ACLs) to the real maestro-agent binary, which applies them to a real management
// cluster (kube-apiserver with the HyperShift CRDs, kube-controller-manager for deletes) where the HyperShift
// simulator plays the operator; the status comes back the same way.
package maestro

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

const (
	sourceID = "hcp-apiserver"
	consumer = "mc-1"
	// waitTimeout bounds each wait for the far end; on this machine a round trip takes milliseconds.
	waitTimeout = time.Minute
)

var (
	namespaces     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	secrets        = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMaps     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	hostedClusters = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
)

// brokerKind is the broker between source and agent.
type brokerKind string

const (
	embeddedBroker brokerKind = "embedded"
	mosquitto      brokerKind = "mosquitto"
)

// harness is one management cluster with its agent, and a source publishing to it.
type harness struct {
	t        *testing.T
	mc       *framework.ManagementCluster
	src      *source.Source
	statuses *statusLog

	// broker is the embedded broker, to restart; nil with Mosquitto.
	broker    *maestrotest.Broker
	agentArgs []string
	agent     *framework.Process
}

// newHarness starts a management cluster with its controller manager and the HyperShift simulator, a
// broker of kind, a source and an agent.
func newHarness(t *testing.T, kind brokerKind) *harness {
	t.Helper()
	h := &harness{t: t, statuses: newStatusLog()}
	h.mc = framework.StartManagementCluster(t)
	h.mc.StartControllerManager(t)
	hypershiftsim.StartForTest(t, h.mc.Config, hypershiftsim.Options{})

	var brokerCfg transport.Config
	switch kind {
	case embeddedBroker:
		h.broker = maestrotest.StartBroker(t)
		brokerCfg = transport.Config{URL: h.broker.URL, TLS: h.broker.SourceTLS(t, sourceID)}
		h.agentArgs = []string{"--agent-bundle=" + h.broker.AgentBundle(t, sourceID, consumer)}
	case mosquitto:
		pki := framework.NewMQTTPKI(t)
		// Event Grid's permissions: the source may use its own topics, each agent only its consumer's.
		b := framework.StartMosquitto(t, pki,
			"user "+sourceID,
			"topic readwrite sources/"+sourceID+"/#",
			"pattern read sources/"+sourceID+"/consumers/%u/sourceevents",
			"pattern write sources/"+sourceID+"/consumers/%u/agentevents",
		)
		brokerCfg = transport.Config{URL: b.URL, TLS: pki.ClientTLS(t, sourceID)}
		certFile, keyFile := pki.ClientCert(t, consumer)
		h.agentArgs = []string{"--broker-url=" + b.URL, "--broker-ca-file=" + pki.CAFile,
			"--broker-cert-file=" + certFile, "--broker-key-file=" + keyFile,
			"--consumer-name=" + consumer, "--source=" + sourceID}
	}
	h.agentArgs = append(h.agentArgs, "--kubeconfig="+h.mc.Kubeconfig, "--metrics-bind-address=0", "-v=2")

	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	src, err := source.New(source.Options{Source: sourceID, Broker: brokerCfg, RepublishAfter: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	src.AddStatusHandler(h.statuses.add)
	// The test gives every bundle it wants before publishing: the source is synced from the start.
	src.SetSynced()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := src.Run(ctx); err != nil {
			t.Errorf("source: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	h.src = src
	h.startAgent()
	return h
}

// startAgent starts the maestro-agent binary, as a user would.
func (h *harness) startAgent() {
	h.t.Helper()
	h.agent = framework.StartProcess(h.t, framework.ComponentDir(h.t, "maestro-agent"), framework.Command(h.t, "maestro-agent"), h.agentArgs...)
}

// killAgent kills the agent without a chance to clean up, as a node failure would.
func (h *harness) killAgent() {
	h.t.Helper()
	if err := h.agent.Kill(); err != nil {
		h.t.Fatal(err)
	}
}

// apply gives the source a bundle to publish.
func (h *harness) apply(id string, generation int64, bundle *protocol.ManifestBundle) {
	h.t.Helper()
	if err := h.src.Apply(consumer, id, generation, bundle); err != nil {
		h.t.Fatal(err)
	}
}

// waitStatus waits until the source holds a status of id that satisfies ok, and returns it.
func (h *harness) waitStatus(id, what string, ok func(source.BundleStatus) bool) source.BundleStatus {
	h.t.Helper()
	var got source.BundleStatus
	err := h.statuses.wait(waitTimeout, func(all map[string]source.BundleStatus) bool {
		got = all[id]
		return ok(got)
	})
	if err != nil {
		h.t.Fatalf("bundle %s: no status %s within %v; last status: %s", id, what, waitTimeout, describe(got))
	}
	return got
}

func (h *harness) waitApplied(id string, generation int64) source.BundleStatus {
	h.t.Helper()
	return h.waitStatus(id, fmt.Sprintf("with generation %d applied", generation), func(st source.BundleStatus) bool {
		return st.Status != nil && st.Generation == generation && conditionTrue(st.Status.Conditions, agent.ConditionApplied)
	})
}

func (h *harness) waitDeleted(id string) {
	h.t.Helper()
	h.waitStatus(id, "Deleted", func(st source.BundleStatus) bool { return st.Deleted })
	if h.src.Has(id) {
		h.t.Fatalf("the source still holds %s after its agent reported it deleted", id)
	}
}

// waitObjects waits until the objects of gvr labelled as bundle id's are exactly want (namespace/name),
// each satisfying check when given.
func (h *harness) waitObjects(gvr schema.GroupVersionResource, id string, want []string, check func(*unstructured.Unstructured) error) {
	h.t.Helper()
	var last []string
	var lastErr error
	err := wait.PollUntilContextTimeout(h.t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := h.mc.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: agent.BundleLabel + "=" + id})
		if err != nil {
			lastErr = err
			return false, nil
		}
		last, lastErr = nil, nil
		for i := range list.Items {
			obj := &list.Items[i]
			last = append(last, obj.GetNamespace()+"/"+obj.GetName())
			if check != nil && lastErr == nil {
				lastErr = check(obj)
			}
		}
		slices.Sort(last)
		return slices.Equal(last, want) && lastErr == nil, nil
	})
	if err != nil {
		h.t.Fatalf("the %s of bundle %s on the management cluster are %v (%v), want %v", gvr.Resource, id, last, lastErr, want)
	}
}

// statusLog keeps the newest status of every bundle the source accepted, and wakes waiters on changes.
type statusLog struct {
	mu      sync.Mutex
	all     map[string]source.BundleStatus
	changed chan struct{}
}

func newStatusLog() *statusLog {
	return &statusLog{all: map[string]source.BundleStatus{}, changed: make(chan struct{})}
}

func (l *statusLog) add(st source.BundleStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all[st.ResourceID] = st
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *statusLog) wait(timeout time.Duration, done func(map[string]source.BundleStatus) bool) error {
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		ok, changed := done(l.all), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-deadline:
			return context.DeadlineExceeded
		}
	}
}

func describe(st source.BundleStatus) string {
	if st.Status == nil {
		return fmt.Sprintf("%+v", st)
	}
	raw, _ := json.Marshal(st.Status)
	return fmt.Sprintf("generation %d sequence %d deleted %v: %s", st.Generation, st.SequenceID, st.Deleted, raw)
}

func conditionTrue(conditions []metav1.Condition, t string) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// feedback returns the named feedback value of the manifest of kind in a status.
func feedback(st source.BundleStatus, kind, name string) (protocol.FieldValue, bool) {
	if st.Status == nil {
		return protocol.FieldValue{}, false
	}
	for _, r := range st.Status.ResourceStatus {
		if r.ResourceMeta.Kind != kind {
			continue
		}
		for _, v := range r.StatusFeedback.Values {
			if v.Name == name {
				return v.Value, true
			}
		}
	}
	return protocol.FieldValue{}, false
}

// manifest encodes an object for a bundle.
func manifest(t *testing.T, obj any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// configMapBundle is a small bundle: one ConfigMap with data value in namespace ns.
func configMapBundle(t *testing.T, ns, name, value string) *protocol.ManifestBundle {
	t.Helper()
	return &protocol.ManifestBundle{Manifests: []json.RawMessage{manifest(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     map[string]any{"value": value},
	})}}
}

// hostedClusterBundle is what the service delivers for a cluster: its namespace, the pull secret and a
// HyperShift HostedCluster (the ARO HCP-style example) with feedback on its availability and version.
func hostedClusterBundle(t *testing.T, ns, name, image, pullSecret string, policy protocol.DeletePropagationPolicy) *protocol.ManifestBundle {
	t.Helper()
	hc := framework.HyperShiftExample(t, "aro-hcp-style-minimal-hostedcluster.yaml", "HostedCluster")
	hc.SetNamespace(ns)
	hc.SetName(name)
	_ = unstructured.SetNestedField(hc.Object, image, "spec", "release", "image")
	_ = unstructured.SetNestedField(hc.Object, "pull-secret", "spec", "pullSecret", "name")
	return &protocol.ManifestBundle{
		Manifests: []json.RawMessage{
			manifest(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}),
			manifest(t, map[string]any{
				"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
				"metadata":   map[string]any{"name": "pull-secret", "namespace": ns},
				"stringData": map[string]any{".dockerconfigjson": pullSecret},
			}),
			manifest(t, hc.Object),
		},
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: policy},
		ManifestConfigs: []protocol.ManifestConfigOption{{
			ResourceIdentifier: protocol.ResourceIdentifier{Group: hostedClusters.Group, Resource: hostedClusters.Resource, Name: name, Namespace: ns},
			FeedbackRules: []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{
				{Name: "available", Path: `.status.conditions[?(@.type=="Available")].status`},
				{Name: "version", Path: `.status.version.history[0].version`},
				{Name: "versionState", Path: `.status.version.history[0].state`},
			}}},
		}},
	}
}

func releaseImage(version string) string {
	return "quay.io/openshift-release-dev/ocp-release:" + version + "-x86_64"
}

func pullSecretJSON(token int) string {
	return `{"auths":{"registry.example.com":{"auth":"` + strconv.Itoa(token) + `"}}}`
}
