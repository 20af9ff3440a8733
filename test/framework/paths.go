package framework

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// Tool returns the path of a program that hack/build-test-tools.sh builds, such as "etcd"
// or "kube-apiserver": from $HCP_TEST_TOOLS_DIR if set, else <repo root>/_output/tools.
// The test is skipped when the program is not there.
func Tool(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("HCP_TEST_TOOLS_DIR")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "_output", "tools")
	}
	path := filepath.Join(dir, name)
	if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		t.Skipf("%s not found in %s: run hack/build-test-tools.sh (make test runs it)", name, dir)
	}
	return path
}

// SharedDir returns the project's shared folder, which holds the HyperShift CRDs and
// examples: $HCP_SHARED_DIR if set, else the folder "shared" beside the repository.
// The test is skipped when it is not there.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("HCP_SHARED_DIR")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(filepath.Dir(root), "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "hypershift", "crds")); err != nil {
		t.Skipf("the HyperShift CRDs come from the project's shared folder shared/hypershift/crds, "+
			"not found at %s: set HCP_SHARED_DIR to the folder that holds hypershift/crds", dir)
	}
	return dir
}

// RepoRoot returns the folder holding this module's go.mod.
func RepoRoot() (string, error) { return paths.RepoRoot() }
