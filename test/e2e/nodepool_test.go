package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

var hyperShiftNodePools = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}

// TestNodePoolComesUpScalesAndGoes follows the README's quick start one step further: node pools applied
// with kubectl to an available cluster become HyperShift NodePools on its management cluster, Ready
// through the agent; a new replica count reaches them; a deleted pool goes once its HyperShift NodePool
// has; deleting the cluster takes its pools on both sides.
func TestNodePoolComesUpScalesAndGoes(t *testing.T) {
	// The server, an agent for mc-eastus-1 (applied already), its management cluster and the simulator.
	st := startDeliveryStack(t, hypershiftsim.Options{})
	mc, s := st.mc, st.server

	clusterNamespace := st.exampleClusterUp(t)

	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "20-nodepool.yaml"))
	waitPool := func(condition string, pools ...string) {
		t.Helper()
		if len(pools) == 0 {
			pools = []string{"nodepool/dev-cluster.workers"}
		}
		if out, err := s.kubectl(t, append([]string{"wait", "--for=" + condition, "--timeout=120s"}, pools...)...); err != nil {
			desc, _ := s.kubectl(t, append([]string{"get", "-o", "yaml"}, pools...)...)
			t.Fatalf("kubectl wait --for=%s: %v\n%s\n%s", condition, err, out, desc)
		}
	}
	waitPool("condition=Ready")
	poolStatus := "jsonpath={.status.provisioningState} {.status.replicas} {.status.version} {.status.observedGeneration}"
	if got := s.mustKubectl(t, "get", "nodepool/dev-cluster.workers", "-o", poolStatus); got != "Succeeded 3 4.20.8 1" {
		t.Errorf("pool status %q; want Succeeded with 3 replicas at 4.20.8, generation 1", got)
	}
	hyperShiftPool := func() *unstructured.Unstructured {
		t.Helper()
		np, err := mc.Dynamic.Resource(hyperShiftNodePools).Namespace(clusterNamespace).Get(t.Context(), "dev-workers", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the HyperShift NodePool on the management cluster: %v", err)
		}
		return np
	}
	if replicas, _, _ := unstructured.NestedInt64(hyperShiftPool().Object, "spec", "replicas"); replicas != 3 {
		t.Errorf("the HyperShift NodePool asks for %d replicas, want 3", replicas)
	}

	// A new replica count is a new generation: Updating at once, Succeeded once the nodes are there.
	if state := s.mustKubectl(t, "patch", "nodepool/dev-cluster.workers", "--type=merge", "-p", `{"spec":{"replicas":5}}`,
		"-o", "jsonpath={.status.provisioningState}"); state != "Updating" {
		t.Errorf("provisioningState %q right after scaling, want Updating", state)
	}
	waitPool("jsonpath={.status.observedGeneration}=2")
	waitPool("jsonpath={.status.provisioningState}=Succeeded")
	if got := s.mustKubectl(t, "get", "nodepool/dev-cluster.workers", "-o", poolStatus); got != "Succeeded 5 4.20.8 2" {
		t.Errorf("pool status after scaling %q; want Succeeded with 5 replicas at 4.20.8, generation 2", got)
	}
	if replicas, _, _ := unstructured.NestedInt64(hyperShiftPool().Object, "spec", "replicas"); replicas != 5 {
		t.Errorf("after scaling, the HyperShift NodePool asks for %d replicas, want 5", replicas)
	}

	// The GPU pool's KubeletConfig and Tuned documents are ConfigMaps beside its HyperShift NodePool,
	// which refers to them.
	waitPool("condition=Ready", "nodepool/dev-cluster.gpu")
	gpu, err := mc.Dynamic.Resource(hyperShiftNodePools).Namespace(clusterNamespace).Get(t.Context(), "dev-gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the GPU pool's HyperShift NodePool: %v", err)
	}
	for _, ref := range []struct{ field, key, want string }{
		{"config", "config", "KubeletConfig"},
		{"tuningConfig", "tuning", "Tuned"},
	} {
		refs, _, _ := unstructured.NestedSlice(gpu.Object, "spec", ref.field)
		if len(refs) != 1 {
			t.Errorf("the GPU pool's spec.%s is %v, want one ConfigMap", ref.field, refs)
			continue
		}
		name, _ := refs[0].(map[string]any)["name"].(string)
		cm, err := mc.Kube.CoreV1().ConfigMaps(clusterNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("the ConfigMap %s of spec.%s: %v", name, ref.field, err)
			continue
		}
		if !strings.Contains(cm.Data[ref.key], `"kind":"`+ref.want+`"`) {
			t.Errorf("ConfigMap %s key %s holds %q, want the %s document", name, ref.key, cm.Data[ref.key], ref.want)
		}
	}

	// A deleted pool is gone once its HyperShift NodePool is; the GPU pool goes as well.
	extra := writeFile(t, "extra.yaml", `apiVersion: hcp.aro.azure.com/v1alpha1
kind: NodePool
metadata:
  name: dev-cluster.extra
  namespace: default
spec:
  clusterName: dev-cluster
  version:
    id: 4.20.8
  platform:
    vmSize: Standard_D4s_v3
  replicas: 1
`)
	s.mustKubectl(t, "apply", "-f", extra)
	waitPool("condition=Ready", "nodepool/dev-cluster.extra")
	s.mustKubectl(t, "delete", "nodepool/dev-cluster.extra", "nodepool/dev-cluster.gpu", "--timeout=120s")
	_, err = mc.Dynamic.Resource(hyperShiftNodePools).Namespace(clusterNamespace).Get(t.Context(), "dev-extra", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the HyperShift NodePool of a deleted pool is still on the management cluster: %v", err)
	}

	// kubectl waits for the cluster to be gone; its pools go with it, here and on the management cluster.
	s.mustKubectl(t, "delete", "hcpcluster/dev-cluster", "--timeout=150s")
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := s.kubectl(t, "get", "nodepools", "-A", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "", nil
	})
	if err != nil {
		out, _ := s.kubectl(t, "get", "nodepools", "-A", "-o", "yaml")
		t.Errorf("node pools left a minute after their cluster was deleted:\n%s", out)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pools, err := mc.Dynamic.Resource(hyperShiftNodePools).Namespace(clusterNamespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(pools.Items) > 0 {
			return false, nil
		}
		_, err = mc.Kube.CoreV1().Namespaces().Get(ctx, clusterNamespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("HyperShift NodePools or the namespace %s are still on the management cluster after the cluster was deleted", clusterNamespace)
	}
}

// TestNodePoolWithoutAManagementCluster is what a user sees of node pools before any management cluster
// takes their cluster: Ready says why they wait, and kubectl scale sizes a fixed pool and is refused for
// an autoscaled one.
func TestNodePoolWithoutAManagementCluster(t *testing.T) {
	s := startServer(t, t.TempDir())
	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "10-hcpcluster.yaml"), "-f", filepath.Join(examplesDir, "20-nodepool.yaml"))

	ready := `jsonpath={.status.conditions[?(@.type=="Ready")].reason}: {.status.conditions[?(@.type=="Ready")].message}`
	want := "ClusterNotReady: cluster dev-cluster is Accepted and not placed on a management cluster yet: " +
		"no schedulable management cluster in eastus with free capacity and a connected agent"
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got, _ = s.kubectl(t, "get", "np", "dev-cluster.workers", "-o", ready)
		return got == want, nil
	})
	if err != nil {
		t.Errorf("the pool's Ready condition is %q, want %q", got, want)
	}

	if out := s.mustKubectl(t, "scale", "np", "dev-cluster.workers", "--replicas=4"); !strings.Contains(out, "scaled") {
		t.Errorf("kubectl scale said %q", out)
	}
	table := s.mustKubectl(t, "get", "np", "dev-cluster.workers")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if column := slices.Index(strings.Fields(lines[0]), "REPLICAS"); len(lines) != 2 || column < 0 || strings.Fields(lines[1])[column] != "4" {
		t.Errorf("kubectl get np after scaling to 4:\n%s", table)
	}

	out := s.failKubectl(t, "scale", "np", "dev-cluster.gpu", "--replicas=2")
	if want := "node pool dev-cluster.gpu autoscales between 1 and 4 nodes (spec.autoScaling); remove spec.autoScaling from the NodePool to scale it by hand"; !strings.Contains(out, want) {
		t.Errorf("kubectl scale of an autoscaled pool said:\n%s\nwant %q", out, want)
	}
}
