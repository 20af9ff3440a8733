package app

import (
	"testing"

	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The watch cache's snapshots cost a server with 100,000 clusters about 150 MB under a stream of
// writes (test/bench/README.md); hcp-apiserver keeps them off unless --feature-gates turns them on.
func TestWatchCacheSnapshotsAreOffByDefault(t *testing.T) {
	if utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
		t.Error("ListFromCacheSnapshot is on by default, want off")
	}
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gate.Set("ListFromCacheSnapshot=true"); err != nil || !gate.Enabled(features.ListFromCacheSnapshot) {
		t.Errorf("--feature-gates=ListFromCacheSnapshot=true: %v, enabled %v, want it on", err, gate.Enabled(features.ListFromCacheSnapshot))
	}
}

// The storage's per-object size estimates serve only API Priority and Fairness, which hcp-apiserver does
// not run; they cost about 18 MB of the heap at 100,000 clusters, so they are off unless turned on.
func TestSizeEstimatesAreOffByDefault(t *testing.T) {
	if utilfeature.DefaultFeatureGate.Enabled(features.SizeBasedListCostEstimate) {
		t.Error("SizeBasedListCostEstimate is on by default, want off")
	}
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gate.Set("SizeBasedListCostEstimate=true"); err != nil || !gate.Enabled(features.SizeBasedListCostEstimate) {
		t.Errorf("--feature-gates=SizeBasedListCostEstimate=true: %v, enabled %v, want it on", err, gate.Enabled(features.SizeBasedListCostEstimate))
	}
}
