package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// deliveryStack is a management cluster (with kube-controller-manager and the HyperShift simulator), the
// hcp-apiserver binary with its broker (embedded, on a fixed port, or external), and the maestro-agent binary.
type deliveryStack struct {
	mc        *framework.ManagementCluster
	server    *server
	dataDir   string
	agent     *framework.Process
	agentArgs []string
	args      []string
}

func startDeliveryStack(t *testing.T, sim hypershiftsim.Options, serverArgs ...string) *deliveryStack {
	t.Helper()
	st := newDeliveryStack(t, sim)
	// A fixed broker port: a restarted server must be where the agent's bundle says.
	st.args = append([]string{"--mqtt-bind-address=127.0.0.1:" + strconv.Itoa(framework.FreePort(t))}, serverArgs...)
	st.startServer(t)

	bundle := filepath.Join(t.TempDir(), "mc-eastus-1.agent.yaml")
	cmd := exec.CommandContext(t.Context(), framework.Command(t, "hcp-apiserver"), "agent-bundle",
		"--data-dir", st.dataDir, "--consumer", "mc-eastus-1", "--output", bundle)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hcp-apiserver agent-bundle: %v\n%s", err, out)
	}
	st.agentArgs = []string{"--agent-bundle=" + bundle, "--kubeconfig=" + st.mc.Kubeconfig, "--metrics-bind-address=0"}
	st.startAgent(t)
	st.server.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "00-managementcluster.yaml"))
	return st
}

// newDeliveryStack starts the management side: the management cluster, its kube-controller-manager and
// the HyperShift simulator. The caller sets the server's and the agent's arguments and starts them.
func newDeliveryStack(t *testing.T, sim hypershiftsim.Options) *deliveryStack {
	t.Helper()
	st := &deliveryStack{mc: framework.StartManagementCluster(t), dataDir: t.TempDir()}
	st.mc.StartControllerManager(t)
	hypershiftsim.StartForTest(t, st.mc.Config, sim)
	return st
}

// exampleClusterUp applies the example HCPCluster and waits until it is Available; it returns its
// namespace on the management cluster.
func (st *deliveryStack) exampleClusterUp(t *testing.T) string {
	t.Helper()
	s := st.server
	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "10-hcpcluster.yaml"))
	if out, err := s.kubectl(t, "wait", "--for=condition=Available", "hcpcluster/dev-cluster", "--timeout=50s"); err != nil {
		desc, _ := s.kubectl(t, "get", "hcpcluster/dev-cluster", "-o", "yaml")
		t.Fatalf("kubectl wait for the cluster: %v\n%s\n%s", err, out, desc)
	}
	return "ocm-dev-" + s.mustKubectl(t, "get", "hcpcluster/dev-cluster", "-o", "jsonpath={.status.clusterID}")
}

func (st *deliveryStack) startServer(t *testing.T) {
	t.Helper()
	st.server = &server{
		HCPAPIServerProcess: framework.StartHCPAPIServerProcess(t, st.dataDir, st.args...),
		cacheDir:            filepath.Join(t.TempDir(), "kubectl-cache"),
	}
}

func (st *deliveryStack) startAgent(t *testing.T) {
	t.Helper()
	st.agent = framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"), st.agentArgs...)
}

// applyClusters creates HCPClusters in the default namespace, named after names, each with its own
// infrastructure and DNS prefix.
func (st *deliveryStack) applyClusters(t *testing.T, names ...string) {
	t.Helper()
	var docs []string
	for _, name := range names {
		c := fixtures.HCPCluster("default", name)
		c.Spec.DNS.BaseDomainPrefix = name
		c.TypeMeta = metav1.TypeMeta{APIVersion: "hcp.aro.azure.com/v1alpha1", Kind: "HCPCluster"}
		raw, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(raw))
	}
	st.server.mustKubectl(t, "apply", "-f", writeFile(t, "clusters.yaml", strings.Join(docs, "---\n")))
}

