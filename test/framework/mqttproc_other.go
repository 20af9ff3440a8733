//go:build !linux

package framework

import "os/exec"

// mqttKillWithTestProcess does nothing where there is no parent-death signal.
func mqttKillWithTestProcess(*exec.Cmd) {}
