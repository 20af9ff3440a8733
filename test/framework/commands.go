package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildMu sync.Mutex
	// built remembers the commands this test binary has built, so each is built once.
	built = map[string]string{}
)

// Command builds ./cmd/<name> of this repository (hcp-apiserver, maestro-agent, ...) once per
// test binary into _output/test-bin/ and returns its path, so tests run what users run.
func Command(t testing.TB, name string) string {
	t.Helper()
	path, err := Build(name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Build is Command for programs that are not tests, such as the benchmark in test/bench.
func Build(name string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if path, ok := built[name]; ok {
		return path, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "_output", "test-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Test packages run in parallel: build under a private name, then rename into place.
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	build := exec.Command("go", "build", "-o", tmp.Name(), "./cmd/"+name)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("building %s: %v\n%s", name, err, out)
	}
	path := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	built[name] = path
	return path, nil
}

// HCPAPIServerProcess is the hcp-apiserver binary running standalone on its embedded etcd.
type HCPAPIServerProcess struct {
	*Process
	// DataDir holds its etcd data, its PKI and admin.kubeconfig.
	DataDir string
	// URL is where it serves, on loopback.
	URL string
	// Kubeconfig is the admin kubeconfig it wrote once ready, in standalone mode.
	Kubeconfig string
}

// StartHCPAPIServerProcess starts the hcp-apiserver binary on dataDir (reused if it holds
// data) and a free port on loopback (or on the --bind-address=<host> among args), with extra
// args, and returns once it is ready: in standalone
// mode once it has written admin.kubeconfig, in aggregated mode (--authentication-kubeconfig
// among args) once /readyz passes. It is stopped when the test ends.
func StartHCPAPIServerProcess(t testing.TB, dataDir string, args ...string) *HCPAPIServerProcess {
	t.Helper()
	binary := Command(t, "hcp-apiserver")
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	// The server listens on loopback unless args name another --bind-address (the last one wins, as in pflag).
	host := "127.0.0.1"
	for _, arg := range args {
		if a, ok := strings.CutPrefix(arg, "--bind-address="); ok {
			host = a
		}
	}
	s := &HCPAPIServerProcess{
		DataDir:    dataDir,
		URL:        "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		Kubeconfig: filepath.Join(dataDir, "admin.kubeconfig"),
	}
	// The server deletes a kubeconfig left by its previous run, but perhaps only after we
	// first look for it: removing it here keeps "the file exists" meaning "ready".
	if err := os.Remove(s.Kubeconfig); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	s.Process = StartProcess(t, ComponentDir(t, "hcp-apiserver"), binary,
		append([]string{"--data-dir", dataDir, "--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1",
			// The embedded broker on a free port, so that servers of parallel tests do not collide.
			"--mqtt-bind-address", "127.0.0.1:0"}, args...)...)

	const readyTimeout = 2 * time.Minute
	if !slices.Contains(args, "--authentication-kubeconfig") {
		s.WaitUntilReady(t, readyTimeout, "admin.kubeconfig", func(context.Context) error {
			_, err := os.Stat(s.Kubeconfig)
			return err
		})
		return s
	}
	// Aggregated mode writes no kubeconfig: the callers are kube-apiserver's users. Its health
	// endpoints are open to anonymous callers, as in kube-apiserver.
	s.Kubeconfig = ""
	s.WaitUntilReady(t, readyTimeout, "/readyz", func(ctx context.Context) error { return getOK(ctx, s.URL+"/readyz") })
	return s
}

// getOK asks an HTTPS health endpoint whose certificate the test does not know, and fails unless it
// answers 200.
func getOK(ctx context.Context, url string) error {
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := insecure.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}

// StopCleanly stops the server with SIGTERM and fails unless it exits 0 in time, as a
// server that drains its requests and closes etcd does.
func (s *HCPAPIServerProcess) StopCleanly() error {
	if err := s.Stop(); err != nil {
		return err
	}
	if err := s.ExitError(); err != nil {
		return fmt.Errorf("hcp-apiserver did not exit cleanly on SIGTERM: %v", err)
	}
	return nil
}