// clusterStates returns name -> provisioningState of every HCPCluster.
func (st *deliveryStack) clusterStates(t *testing.T) map[string]string {
	t.Helper()
	out, err := st.server.kubectl(t, "get", "hcpclusters", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.provisioningState}{"\n"}{end}`)
	states := map[string]string{}
	if err != nil {
		return states
	}
	for _, line := range strings.Fields(out) {
		name, state, _ := strings.Cut(line, "=")
		states[name] = state
	}
	return states
}

// waitStates waits until every named cluster is in want.
func (st *deliveryStack) waitStates(t *testing.T, want string, timeout time.Duration, names ...string) {
	t.Helper()
	var states map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, timeout, true, func(context.Context) (bool, error) {
		states = st.clusterStates(t)
		for _, name := range names {
			if states[name] != want {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("clusters not all %s within %v: %v", want, timeout, states)
	}
}

// hostedClustersByName counts the HostedClusters on the management cluster by name.
func (st *deliveryStack) hostedClustersByName(t *testing.T) map[string]int {
	t.Helper()
	list, err := st.mc.Dynamic.Resource(hostedClusters).Namespace(metav1.NamespaceAll).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, hc := range list.Items {
		counts[hc.GetName()]++
	}
	return counts
}

// TestDeliveryRidesOutCrashes kills hcp-apiserver, then the agent, with kill -9 in the middle of a
// create of 20 clusters: once they are back, every cluster is Succeeded with exactly one HostedCluster.
func TestDeliveryRidesOutCrashes(t *testing.T) {
	st := startDeliveryStack(t, hypershiftsim.Options{ProvisionDelay: 2 * time.Second})
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("c%02d", i))
	}

	st.applyClusters(t, names[:10]...)
	if err := st.server.Kill(); err != nil {
		t.Fatal(err)
	}
	st.startServer(t)
	st.applyClusters(t, names[10:]...)
	if err := st.agent.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	st.startAgent(t)

	st.waitStates(t, "Succeeded", 4*time.Minute, names...)
	counts := st.hostedClustersByName(t)
	for _, name := range names {
		if counts[name] != 1 {
			t.Errorf("cluster %s has %d HostedClusters on the management cluster, want exactly 1", name, counts[name])
		}
	}
	if len(counts) != len(names) {
		t.Errorf("the management cluster holds HostedClusters %v, want exactly the %d clusters'", counts, len(names))
	}
}

// TestFailedAndDegradedClusters: a cluster that never becomes available is Failed once the creation
// deadline (shortened by flag) passes, with the reason; a degraded one says so in its conditions.
func TestFailedAndDegradedClusters(t *testing.T) {
	st := startDeliveryStack(t, hypershiftsim.Options{
		NeverAvailable: func(_, name string) bool { return name == "never" },
		Degraded:       func(_, name string) bool { return name == "sick" },
	}, "--cluster-create-deadline=20s")
	st.applyClusters(t, "never", "sick")

	st.waitStates(t, "Failed", 2*time.Minute, "never")
	reason := st.server.mustKubectl(t, "get", "hcpcluster/never", "-o", `jsonpath={.status.conditions[?(@.type=="Progressing")].reason}`)
	if reason != "DeadlineExceeded" {
		t.Errorf("the failed cluster's Progressing reason is %q, want DeadlineExceeded", reason)
	}
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, time.Minute, true, func(context.Context) (bool, error) {
		out, err := st.server.kubectl(t, "get", "hcpcluster/sick", "-o", `jsonpath={.status.conditions[?(@.type=="Degraded")].status}`)
		return err == nil && out == "True", nil
	})
	if err != nil {
		out, _ := st.server.kubectl(t, "get", "hcpcluster/sick", "-o", "yaml")
		t.Fatalf("the degraded cluster does not report Degraded=True:\n%s", out)
	}
}
