package framework

import (
	"os/exec"
	"syscall"
)

// mqttKillWithTestProcess has the kernel kill cmd when the test binary dies without
// stopping it (a panic, or go test's -timeout), so that no broker outlives the tests.
// TODO: use the process runner of process.go once it exists.
func mqttKillWithTestProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
