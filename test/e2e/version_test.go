package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// TestKubectlVersion runs kubectl version against the binary: kubectl fails unless the server's /version
// is semver. --version of both binaries prints the same version.
func TestKubectlVersion(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	// Only stdout is JSON: kubectl warns on stderr about the skew between its version and the server's.
	cmd := exec.CommandContext(ctx, "kubectl", s.kubectlArgs("version", "-o", "json")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl version: %v\n%s%s", err, out, stderr.String())
	}
	var versions struct {
		ServerVersion *apimachineryversion.Info `json:"serverVersion"`
	}
	if err := json.Unmarshal(out, &versions); err != nil || versions.ServerVersion == nil {
		t.Fatalf("kubectl version -o json printed no server version (%v):\n%s", err, out)
	}
	server := versions.ServerVersion.GitVersion
	if _, err := utilversion.ParseSemantic(server); err != nil {
		t.Errorf("server version %q: %v", server, err)
	}

	for _, name := range []string{"hcp-apiserver", "maestro-agent"} {
		out, err := exec.CommandContext(ctx, framework.Command(t, name), "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", name, err, out)
		}
		if got, want := strings.TrimSpace(string(out)), name+" "+server; got != want {
			t.Errorf("%s --version printed %q, want %q", name, got, want)
		}
	}
}
