package framework

import (
	"os/exec"
	"syscall"
)

// killWithTestProcess has the kernel kill cmd when the test binary dies without stopping
// it (a panic, or go test's -timeout), so that no process outlives the tests.
func killWithTestProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
