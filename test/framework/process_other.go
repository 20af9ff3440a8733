//go:build !linux

package framework

import "os/exec"

// killWithTestProcess does nothing here: only Linux can tie a child's life to its parent's.
func killWithTestProcess(*exec.Cmd) {}
