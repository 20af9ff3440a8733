// Package paths finds the repository's root from a test's working directory. It uses the
// standard library only, so that any package's tests can use it without pulling in the
// server or the test harness.
package paths

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

const modulePath = "github.com/aro-hcp/hcp-apiserver"

// RepoRoot returns the folder holding this module's go.mod, found by walking up from the
// working directory (go test runs a test in its package's folder).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if modulePathOf(filepath.Join(dir, "go.mod")) == modulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of module " + modulePath + " in the working directory or above it")
		}
		dir = parent
	}
}

// modulePathOf returns the module path that a go.mod declares, or "" if it cannot be read.
func modulePathOf(goMod string) string {
	f, err := os.Open(goMod)
	if err != nil {
		return ""
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
