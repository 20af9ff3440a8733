package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlShowsAdmissionRefusals shows what a user reads when a service rule says no.
func TestKubectlShowsAdmissionRefusals(t *testing.T) {
	s := startServer(t, t.TempDir())
	s.mustKubectl(t, "apply", "-f", examplesDir)

	// An OpenShift version the service does not offer.
	old := writeFile(t, "old.yaml", strings.Replace(readExample(t, "10-hcpcluster.yaml"), `id: "4.20"`, `id: "4.18"`, 1))
	out := s.failKubectl(t, "apply", "-f", old)
	for _, want := range []string{
		`The HCPCluster "dev-cluster" is invalid`,
		`spec.version.id: Invalid value: "4.18": must be one of 4.20, 4.21 in channel group stable (admission plugin VersionPolicy)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl did not show %q:\n%s", want, out)
		}
	}

	// A credential for a cluster that is not running yet.
	out = s.failKubectl(t, "apply", "-f", runningClusterExamplesDir)
	if !strings.Contains(out, "BreakglassPolicy") || !strings.Contains(out, "Succeeded") {
		t.Errorf("kubectl did not show the BreakglassPolicy refusal:\n%s", out)
	}
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
