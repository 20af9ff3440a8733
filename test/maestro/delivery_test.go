package maestro

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// TestDelivery runs the life of a cluster bundle through each broker: create, status feedback, update,
// and delete with both propagation policies.
func TestDelivery(t *testing.T) {
	for _, kind := range []brokerKind{embeddedBroker, mosquitto} {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t, kind)
			t.Run("a HostedCluster bundle is applied and its status comes back", func(t *testing.T) { testHostedClusterLifecycle(t, h) })
			t.Run("an orphaned bundle leaves its objects", func(t *testing.T) { testOrphan(t, h) })
		})
	}
}

func testHostedClusterLifecycle(t *testing.T, h *harness) {
	const id, ns, name = "4a6c1b1e-0000-4000-8000-000000000001", "ocm-dev-cluster-1", "cluster-1"
	h.apply(id, 1, hostedClusterBundle(t, ns, name, releaseImage("4.20.8"), pullSecretJSON(1), protocol.DeletePropagationForeground))

	// The simulator installs the cluster; the agent's feedback says so.
	st := h.waitStatus(id, "with the HostedCluster Available", func(st source.BundleStatus) bool {
		v, ok := feedback(st, "HostedCluster", "available")
		return ok && v.String != nil && *v.String == "True"
	})
	if v, ok := feedback(st, "HostedCluster", "version"); !ok || v.String == nil || *v.String != "4.20.8" {
		t.Errorf("feedback version = %+v, want 4.20.8", v)
	}
	if !conditionTrue(st.Status.Conditions, agent.ConditionApplied) || st.Generation != 1 || st.Consumer != consumer {
		t.Errorf("status %s, want generation 1 Applied from %s", describe(st), consumer)
	}
	h.waitObjects(namespaces, id, []string{"/" + ns}, nil)
	h.waitObjects(secrets, id, []string{ns + "/pull-secret"}, secretHas(pullSecretJSON(1)))
	h.waitObjects(hostedClusters, id, []string{ns + "/" + name}, nil)

	// An update: a new pull secret and release image.
	h.apply(id, 2, hostedClusterBundle(t, ns, name, releaseImage("4.20.9"), pullSecretJSON(2), protocol.DeletePropagationForeground))
	h.waitObjects(secrets, id, []string{ns + "/pull-secret"}, secretHas(pullSecretJSON(2)))
	h.waitStatus(id, "with the HostedCluster at 4.20.9", func(st source.BundleStatus) bool {
		v, ok := feedback(st, "HostedCluster", "version")
		return st.Generation == 2 && ok && v.String != nil && *v.String == "4.20.9"
	})

	// A foreground delete: the HostedCluster goes (the simulator lets its finalizer go), then the
	// namespace, and only then does the agent report the bundle deleted.
	if err := h.src.Delete(consumer, id); err != nil {
		t.Fatal(err)
	}
	h.waitDeleted(id)
	for _, check := range []struct {
		what string
		get  func(context.Context) error
	}{
		{"HostedCluster", func(ctx context.Context) error {
			_, err := h.mc.Dynamic.Resource(hostedClusters).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		}},
		{"namespace", func(ctx context.Context) error {
			_, err := h.mc.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err
		}},
	} {
		if err := check.get(t.Context()); !apierrors.IsNotFound(err) {
			t.Errorf("the %s of the deleted bundle: %v, want it gone once the agent reported Deleted", check.what, err)
		}
	}
}

func testOrphan(t *testing.T, h *harness) {
	const id, ns, name = "4a6c1b1e-0000-4000-8000-000000000002", "ocm-dev-cluster-2", "cluster-2"
	h.apply(id, 1, hostedClusterBundle(t, ns, name, releaseImage("4.20.8"), pullSecretJSON(1), protocol.DeletePropagationOrphan))
	h.waitApplied(id, 1)
	if err := h.src.Delete(consumer, id); err != nil {
		t.Fatal(err)
	}
	h.waitDeleted(id)
	// Everything is still there, no longer marked as the bundle's.
	hc, err := h.mc.Dynamic.Resource(hostedClusters).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the orphaned HostedCluster: %v", err)
	}
	if _, marked := hc.GetLabels()[agent.BundleLabel]; marked || hc.GetDeletionTimestamp() != nil {
		t.Errorf("the orphaned HostedCluster has labels %v, deletion %v; want it unmarked and not deleted", hc.GetLabels(), hc.GetDeletionTimestamp())
	}
	if _, err := h.mc.Kube.CoreV1().Secrets(ns).Get(t.Context(), "pull-secret", metav1.GetOptions{}); err != nil {
		t.Errorf("the orphaned pull secret: %v", err)
	}
}

