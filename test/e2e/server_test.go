// Package e2e runs the hcp-apiserver binary as a process and drives it with the
// real kubectl, checking what a user of the API sees.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Generous, because the tests share a loaded 2-core machine with builds and other tests.
const (
	readyTimeout    = 2 * time.Minute
	shutdownTimeout = 30 * time.Second
	commandTimeout  = 60 * time.Second
)

// examplesDir holds the example objects that the README tells users to apply;
// runningClusterExamplesDir those that need dev-cluster to be Succeeded first.
var (
	examplesDir               = filepath.Join("..", "..", "artifacts", "examples")
	runningClusterExamplesDir = filepath.Join(examplesDir, "running-cluster")
)

var (
	// serverBinary is the hcp-apiserver that TestMain builds once for all tests.
	serverBinary string
	// kubectlMissing says why kubectl cannot be found; the tests skip then.
	kubectlMissing error
)

func TestMain(m *testing.M) { os.Exit(buildAndRun(m)) }

func buildAndRun(m *testing.M) int {
	if _, kubectlMissing = exec.LookPath("kubectl"); kubectlMissing != nil {
		return m.Run() // Every test skips; there is nothing to build for.
	}
	dir, err := os.MkdirTemp("", "hcp-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBinary = filepath.Join(dir, "hcp-apiserver")
	build := exec.Command("go", "build", "-o", serverBinary, "github.com/aro-hcp/hcp-apiserver/cmd/hcp-apiserver")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building hcp-apiserver: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// server is an hcp-apiserver process in standalone mode on its embedded etcd.
type server struct {
	dataDir string
	url     string
	// kubeconfig is the admin kubeconfig (a client certificate in system:masters)
	// that the server writes once it is ready.
	kubeconfig string
	// cacheDir keeps kubectl's discovery cache out of the user's home.
	cacheDir string
	logFile  string

	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has exited
	exitErr error         // how it exited; read only after exited is closed
	stopped sync.Once
}

// startServer starts hcp-apiserver on dataDir (reused if it holds data) and a free
// loopback port, and returns once it is ready. The server is stopped when the test
// ends, and its log is attached to the test if the test failed.
func startServer(t *testing.T, dataDir string) *server {
	t.Helper()
	if kubectlMissing != nil {
		t.Skip("kubectl not found on PATH: install kubectl (https://kubernetes.io/docs/tasks/tools/) to run the end-to-end tests")
	}
	port := freePort(t)
	tmp := t.TempDir()
	s := &server{
		dataDir:    dataDir,
		url:        "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		kubeconfig: filepath.Join(dataDir, "admin.kubeconfig"),
		cacheDir:   filepath.Join(tmp, "kubectl-cache"),
		logFile:    filepath.Join(tmp, "hcp-apiserver.log"),
		exited:     make(chan struct{}),
	}
	// The server deletes a kubeconfig left by its previous run, but perhaps only after
	// we first look for it: removing it here keeps "the file exists" meaning "ready".
	if err := os.Remove(s.kubeconfig); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	log, err := os.Create(s.logFile)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(serverBinary, "--data-dir", dataDir, "--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	killWithTestProcess(s.cmd)
	if err := s.cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("starting hcp-apiserver: %v", err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		log.Close()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			s.attachLog(t)
		}
	})

	deadline := time.After(readyTimeout)
	for {
		if _, err := os.Stat(s.kubeconfig); err == nil {
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("hcp-apiserver exited before it was ready (%v); its log is below", s.exitErr)
		case <-deadline:
			t.Fatalf("hcp-apiserver did not write %s within %v; its log is below", s.kubeconfig, readyTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits for the server to exit; one that is still running after
// shutdownTimeout is killed. It returns an error, once, if the server did not exit 0 in time.
func (s *server) stop() error {
	var err error
	s.stopped.Do(func() {
		select {
		case <-s.exited:
			err = fmt.Errorf("hcp-apiserver exited before the test stopped it: %v", s.exitErr)
			return
		default:
		}
		// Should the signal fail, the server does not stop and is killed below.
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
			if s.exitErr != nil {
				err = fmt.Errorf("hcp-apiserver did not exit cleanly on SIGTERM: %v", s.exitErr)
			}
		case <-time.After(shutdownTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
			err = fmt.Errorf("hcp-apiserver was still running %v after SIGTERM; killed it", shutdownTimeout)
		}
	})
	return err
}

func (s *server) attachLog(t *testing.T) {
	log, err := os.ReadFile(s.logFile)
	if err != nil {
		t.Logf("reading the hcp-apiserver log: %v", err)
		return
	}
	t.Logf("hcp-apiserver log (%s):\n%s", s.url, log)
}

// kubectl runs kubectl as the server's admin and returns what it printed (stdout and stderr).
func (s *server) kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, s.kubectlArgs(args...)...)
}

func (s *server) kubectlArgs(args ...string) []string {
	return append([]string{"--kubeconfig", s.kubeconfig, "--cache-dir", s.cacheDir}, args...)
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

// kubectl runs kubectl with exactly args, with no input, and gives up after commandTimeout.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("kubectl did not finish within %v: %w", commandTimeout, err)
	}
	return string(out), err
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
