package app

import (
	"testing"

	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// hcp-apiserver turns off two of k8s.io/apiserver's defaults that cost it memory for what it does without
// (features.go), and --feature-gates still turns each back on.
func TestGatesOffByDefault(t *testing.T) {
	for gate, why := range map[featuregate.Feature]string{
		// about 150 MB with 100,000 clusters under a stream of writes (test/bench/README.md)
		features.ListFromCacheSnapshot: "the watch cache's snapshots",
		// about 16 MB with 100,000 clusters, read only by API Priority and Fairness, which the server does not run
		features.SizeBasedListCostEstimate: "the storage's size estimates",
	} {
		if utilfeature.DefaultFeatureGate.Enabled(gate) {
			t.Errorf("%s (%s) is on by default, want off", gate, why)
		}
		flag := string(gate) + "=true"
		gates := utilfeature.DefaultMutableFeatureGate.DeepCopy()
		if err := gates.Set(flag); err != nil || !gates.Enabled(gate) {
			t.Errorf("--feature-gates=%s: %v, enabled %v, want %s on", flag, err, gates.Enabled(gate), why)
		}
	}
}