// TestFaults breaks the path between source and management cluster and checks that, once it is whole
// again, the management cluster holds exactly what the source wants.
func TestFaults(t *testing.T) {
	h := newHarness(t, embeddedBroker)
	ns := "faults"
	h.apply("ns-faults", 1, &protocol.ManifestBundle{Manifests: []json.RawMessage{
		manifest(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}),
	}, DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}})
	h.waitApplied("ns-faults", 1)
	want := map[string]string{} // bundle ID -> the ConfigMap value it wants

	t.Run("broker restarted mid-stream", func(t *testing.T) {
		for i := range 20 {
			id := fmt.Sprintf("restart-%02d", i)
			want[id] = "v1"
			h.apply(id, 1, configMapBundle(t, ns, id, "v1"))
			if i == 9 {
				h.broker.Stop()
				time.Sleep(500 * time.Millisecond)
				if err := h.broker.Start(); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkExactly(t, h, ns, want)
	})

	t.Run("agent killed, bundles changed meanwhile, agent restarted", func(t *testing.T) {
		h.killAgent()
		for i := range 3 {
			id := fmt.Sprintf("while-down-%d", i)
			want[id] = "v1"
			h.apply(id, 1, configMapBundle(t, ns, id, "v1"))
		}
		want["restart-00"] = "v2"
		h.apply("restart-00", 2, configMapBundle(t, ns, "restart-00", "v2"))
		for _, id := range []string{"restart-01", "restart-02"} {
			delete(want, id)
			if err := h.src.Delete(consumer, id); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		h.startAgent()
		checkExactly(t, h, ns, want)
	})

	t.Run("duplicate and out-of-order events change nothing", func(t *testing.T) {
		// Another connection of the same source replays old events: the agent must not go back.
		replay := newReplayer(t, h)
		replay.spec(protocol.ActionCreateRequest, "restart-00", 1, configMapBundle(t, ns, "restart-00", "v1"))
		replay.spec(protocol.ActionUpdateRequest, "restart-03", 1, configMapBundle(t, ns, "restart-03", "v1"))
		replay.spec(protocol.ActionUpdateRequest, "restart-03", 1, configMapBundle(t, ns, "restart-03", "v1"))
		// A change that comes after them proves they were processed.
		want["restart-04"] = "v2"
		h.apply("restart-04", 2, configMapBundle(t, ns, "restart-04", "v2"))
		h.waitApplied("restart-04", 2)
		checkExactly(t, h, ns, want)
	})
}

// checkExactly waits until the ConfigMaps in ns that the agent wrote are exactly those of want, with
// their values, and the source holds a status of the current generation for each.
func checkExactly(t *testing.T, h *harness, ns string, want map[string]string) {
	t.Helper()
	var last map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := h.mc.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: agent.BundleLabel})
		if err != nil {
			return false, nil
		}
		last = map[string]string{}
		for _, cm := range list.Items {
			if cm.DeletionTimestamp == nil {
				last[cm.Name] = cm.Data["value"]
			}
		}
		return maps.Equal(last, want), nil
	})
	if err != nil {
		t.Fatalf("the management cluster holds %v, want exactly %v", last, want)
	}
	for id, value := range want {
		// The values are v<generation>.
		generation, _ := strconv.ParseInt(strings.TrimPrefix(value, "v"), 10, 64)
		h.waitApplied(id, generation)
	}
}

func secretHas(dockerConfig string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		got, _, _ := unstructured.NestedString(obj.Object, "data", ".dockerconfigjson")
		if want := base64.StdEncoding.EncodeToString([]byte(dockerConfig)); got != want {
			return fmt.Errorf("secret %s holds %q, want %q", obj.GetName(), got, want)
		}
		return nil
	}
}

// replayer is a second connection of the source, which sends events of its choosing to the agent.
type replayer struct {
	t      *testing.T
	client *transport.Client
}

func newReplayer(t *testing.T, h *harness) *replayer {
	t.Helper()
	client, err := transport.Connect(t.Context(), transport.Config{URL: h.broker.URL, TLS: h.broker.SourceTLS(t, sourceID), ClientID: "replayer"})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.AwaitConnection(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &replayer{t: t, client: client}
}

func (r *replayer) spec(action protocol.Action, id string, generation int64, bundle *protocol.ManifestBundle) {
	r.t.Helper()
	e, err := protocol.NewSpecEvent(sourceID, action, protocol.BundleRef{ClusterName: consumer, ResourceID: id, ResourceVersion: generation}, bundle)
	if err != nil {
		r.t.Fatal(err)
	}
	topic, err := protocol.SourceEventsTopic(sourceID, consumer)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.client.Publish(r.t.Context(), topic, e); err != nil {
		r.t.Fatal(err)
	}
}
