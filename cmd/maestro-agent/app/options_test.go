package app

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // "" for valid flags
	}{
		{"a bundle", []string{"--agent-bundle=b.yaml"}, ""},
		{"the broker flags", []string{"--broker-url=mqtts://b", "--broker-ca-file=ca", "--broker-cert-file=c", "--broker-key-file=k", "--consumer-name=mc-1"}, ""},
		{"nothing to reach the broker with", nil, "missing: --broker-url, --broker-ca-file, --broker-cert-file, --broker-key-file, --consumer-name"},
		{"some broker flags", []string{"--broker-url=mqtts://b", "--consumer-name=mc-1"}, "missing: --broker-ca-file, --broker-cert-file, --broker-key-file"},
		{"both ways", []string{"--agent-bundle=b.yaml", "--broker-url=mqtts://b"}, "give the bundle, or the four broker flags"},
		{"no workers", []string{"--agent-bundle=b.yaml", "--workers=0"}, "--workers 0"},
		{"a resync interval too short", []string{"--agent-bundle=b.yaml", "--resync-interval=10ms"}, "--resync-interval 10ms is too short"},
		{"a metrics address without a port", []string{"--agent-bundle=b.yaml", "--metrics-bind-address=localhost"}, `--metrics-bind-address "localhost"`},
		{"no metrics", []string{"--agent-bundle=b.yaml", "--metrics-bind-address=0"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parse(t, tt.args...)
			err := o.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestAgentOptions(t *testing.T) {
	b := maestrotest.StartBroker(t)
	bundlePath := b.AgentBundle(t, "hcp", "mc-1")
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")

	t.Run("from the bundle", func(t *testing.T) {
		opts, err := parse(t, "--agent-bundle="+bundlePath, "--kubeconfig="+kubeconfig, "--state-namespace=agent-state").AgentOptions()
		if err != nil {
			t.Fatal(err)
		}
		if opts.Consumer != "mc-1" || opts.Source != "hcp" || opts.BrokerURL != b.URL || opts.StateNamespace != "agent-state" ||
			opts.Kube.Host != "https://127.0.0.1:1" || opts.BrokerTLS == nil || len(opts.BrokerTLS.Certificates) != 1 {
			t.Errorf("options %+v", opts)
		}
	})
	t.Run("another source", func(t *testing.T) {
		opts, err := parse(t, "--agent-bundle="+bundlePath, "--kubeconfig="+kubeconfig, "--source=hcp-2").AgentOptions()
		if err != nil || opts.Source != "hcp-2" {
			t.Errorf("source %q, %v; want hcp-2", opts.Source, err)
		}
	})
	t.Run("a consumer the bundle is not for", func(t *testing.T) {
		_, err := parse(t, "--agent-bundle="+bundlePath, "--kubeconfig="+kubeconfig, "--consumer-name=mc-2").AgentOptions()
		if err == nil || !strings.Contains(err.Error(), `is issued to consumer "mc-1"`) {
			t.Errorf("AgentOptions() = %v, want the consumer refused", err)
		}
	})

	// The same credentials one file at a time.
	bundle, err := agentbundle.Load(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"ca.crt": bundle.CertificateAuthorityData, "tls.crt": bundle.ClientCertificateData, "tls.key": bundle.ClientKeyData}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	brokerFlags := []string{"--broker-url=" + b.URL, "--broker-ca-file=" + filepath.Join(dir, "ca.crt"),
		"--broker-cert-file=" + filepath.Join(dir, "tls.crt"), "--broker-key-file=" + filepath.Join(dir, "tls.key"), "--kubeconfig=" + kubeconfig}
	t.Run("from files", func(t *testing.T) {
		opts, err := parse(t, append(brokerFlags, "--consumer-name=mc-1")...).AgentOptions()
		if err != nil {
			t.Fatal(err)
		}
		if opts.Consumer != "mc-1" || opts.Source != DefaultSource || opts.BrokerURL != b.URL {
			t.Errorf("options %+v", opts)
		}
	})
	t.Run("a certificate of another consumer", func(t *testing.T) {
		_, err := parse(t, append(brokerFlags, "--consumer-name=mc-2")...).AgentOptions()
		if err == nil || !strings.Contains(err.Error(), `issued to "mc-1", not to consumer "mc-2"`) {
			t.Errorf("AgentOptions() = %v, want the certificate refused", err)
		}
	})
	t.Run("a file that is not there", func(t *testing.T) {
		args := append(brokerFlags, "--consumer-name=mc-1", "--broker-ca-file="+filepath.Join(dir, "missing.crt"))
		_, err := parse(t, args...).AgentOptions()
		if err == nil || !strings.Contains(err.Error(), "--broker-ca-file") {
			t.Errorf("AgentOptions() = %v, want the flag named", err)
		}
	})
}

// TestRunServesMetricsAndStops runs the command while the management cluster does not answer: the agent
// waits for it, serves its metrics and health, and stops cleanly when told to.
func TestRunServesMetricsAndStops(t *testing.T) {
	b := maestrotest.StartBroker(t)
	port := framework.FreePort(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := NewCommand(ctx)
	cmd.SetArgs([]string{"--agent-bundle=" + b.AgentBundle(t, "hcp", "mc-1"), "--kubeconfig=" + writeKubeconfig(t, "https://127.0.0.1:1"),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(port)})
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if got := httpGet(t, base+"/healthz"); got != "ok" {
		t.Errorf("/healthz = %q", got)
	}
	// Its records on the management cluster cannot be read, so it has not connected: alive, not ready.
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "not connected to the MQTT broker") {
		t.Errorf("/readyz answered %d %q, want 503 saying the agent is not connected", resp.StatusCode, body)
	}
	if got := httpGet(t, base+"/metrics"); !strings.Contains(got, "maestro_agent_bundles_applied_total 0") {
		t.Errorf("/metrics does not show the agent's metrics:\n%s", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the command returned %v when stopped", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop")
	}
}

func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("maestro-agent", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// httpGet returns the body of url once it answers 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, readErr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && readErr == nil {
				return string(body)
			}
			err = readErr
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters:
- name: mc
  cluster:
    server: ` + server + `
    insecure-skip-tls-verify: true
users:
- name: agent
  user:
    token: t
contexts:
- name: mc
  context:
    cluster: mc
    user: agent
current-context: mc
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
