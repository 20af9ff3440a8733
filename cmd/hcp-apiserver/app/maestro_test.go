package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agent-bundle issues credentials only for a consumer name a ManagementCluster may carry.
func TestAgentBundleValidatesTheConsumerName(t *testing.T) {
	dataDir := t.TempDir()
	if err := newPKI(dataDir).Ensure([]string{"localhost"}); err != nil {
		t.Fatal(err)
	}
	options := func(consumer string) *agentBundleOptions {
		return &agentBundleOptions{dataDir: dataDir, consumer: consumer, brokerURL: "mqtts://127.0.0.1:8883",
			source: DefaultSource, output: filepath.Join(t.TempDir(), "agent.yaml")}
	}
	if a := options("mc-eastus-1"); a.writeAgentBundle() != nil {
		t.Fatalf("agent-bundle --consumer mc-eastus-1: %v", a.writeAgentBundle())
	}

	for name, tc := range map[string]struct {
		consumer string
		want     string
	}{
		"too long":        {strings.Repeat("a", 300), "--consumer: Too long: may not be more than 63 bytes"},
		"not a DNS label": {"MC_1", `--consumer: Invalid value: "MC_1": must be lowercase letters, digits and '-'`},
		"a topic segment": {"mc/+", `--consumer: Invalid value: "mc/+"`},
	} {
		t.Run(name, func(t *testing.T) {
			a := options(tc.consumer)
			err := a.writeAgentBundle()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "spec.consumerName") {
				t.Errorf("agent-bundle --consumer %q: %v; want an error saying %q and naming spec.consumerName", tc.consumer, err, tc.want)
			}
			if _, err := os.Stat(a.output); !os.IsNotExist(err) {
				t.Errorf("a bundle was written for consumer %q", tc.consumer)
			}
		})
	}
}
