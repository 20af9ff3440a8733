package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/maestrotest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// TestBinary runs the built maestro-agent against a management cluster and the embedded broker, as it is
// deployed: it connects with the agent bundle, tells the source what it holds, serves its metrics, and
// exits 0 on SIGTERM.
func TestBinary(t *testing.T) {
	binary := framework.Command(t, "maestro-agent")
	mc := framework.StartManagementCluster(t)
	b := maestrotest.StartBroker(t)

	resyncs := make(chan protocol.Event, 10)
	subscribed := make(chan struct{}, 1)
	agentEvents, err := protocol.AgentEventsTopic("hcp", "mc-1")
	if err != nil {
		t.Fatal(err)
	}
	source, err := transport.Connect(t.Context(), transport.Config{
		URL: b.URL, TLS: b.SourceTLS(t, "hcp"), ClientID: "test-source", Subscriptions: []string{agentEvents},
		OnEvent: func(_ string, e protocol.Event) {
			if e.EventType() == protocol.SpecResyncRequest {
				resyncs <- e
			}
		},
		OnConnect: func(context.Context) {
			select {
			case subscribed <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = source.Close(closeCtx)
	})
	select {
	case <-subscribed:
	case <-time.After(30 * time.Second):
		t.Fatal("the test source did not connect")
	}

	port := framework.FreePort(t)
	agent := framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), binary,
		"--agent-bundle="+b.AgentBundle(t, "hcp", "mc-1"),
		"--kubeconfig="+mc.Kubeconfig,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(port),
		"--v=2")
	select {
	case e := <-resyncs:
		if e.ClusterName() != "mc-1" {
			t.Errorf("the resync request is from %q, want mc-1", e.ClusterName())
		}
	case <-agent.Exited():
		t.Fatalf("maestro-agent exited: %v", agent.ExitError())
	case <-time.After(60 * time.Second):
		t.Fatal("no spec resync request from maestro-agent")
	}
	var metrics string
	// The counter moves once the broker acknowledged the publish, which may be after the source saw it.
	agent.WaitUntilReady(t, 30*time.Second, "/metrics counting the resync request", func(ctx context.Context) error {
		var err error
		if metrics, err = get(ctx, "http://127.0.0.1:"+strconv.Itoa(port)+"/metrics"); err != nil {
			return err
		}
		if !strings.Contains(metrics, "maestro_agent_resync_requests_sent_total 1") {
			return fmt.Errorf("no maestro_agent_resync_requests_sent_total 1 in /metrics:\n%s", metrics)
		}
		return nil
	})
	if ready, err := get(t.Context(), "http://127.0.0.1:"+strconv.Itoa(port)+"/readyz"); err != nil || ready != "ok" {
		t.Errorf("/readyz of a connected agent: %q, %v; want ok", ready, err)
	}
	if _, err := mc.Kube.CoreV1().Namespaces().Get(t.Context(), "maestro-agent", metav1.GetOptions{}); err != nil {
		t.Errorf("the state namespace: %v", err)
	}

	if err := agent.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := agent.ExitError(); err != nil {
		t.Errorf("maestro-agent exited with %v on SIGTERM, want status 0", err)
	}
}

func TestBadFlagsExitWithTheReason(t *testing.T) {
	binary := framework.Command(t, "maestro-agent")
	out, err := exec.Command(binary, "--broker-url=mqtts://broker", "--workers=0").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; output:\n%s", err, out)
	}
	for _, want := range []string{"missing: --broker-ca-file, --broker-cert-file, --broker-key-file, --consumer-name", "--workers 0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
}

// TestDependencies keeps the agent binary apart from the server: it must not link the API server, its
// registry, admission or controllers, nor the API types.
func TestDependencies(t *testing.T) {
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/maestro-agent")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/aro-hcp/hcp-apiserver/"
	forbidden := []string{"apis/", "pkg/apiserver", "pkg/registry", "pkg/admission", "pkg/controller", "pkg/maestro/source",
		"pkg/maestro/broker", "pkg/standalone", "pkg/embeddedetcd"}
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		for _, f := range forbidden {
			if strings.HasPrefix(rel, f) {
				t.Errorf("maestro-agent links %s", pkg)
			}
		}
	}
}

func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	return string(body), err
}
