package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// TestManagementClusterShowsItsAgentAndLoad: `kubectl get mc` tells whether the management cluster's
// agent is connected and how full the cluster is; a killed agent shows as gone within the liveness
// timeout, and as connected again once it is back.
func TestManagementClusterShowsItsAgentAndLoad(t *testing.T) {
	st := startDeliveryStack(t, hypershiftsim.Options{}, "--maestro-liveness-interval=1s", "--maestro-liveness-timeout=5s")
	s := st.server
	waitMC := func(condition, timeout string) {
		t.Helper()
		if out, err := s.kubectl(t, "wait", "--for=condition="+condition, "mc/mc-eastus-1", "--timeout="+timeout); err != nil {
			desc, _ := s.kubectl(t, "get", "mc/mc-eastus-1", "-o", "yaml")
			t.Fatalf("kubectl wait --for=condition=%s: %v\n%s\n%s", condition, err, out, desc)
		}
	}
	waitMC("AgentConnected", "60s")

	st.exampleClusterUp(t)
	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "20-nodepool.yaml"))
	want := map[string]string{"HOSTED": "1/", "NODEPOOLS": "2", "CONNECTED": "True"} // the example has two pools
	var row map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 30*time.Second, true, func(context.Context) (bool, error) {
		row = columns(t, s.mustKubectl(t, "get", "mc/mc-eastus-1"), "mc-eastus-1")
		for column, value := range want {
			if !strings.HasPrefix(row[column], value) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("kubectl get mc shows %v, want %v", row, want)
	}
	if resync := s.mustKubectl(t, "get", "mc/mc-eastus-1", "-o", "jsonpath={.status.lastResync}"); resync == "" {
		t.Error("status.lastResync is empty although the agent resynced when it connected")
	}

	if err := st.agent.Kill(); err != nil {
		t.Fatal(err)
	}
	waitMC("AgentConnected=False", "20s")
	if reason := s.mustKubectl(t, "get", "mc/mc-eastus-1", "-o", `jsonpath={.status.conditions[?(@.type=="AgentConnected")].reason}`); reason != "Disconnected" {
		t.Errorf("AgentConnected reason %q once the agent was killed, want Disconnected", reason)
	}

	st.startAgent(t)
	waitMC("AgentConnected=True", "60s")
}

// columns reads the row named name of kubectl's table output as column -> cell.
func columns(t *testing.T, table, name string) map[string]string {
	t.Helper()
	header, cells := strings.Fields(strings.SplitN(table, "\n", 2)[0]), tableRow(t, table, name)
	row := map[string]string{}
	for i, column := range header {
		if i < len(cells) {
			row[column] = cells[i]
		}
	}
	return row
}
