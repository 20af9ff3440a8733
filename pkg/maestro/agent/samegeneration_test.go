package agent

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// A source sends new content at the same generation when a bundle changes while its owner's
// generation does not (a cluster's bundle carries its ExternalAuth): the agent applies it and records
// it, as it would a new generation.
func TestSameGenerationNewContentIsApplied(t *testing.T) {
	mc := framework.StartKubeAPIServer(t)
	const consumer, ns = "mc-same-generation", "same-generation"
	s := setUpAgent(t, mc, consumer)
	src := s.source
	begin := src.mark()
	s.start(t)
	src.waitFor(t, begin, "spec resync request on connect", isResyncRequest)

	id := newBundleID()
	mark := src.mark()
	src.publish(t, protocol.ActionCreateRequest, consumer, id, 1, newBundle(t, namespace(ns), configMap(ns, "settings", map[string]any{"a": "1"})))
	src.waitFor(t, mark, "status of generation 1", statusOf(t, protocol.StatusUpdateRequest, id, observed(ConditionAvailable, metav1.ConditionTrue, 1)))

	changed := newBundle(t, namespace(ns), configMap(ns, "settings", map[string]any{"a": "2"}), configMap(ns, "added", map[string]any{"b": "1"}))
	src.publish(t, protocol.ActionUpdateRequest, consumer, id, 1, changed)
	waitForObject(t, mc, configMaps, ns, "settings", "a=2", func(obj *unstructured.Unstructured) bool { return data(obj, "a") == "2" })
	waitForObject(t, mc, configMaps, ns, "added", "b=1", func(obj *unstructured.Unstructured) bool { return data(obj, "b") == "1" })

	// The record holds the new content, so that a restart applies it and not the first.
	_, raw := findRecord(t, mc, s.opts.StateNamespace, id)
	recorded, err := decodeRecord(id, raw)
	if err != nil {
		t.Fatal(err)
	}
	if recorded.generation != 1 || !reflect.DeepEqual(recorded.bundle, changed) {
		t.Errorf("the record holds generation %d with %d manifests, want generation 1 with the new content", recorded.generation, len(recorded.bundle.Manifests))
	}
}
