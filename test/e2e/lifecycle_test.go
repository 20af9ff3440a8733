package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

var hostedClusters = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}

// TestClusterComesUpAndGoes is the README's quick start: a server, an agent for a management cluster
// of one's own, and kubectl. The cluster is placed, delivered and reported Available by the HyperShift
// simulator through the agent; it is upgraded to the next minor; deleting it removes its control plane
// namespace from the management cluster before the cluster itself is gone.
func TestClusterComesUpAndGoes(t *testing.T) {
	// The server, an agent for mc-eastus-1 (applied already), its management cluster and the simulator.
	st := startDeliveryStack(t, hypershiftsim.Options{})
	mc, s := st.mc, st.server

	clusterNamespace := st.exampleClusterUp(t)
	state := s.mustKubectl(t, "get", "hcpcluster/dev-cluster", "-o",
		"jsonpath={.status.provisioningState} {.status.managementCluster} {.status.version.actual} {.status.clusterID} {.status.api.url}")
	fields := strings.Fields(state)
	if len(fields) != 5 || fields[0] != "Succeeded" || fields[1] != "mc-eastus-1" || fields[2] != "4.20.8" || !strings.HasPrefix(fields[4], "https://") {
		t.Fatalf("cluster status %q; want Succeeded on mc-eastus-1 at 4.20.8 with an API URL", state)
	}
	hc, err := mc.Dynamic.Resource(hostedClusters).Namespace(clusterNamespace).Get(t.Context(), "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the HostedCluster on the management cluster: %v", err)
	}
	if image := hc.Object["spec"].(map[string]any)["release"].(map[string]any)["image"]; !strings.Contains(image.(string), "4.20.8") {
		t.Errorf("the HostedCluster runs release %v, want 4.20.8", image)
	}

	// An upgrade one minor up: Updating until the HostedCluster reports the new release completed.
	// The patch's answer is the object as stored by that very write.
	state = s.mustKubectl(t, "patch", "hcpcluster/dev-cluster", "--type=merge", "-p", `{"spec":{"version":{"id":"4.21"}}}`,
		"-o", "jsonpath={.status.provisioningState}")
	if state != "Updating" {
		t.Errorf("the upgrade's write left provisioningState %q, want Updating", state)
	}
	if out, err := s.kubectl(t, "wait", "--for=jsonpath={.status.version.actual}=4.21.2", "hcpcluster/dev-cluster", "--timeout=50s"); err != nil {
		desc, _ := s.kubectl(t, "get", "hcpcluster/dev-cluster", "-o", "yaml")
		hcNow, _ := mc.Dynamic.Resource(hostedClusters).Namespace(clusterNamespace).Get(t.Context(), "dev", metav1.GetOptions{})
		t.Fatalf("the upgrade to 4.21: %v\n%s\n%s\nHostedCluster: %v", err, out, desc, hcNow)
	}
	if out, err := s.kubectl(t, "wait", "--for=jsonpath={.status.provisioningState}=Succeeded", "hcpcluster/dev-cluster", "--timeout=60s"); err != nil {
		t.Fatalf("after the upgrade: %v\n%s", err, out)
	}
	hc, err = mc.Dynamic.Resource(hostedClusters).Namespace(clusterNamespace).Get(t.Context(), "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if image := hc.Object["spec"].(map[string]any)["release"].(map[string]any)["image"]; !strings.Contains(image.(string), "4.21.2") {
		t.Errorf("after the upgrade the HostedCluster runs release %v, want 4.21.2", image)
	}

	// kubectl waits for the cluster to be gone; by then its namespace must be gone from the management cluster.
	s.mustKubectl(t, "delete", "hcpcluster/dev-cluster", "--timeout=50s")
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := mc.Kube.CoreV1().Namespaces().Get(ctx, clusterNamespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the namespace %s is still on the management cluster after the cluster was deleted", clusterNamespace)
	}
	if out := s.mustKubectl(t, "get", "hcpclusters", "-A", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("hcpclusters left: %s", out)
	}
}
