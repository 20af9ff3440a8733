//go:build tools

// Package tools pins the command hack/build-test-tools.sh builds from this module: the work agent.
package tools

import (
	_ "open-cluster-management.io/ocm/cmd/work"
)
