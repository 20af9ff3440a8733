package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// stopTimeout is how long a process has to exit after SIGTERM before it is killed.
	stopTimeout = 30 * time.Second
	// logTailLines is how much of a process's log a failed test shows.
	logTailLines = 100
)

// Process is a program that a test started, with its stdout and stderr in a log file.
// It is stopped when the test ends, and a failed test shows the end of its log.
type Process struct {
	// Name identifies it in messages, e.g. "etcd-0" or "kube-apiserver".
	Name string
	// Dir is its folder: its log, and the data and files it was started with.
	Dir string
	// LogFile holds what it wrote to stdout and stderr.
	LogFile string

	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has exited
	exitErr error         // how it exited; read only after exited is closed

	stopOnce sync.Once
	stopErr  error
}

// ComponentDir returns a new, empty folder named after a component under the test's
// temporary folder; it is removed when the test ends, after the processes are stopped.
func ComponentDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// StartProcess starts binary with args in dir, which names the process (see ComponentDir).
// It does not wait for the program to be ready: see WaitUntilReady.
func StartProcess(t testing.TB, dir, binary string, args ...string) *Process {
	t.Helper()
	p := &Process{
		Name:    filepath.Base(dir),
		Dir:     dir,
		LogFile: filepath.Join(dir, filepath.Base(dir)+".log"),
		exited:  make(chan struct{}),
	}
	log, err := os.Create(p.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = log, log
	killWithTestProcess(p.cmd)
	if err := p.cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("starting %s: %v", p.Name, err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("%s: the last %d lines of %s:\n%s", p.Name, logTailLines, p.LogFile, p.logTail(logTailLines))
		}
	})
	return p
}

// PID is the process id, which stays meaningful after Stop for checking that it is gone.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitError is how the process exited (nil for status 0); it waits until it has.
func (p *Process) ExitError() error {
	<-p.exited
	return p.exitErr
}

// Stop sends SIGTERM and waits for the process to exit; one still running after 30s is
// killed. It returns an error, from its first call only, if the process had already exited
// on its own or had to be killed. Exiting on SIGTERM, with whatever status, is not an error:
// etcd, for one, re-raises the signal after its clean shutdown.
func (p *Process) Stop() error { return p.stop(stopTimeout) }

// Kill kills the process with SIGKILL, as a crash or a lost node would end it, and waits until it
// has exited. Stop after Kill does nothing.
func (p *Process) Kill() error {
	var err error
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
			err = fmt.Errorf("%s exited before the test killed it: %v", p.Name, p.exitErr)
			return
		default:
		}
		err = p.cmd.Process.Kill()
		<-p.exited
	})
	return err
}

func (p *Process) stop(timeout time.Duration) error {
	first := false
	p.stopOnce.Do(func() {
		first = true
		select {
		case <-p.exited:
			p.stopErr = fmt.Errorf("%s exited before the test stopped it: %v", p.Name, p.exitErr)
			return
		default:
		}
		// Should the signal fail, the process does not stop and is killed below.
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(timeout):
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.stopErr = fmt.Errorf("%s was still running %v after SIGTERM; killed it", p.Name, timeout)
		}
	})
	if !first {
		return nil
	}
	return p.stopErr
}

// WaitUntilReady calls ready every 100ms until it returns nil, and fails the test if the
// process exits or timeout passes first; what says what is awaited, for the failure message.
func (p *Process) WaitUntilReady(t testing.TB, timeout time.Duration, what string, ready func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// Each try gets a few seconds, so that one hung request does not use up the whole wait.
		tryCtx, cancelTry := context.WithTimeout(ctx, 5*time.Second)
		err := ready(tryCtx)
		cancelTry()
		if err == nil {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited (%v) before %s; the end of its log is below", p.Name, p.exitErr, what)
		case <-ctx.Done():
			t.Fatalf("%s: no %s within %v: %v", p.Name, what, timeout, err)
		case <-tick.C:
		}
	}
}

// logTail returns the last n lines of the process's log.
func (p *Process) logTail(n int) string {
	log, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(reading the log: %v)", err)
	}
	log = bytes.TrimRight(log, "\n")
	for i := len(log) - 1; i >= 0; i-- {
		if log[i] == '\n' {
			if n--; n == 0 {
				return string(log[i+1:])
			}
		}
	}
	return string(log)
}

var (
	portsMu sync.Mutex
	// portsGiven keeps FreePort from handing the same port out twice in one test binary,
	// which the kernel may do once a port it picked has been released.
	portsGiven = map[int]bool{}
)

// FreePort returns a loopback TCP port that nothing listens on. Another program may still
// take it before the caller binds it, but this test binary will not hand it out again.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !portsGiven[port] {
			portsGiven[port] = true
			return port
		}
	}
	t.Fatal(errors.New("no free loopback port found in 100 tries"))
	return 0
}
