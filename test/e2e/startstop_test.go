package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// stopWithin is how long the server may take to exit after SIGTERM, at any moment, on a loaded machine.
const stopWithin = 10 * time.Second

// TestSecondServerOnTheSameDataDir starts a second server on the data directory of a running one: it exits
// at once and says which folder and which process hold it, where it used to wait for etcd's database
// forever; the first one goes on serving.
func TestSecondServerOnTheSameDataDir(t *testing.T) {
	first := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), stopWithin)
	defer cancel()
	out, err := exec.CommandContext(ctx, framework.Command(t, "hcp-apiserver"), serverArgs(t, first.DataDir)...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the second server was still running after %v:\n%s", stopWithin, out)
	}
	if err == nil {
		t.Fatalf("the second server exited 0:\n%s", out)
	}
	if want := fmt.Sprintf("the data directory %s is in use by the process with PID %d", first.DataDir, first.PID()); !strings.Contains(string(out), want) {
		t.Errorf("the second server did not say %q:\n%s", want, out)
	}
	// The second server left alone what the first one wrote, admin.kubeconfig among it.
	first.mustKubectl(t, "get", "hcp")
}

// TestSIGTERMDuringStartup sends SIGTERM at moments of the server's start-up: it exits within seconds
// every time, also while etcd waits for a database that another process holds.
func TestSIGTERMDuringStartup(t *testing.T) {
	t.Run("while etcd waits for its database", func(t *testing.T) {
		dataDir := t.TempDir()
		if err := framework.StartHCPAPIServerProcess(t, dataDir).StopCleanly(); err != nil {
			t.Fatal(err)
		}
		db, err := os.OpenFile(filepath.Join(dataDir, "etcd", "member", "snap", "db"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// bbolt locks its file with flock(2) and waits as long as it takes.
		if err := syscall.Flock(int(db.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		terminateDuringStartup(t, dataDir, 2*time.Second)
	})
	for _, delay := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond,
		time.Second, 1500 * time.Millisecond, 2 * time.Second, 3 * time.Second} {
		t.Run("after "+delay.String(), func(t *testing.T) {
			terminateDuringStartup(t, t.TempDir(), delay)
		})
	}
}

// TestStopIsQuiet stops a server that is serving: a clean stop logs no errors, where etcd used to log its
// listeners closing as failures with stack traces.
func TestStopIsQuiet(t *testing.T) {
	s := framework.StartHCPAPIServerProcess(t, t.TempDir())
	if err := s.StopCleanly(); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(s.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if strings.HasPrefix(line, "E") || strings.Contains(line, `"level":"error"`) || strings.Contains(line, "stacktrace") {
			t.Errorf("a clean stop logged an error: %s", line)
		}
	}
}

// terminateDuringStartup starts the server on dataDir, sends it SIGTERM after delay, and fails unless it
// exits within stopWithin, with status 0 or by the signal itself (when it comes before the server handles it).
func terminateDuringStartup(t *testing.T, dataDir string, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(framework.Command(t, "hcp-apiserver"), serverArgs(t, dataDir)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM) {
			t.Errorf("SIGTERM %v after start: the server exited with %v; its log:\n%s", delay, err, log.String())
		}
		t.Logf("SIGTERM %v after start: exited after %v", delay, time.Since(sent).Round(time.Millisecond))
	case <-time.After(stopWithin):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("SIGTERM %v after start: the server was still running %v later; killed it. Its log:\n%s", delay, stopWithin, log.String())
	}
}

// serverArgs are the flags of a standalone server on dataDir and free loopback ports.
func serverArgs(t *testing.T, dataDir string) []string {
	return []string{"--data-dir", dataDir, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(framework.FreePort(t)),
		"--mqtt-bind-address", "127.0.0.1:0"}
}
