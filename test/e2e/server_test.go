// Package e2e runs the hcp-apiserver binary as a process and drives it with the
// real kubectl, checking what a user of the API sees.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// commandTimeout is generous, because the tests share a loaded 2-core machine with builds and other tests.
const commandTimeout = 60 * time.Second

// examplesDir holds the example objects that the README tells users to apply;
// runningClusterExamplesDir those that need dev-cluster to be Succeeded first.
var (
	examplesDir               = filepath.Join("..", "..", "artifacts", "examples")
	runningClusterExamplesDir = filepath.Join(examplesDir, "running-cluster")
)

// kubectlMissing says why kubectl cannot be found; the tests skip then.
var kubectlMissing error

func TestMain(m *testing.M) {
	_, kubectlMissing = exec.LookPath("kubectl")
	os.Exit(m.Run())
}

// server is the hcp-apiserver binary in standalone mode on its embedded etcd, with kubectl
// pointed at it.
type server struct {
	*framework.HCPAPIServerProcess
	// cacheDir keeps kubectl's discovery cache out of the user's home.
	cacheDir string
}

// startServer starts hcp-apiserver on dataDir (reused if it holds data) and returns once it
// is ready. It is stopped when the test ends; a failed test shows the end of its log.
func startServer(t *testing.T, dataDir string) *server {
	t.Helper()
	if kubectlMissing != nil {
		t.Skip("kubectl not found on PATH: install kubectl (https://kubernetes.io/docs/tasks/tools/) to run the end-to-end tests")
	}
	return &server{
		HCPAPIServerProcess: framework.StartHCPAPIServerProcess(t, dataDir),
		cacheDir:            filepath.Join(t.TempDir(), "kubectl-cache"),
	}
}

// stop stops the server and reports unless it exited 0 on SIGTERM in time.
func (s *server) stop() error { return s.StopCleanly() }

// kubectl runs kubectl as the server's admin and returns what it printed (stdout and stderr).
func (s *server) kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, s.kubectlArgs(args...)...)
}

func (s *server) kubectlArgs(args ...string) []string {
	return append([]string{"--kubeconfig", s.Kubeconfig, "--cache-dir", s.cacheDir}, args...)
}

// mustKubectl is kubectl that fails the test when the command fails.
func (s *server) mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.kubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// failKubectl is kubectl that fails the test when the command succeeds.
func (s *server) failKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.kubectl(t, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want an error:\n%s", strings.Join(args, " "), out)
	}
	return out
}

// kubectl runs kubectl with exactly args, with no input, and gives up after commandTimeout, or, for a
// command given a longer --timeout (kubectl wait), 30 s after that.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	limit := commandTimeout
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, "--timeout="); ok {
			if d, err := time.ParseDuration(v); err == nil && d+30*time.Second > limit {
				limit = d + 30*time.Second
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("kubectl did not finish within %v: %w", limit, err)
	}
	return string(out), err
}

// writeFile writes content to a new file in a temporary folder of the test and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// markSucceeded reports a cluster as running through /status, as the service's controllers
// will, so that what needs a running cluster can be tried.
func (s *server) markSucceeded(t *testing.T, cluster string) {
	t.Helper()
	s.mustKubectl(t, "patch", "hcpcluster", cluster, "--subresource=status", "--type=merge",
		"-p", `{"status":{"provisioningState":"Succeeded"}}`)
}
