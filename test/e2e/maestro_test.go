package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// TestAgentConnectsToTheServer follows the README: the server runs its embedded broker, "hcp-apiserver
// agent-bundle" issues an agent its credentials, and maestro-agent, pointed at a management cluster,
// connects with them; the server's /metrics then counts the consumer connected.
func TestAgentConnectsToTheServer(t *testing.T) {
	mc := framework.StartManagementCluster(t)
	dataDir := t.TempDir()
	s := framework.StartHCPAPIServerProcess(t, dataDir)

	bundle := filepath.Join(t.TempDir(), "mc-1.agent.yaml")
	cmd := exec.CommandContext(t.Context(), framework.Command(t, "hcp-apiserver"), "agent-bundle",
		"--data-dir", dataDir, "--consumer", "mc-1", "--output", bundle)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hcp-apiserver agent-bundle: %v\n%s", err, out)
	}
	framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"),
		"--agent-bundle="+bundle, "--kubeconfig="+mc.Kubeconfig, "--metrics-bind-address=0")
	waitForMetric(t, s.Kubeconfig, "maestro_source_connected_consumers 1")
	waitForMetric(t, s.Kubeconfig, `maestro_source_events_received_total{type="io.open-cluster-management.works.v1alpha1.manifestbundles.spec.resync_request"}`)
}

// TestServerUsesAnExternalBroker runs the server against Mosquitto with client certificates and topic
// ACLs, as against Event Grid: the agent reaches it through the same broker.
func TestServerUsesAnExternalBroker(t *testing.T) {
	mc := framework.StartManagementCluster(t)
	pki := framework.NewMQTTPKI(t)
	broker := framework.StartMosquitto(t, pki, sourceACL...)
	serverCert, serverKey := pki.ClientCert(t, "hcp-apiserver")
	s := framework.StartHCPAPIServerProcess(t, t.TempDir(), "--mqtt-url="+broker.URL,
		"--mqtt-ca-file="+pki.CAFile, "--mqtt-cert-file="+serverCert, "--mqtt-key-file="+serverKey)
	agentCert, agentKey := pki.ClientCert(t, "mc-1")
	framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"),
		"--broker-url="+broker.URL, "--broker-ca-file="+pki.CAFile, "--broker-cert-file="+agentCert, "--broker-key-file="+agentKey,
		"--consumer-name=mc-1", "--source=hcp-apiserver", "--kubeconfig="+mc.Kubeconfig, "--metrics-bind-address=0")
	waitForMetric(t, s.Kubeconfig, "maestro_source_connected_consumers 1")
}

// TestBadMaestroFlags: a wrong broker flag stops the server at once with a message naming it.
func TestBadMaestroFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mqtt-url=tcp://broker:1883"}, "--mqtt-url"},
		{[]string{"--mqtt-url=mqtts://broker:8883"}, "--mqtt-ca-file is required with --mqtt-url"},
		{[]string{"--maestro-source=Not_An_ID"}, "--maestro-source"},
		{[]string{"--mqtt-bind-address=8883"}, "--mqtt-bind-address"},
	} {
		cmd := exec.CommandContext(t.Context(), framework.Command(t, "hcp-apiserver"), append([]string{"--data-dir", t.TempDir()}, tc.args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("hcp-apiserver %v: %v, output\n%s\nwant a failure mentioning %q", tc.args, err, out, tc.want)
		}
	}
	cmd := exec.CommandContext(t.Context(), framework.Command(t, "hcp-apiserver"), "agent-bundle", "--output", filepath.Join(t.TempDir(), "b.yaml"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--consumer is required") {
		t.Errorf("agent-bundle without --consumer: %v\n%s", err, out)
	}
}

// waitForMetric waits until the server's /metrics has a line starting with want.
func waitForMetric(t *testing.T, kubeconfig, want string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		raw, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = ""
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "maestro_source_") {
				last += line + "\n"
			}
			if strings.HasPrefix(line, want) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %q in the server's /metrics within a minute; its Maestro lines:\n%s", want, last)
	}
}
