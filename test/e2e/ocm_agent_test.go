package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// These tests run hcp-apiserver with the open-cluster-management work agent, the agent Maestro runs, in
// place of maestro-agent, configured as the README says: what a user sees must not tell the two apart.

// TestClusterThroughTheOCMWorkAgent: on the embedded broker, the example cluster is delivered by the work
// agent and reported Succeeded; it is upgraded after the agent was killed and started again, and the
// upgrade completes while the server is down; it is deleted, and its namespace with it.
func TestClusterThroughTheOCMWorkAgent(t *testing.T) {
	framework.Tool(t, framework.OCMWorkAgentTool)
	st := newDeliveryStack(t, hypershiftsim.Options{UpgradeDelay: 10 * time.Second})
	// A fixed broker port: the restarted server must be where the agent's configuration says.
	st.args = []string{"--mqtt-bind-address=127.0.0.1:" + strconv.Itoa(framework.FreePort(t))}
	st.startServer(t)
	bundle := filepath.Join(t.TempDir(), "mc-eastus-1.agent.yaml")
	cmd := exec.CommandContext(t.Context(), framework.Command(t, "hcp-apiserver"), "agent-bundle",
		"--data-dir", st.dataDir, "--consumer", "mc-eastus-1", "--output", bundle)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hcp-apiserver agent-bundle: %v\n%s", err, out)
	}
	agent := framework.StartOCMWorkAgent(t, st.mc, framework.OCMWorkAgentOptionsFromBundle(t, bundle))
	st.server.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "00-managementcluster.yaml"))
	waitForMetric(t, st.server.Kubeconfig, "maestro_source_connected_consumers 1")

	clusterNamespace := st.exampleClusterUp(t)
	st.waitStates(t, "Succeeded", time.Minute, "dev-cluster")
	st.wantVersion(t, clusterNamespace, "4.20.8")

	// The agent crashes and comes back: it holds nothing until the server resends its bundles.
	if err := agent.Kill(); err != nil {
		t.Fatal(err)
	}
	agent.Restart(t)

	// The upgrade reaches the management cluster through the restarted agent; the server is killed while
	// the HostedCluster rolls out, so that the agent reports the end of the upgrade to a server that is
	// not there, and must report it again once it is back.
	st.server.mustKubectl(t, "patch", "hcpcluster/dev-cluster", "--type=merge", "-p", `{"spec":{"version":{"id":"4.21"}}}`)
	st.waitForRelease(t, clusterNamespace, "4.21.2", time.Minute)
	if err := st.server.Kill(); err != nil {
		t.Fatal(err)
	}
	st.waitForHistory(t, clusterNamespace, "4.21.2", "Completed", time.Minute)
	st.startServer(t)
	// The agent lost its broker with the server and dials again on its own backoff (sdk-go's DelayFn: 5 s,
	// then 25 s, then 1 min, each with up to 100 % jitter), so it may come back up to 3 minutes after the kill.
	if out, err := st.server.kubectl(t, "wait", "--for=jsonpath={.status.version.actual}=4.21.2", "hcpcluster/dev-cluster", "--timeout=3m"); err != nil {
		desc, _ := st.server.kubectl(t, "get", "hcpcluster/dev-cluster", "-o", "yaml")
		t.Fatalf("after the server came back, the upgrade it missed: %v\n%s\n%s", err, out, desc)
	}
	st.waitStates(t, "Succeeded", time.Minute, "dev-cluster")

	st.deleteExampleCluster(t, clusterNamespace)
}

