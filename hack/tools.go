//go:build tools

// Package tools pins the code generators that hack/update-codegen.sh runs, so
// they come from the same module graph as the code they generate.
package tools

import (
	_ "k8s.io/code-generator"
)
