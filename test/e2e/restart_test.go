package e2e

import (
	"strings"
	"testing"
)

// TestObjectsSurviveRestart stops the server and starts a new one on the same data
// folder: what was stored is still there, as it was, and what was deleted stays gone.
func TestObjectsSurviveRestart(t *testing.T) {
	dataDir := t.TempDir()
	s := startServer(t, dataDir)
	s.mustKubectl(t, "apply", "-f", examplesDir)
	s.markSucceeded(t, "dev-cluster")
	s.mustKubectl(t, "apply", "-f", runningClusterExamplesDir)
	s.mustKubectl(t, "delete", "bgc", "dev-cluster-oncall")
	objects := []string{"hcp", "-o", "custom-columns=KIND:.kind,NAME:.metadata.name,UID:.metadata.uid,GENERATION:.metadata.generation"}
	before := s.mustKubectl(t, append([]string{"get"}, objects...)...)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, dataDir)
	after := s.mustKubectl(t, append([]string{"get"}, objects...)...)
	if after != before {
		t.Errorf("the objects changed across a restart:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, name := range []string{"mc-eastus-1", "dev-cluster", "dev-cluster.workers", "dev-cluster.gpu"} {
		if !strings.Contains(after, " "+name+" ") {
			t.Errorf("%s is gone after the restart:\n%s", name, after)
		}
	}
	if strings.Contains(after, "dev-cluster-oncall") {
		t.Errorf("the deleted BreakglassCredential dev-cluster-oncall is back after the restart:\n%s", after)
	}

	// Applying the same files again finds nothing to change but the deleted object.
	out := s.mustKubectl(t, "apply", "-f", examplesDir)
	out += s.mustKubectl(t, "apply", "-f", runningClusterExamplesDir)
	for _, want := range []string{
		"managementcluster.hcp.aro.azure.com/mc-eastus-1 unchanged",
		"hcpcluster.hcp.aro.azure.com/dev-cluster unchanged",
		"nodepool.hcp.aro.azure.com/dev-cluster.workers unchanged",
		"nodepool.hcp.aro.azure.com/dev-cluster.gpu unchanged",
		"externalauth.hcp.aro.azure.com/dev-cluster.entra unchanged",
		"breakglasscredential.hcp.aro.azure.com/dev-cluster-oncall created",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply after the restart did not say %q:\n%s", want, out)
		}
	}
}