// TestOCMWorkAgentStatusLostWhileTheServerIsDown: on an external broker the work agent stays connected
// while the server restarts, and sends nothing unasked once connected, so the end of an upgrade it
// reported while the server was down is lost. The server must ask for it: it names every bundle it holds
// in its status resync requests, and asks each agent periodically.
func TestOCMWorkAgentStatusLostWhileTheServerIsDown(t *testing.T) {
	framework.Tool(t, framework.OCMWorkAgentTool)
	st := newDeliveryStack(t, hypershiftsim.Options{UpgradeDelay: 10 * time.Second})
	pki := framework.NewMQTTPKI(t)
	broker := framework.StartMosquitto(t, pki, sourceACL...)
	serverCert, serverKey := pki.ClientCert(t, "hcp-apiserver")
	st.args = []string{"--mqtt-url=" + broker.URL, "--mqtt-ca-file=" + pki.CAFile,
		"--mqtt-cert-file=" + serverCert, "--mqtt-key-file=" + serverKey,
		// The server asks each agent every 10 s instead of every minute.
		"--maestro-liveness-interval=10s", "--maestro-liveness-timeout=30s"}
	st.startServer(t)
	agentCert, agentKey := pki.ClientCert(t, "mc-eastus-1")
	framework.StartOCMWorkAgent(t, st.mc, framework.OCMWorkAgentOptions{
		Source: "hcp-apiserver", Consumer: "mc-eastus-1", BrokerAddress: strings.TrimPrefix(broker.URL, "mqtts://"),
		CAFile: pki.CAFile, CertFile: agentCert, KeyFile: agentKey,
	})
	st.server.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "00-managementcluster.yaml"))
	waitForMetric(t, st.server.Kubeconfig, "maestro_source_connected_consumers 1")
	clusterNamespace := st.exampleClusterUp(t)
	st.waitStates(t, "Succeeded", time.Minute, "dev-cluster")

	st.server.mustKubectl(t, "patch", "hcpcluster/dev-cluster", "--type=merge", "-p", `{"spec":{"version":{"id":"4.21"}}}`)
	st.waitForRelease(t, clusterNamespace, "4.21.2", time.Minute)
	if err := st.server.Kill(); err != nil {
		t.Fatal(err)
	}
	st.waitForHistory(t, clusterNamespace, "4.21.2", "Completed", time.Minute)
	// The agent's status sync (every 2 s here) has reported the completed upgrade to no one.
	time.Sleep(5 * time.Second)
	st.startServer(t)
	if out, err := st.server.kubectl(t, "wait", "--for=jsonpath={.status.version.actual}=4.21.2", "hcpcluster/dev-cluster", "--timeout=50s"); err != nil {
		desc, _ := st.server.kubectl(t, "get", "hcpcluster/dev-cluster", "-o", "yaml")
		t.Fatalf("the upgrade completed while the server was down was never reported: %v\n%s\n%s", err, out, desc)
	}
	st.waitStates(t, "Succeeded", time.Minute, "dev-cluster")
	waitForMetric(t, st.server.Kubeconfig, "maestro_source_connected_consumers 1")

	st.deleteExampleCluster(t, clusterNamespace)
}

// hostedCluster reads the example cluster's HostedCluster from the management cluster.
func (st *deliveryStack) hostedCluster(ctx context.Context, namespace string) (*unstructured.Unstructured, error) {
	return st.mc.Dynamic.Resource(hostedClusters).Namespace(namespace).Get(ctx, "dev", metav1.GetOptions{})
}

// waitForRelease waits until the HostedCluster on the management cluster asks for the release of version.
func (st *deliveryStack) waitForRelease(t *testing.T, namespace, version string, timeout time.Duration) {
	t.Helper()
	var image string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		hc, err := st.hostedCluster(ctx, namespace)
		if err != nil {
			return false, nil
		}
		image, _, _ = unstructured.NestedString(hc.Object, "spec", "release", "image")
		return strings.Contains(image, version), nil
	})
	if err != nil {
		t.Fatalf("the HostedCluster's release is %q after %v, want %s", image, timeout, version)
	}
}

// waitForHistory waits until the newest entry of the HostedCluster's version history is version in state.
func (st *deliveryStack) waitForHistory(t *testing.T, namespace, version, state string, timeout time.Duration) {
	t.Helper()
	var newest map[string]any
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		hc, err := st.hostedCluster(ctx, namespace)
		if err != nil {
			return false, nil
		}
		history, _, _ := unstructured.NestedSlice(hc.Object, "status", "version", "history")
		if len(history) == 0 {
			return false, nil
		}
		newest, _ = history[0].(map[string]any)
		return newest["version"] == version && newest["state"] == state, nil
	})
	if err != nil {
		t.Fatalf("the HostedCluster's newest version is %v after %v, want %s %s", newest, timeout, version, state)
	}
}

// wantVersion checks that the cluster and its HostedCluster run version.
func (st *deliveryStack) wantVersion(t *testing.T, namespace, version string) {
	t.Helper()
	if got := st.server.mustKubectl(t, "get", "hcpcluster/dev-cluster", "-o", "jsonpath={.status.version.actual}"); got != version {
		t.Errorf("the cluster reports version %q, want %s", got, version)
	}
	hc, err := st.hostedCluster(t.Context(), namespace)
	if err != nil {
		t.Fatalf("the HostedCluster on the management cluster: %v", err)
	}
	if image, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image"); !strings.Contains(image, version) {
		t.Errorf("the HostedCluster runs release %s, want %s", image, version)
	}
}

// deleteExampleCluster deletes the example cluster and checks that its namespace is gone from the
// management cluster by the time the cluster is.
func (st *deliveryStack) deleteExampleCluster(t *testing.T, namespace string) {
	t.Helper()
	st.server.mustKubectl(t, "delete", "hcpcluster/dev-cluster", "--timeout=90s")
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := st.mc.Kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the namespace %s is still on the management cluster after the cluster was deleted", namespace)
	}
	if out := st.server.mustKubectl(t, "get", "hcpclusters", "-A", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("hcpclusters left: %s", out)
	}
}
