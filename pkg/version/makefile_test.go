package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// TestMakefileStampsSemver checks that the version `make build` stamps is semver, in a repository
// without a release tag and in one with a tag and commits after it.
func TestMakefileStampsSemver(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	makefile := filepath.Join(root, "Makefile")
	repo := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	wantSemver := func(when, want string) {
		t.Helper()
		got := run("make", "-s", "--no-print-directory", "-f", makefile, "version")
		if _, err := utilversion.ParseSemantic(got); err != nil {
			t.Errorf("%s: make version = %q: %v", when, got, err)
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: make version = %q, want it to start with %q", when, got, want)
		}
	}

	run("git", "init", "-q")
	run("git", "commit", "-q", "--allow-empty", "-m", "first")
	wantSemver("before the first tag", "v0.0.0-dev+")
	run("git", "tag", "v0.3.0")
	wantSemver("on a tag", "v0.3.0")
	run("git", "commit", "-q", "--allow-empty", "-m", "second")
	wantSemver("after a tag", "v0.3.0-1-g")
}
