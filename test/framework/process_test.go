package framework

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcessStopKillsAProcessThatIgnoresSIGTERM(t *testing.T) {
	sh := lookPath(t, "sh")
	// The ignored SIGTERM survives exec, so sleep itself ignores it and no child is left.
	p := StartProcess(t, ComponentDir(t, "stubborn"), sh, "-c", `trap "" TERM; echo started; exec sleep 600`)
	waitForLog(t, p, "started")

	start := time.Now()
	err := p.stop(time.Second)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("stop() = %v, want an error saying the process was killed", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("stop took %v, want about the 1s timeout", took)
	}
	assertProcessGone(t, p)
	if err := p.Stop(); err != nil {
		t.Errorf("a second Stop() = %v, want nil: the first one reported it", err)
	}
}

func TestProcessStopIsCleanOnSIGTERM(t *testing.T) {
	p := StartProcess(t, ComponentDir(t, "sleeper"), lookPath(t, "sleep"), "600")
	if err := p.Stop(); err != nil {
		t.Errorf("Stop() = %v, want nil for a process that exits on SIGTERM", err)
	}
	assertProcessGone(t, p)
}

func TestProcessLogTail(t *testing.T) {
	script := `i=1; while [ $i -le 150 ]; do echo line $i; i=$((i+1)); done; echo done >&2`
	p := StartProcess(t, ComponentDir(t, "chatty"), lookPath(t, "sh"), "-c", script)
	<-p.Exited()
	tail := strings.Split(p.logTail(logTailLines), "\n")
	if len(tail) != logTailLines {
		t.Fatalf("the tail has %d lines, want %d", len(tail), logTailLines)
	}
	if tail[0] != "line 52" || tail[len(tail)-1] != "done" {
		t.Errorf("the tail runs from %q to %q, want from \"line 52\" to \"done\" (stderr included)", tail[0], tail[len(tail)-1])
	}
	// It exited by itself, which Stop reports.
	if err := p.Stop(); err == nil {
		t.Error("Stop() = nil for a process that had already exited, want an error")
	}
}

// assertProcessGone fails the test if the process with p's PID still exists.
func assertProcessGone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Exited():
	default:
		t.Fatalf("%s (pid %d) has not exited", p.Name, p.PID())
	}
	proc, err := os.FindProcess(p.PID())
	if err != nil {
		return // Not found: gone.
	}
	if err := proc.Signal(syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("%s (pid %d) is still there after Stop: signal 0 returned %v", p.Name, p.PID(), err)
	}
}

func waitForLog(t *testing.T, p *Process, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if log, _ := os.ReadFile(p.LogFile); strings.Contains(string(log), text) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not log %q within 30s", p.Name, text)
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is needed for this test: %v", name, err)
	}
	return path
}
