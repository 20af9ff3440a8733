package bundle

import "testing"

// The source may delete what it does not hold only once the cluster and the node pool reconcilers have
// both offered their bundles, in whichever order they finish.
func TestOfferGateWaitsForEveryReconciler(t *testing.T) {
	synced := 0
	gate := NewOfferGate(func() { synced++ })
	clusters, pools := gate.Join(), gate.Join()

	pools()
	pools()
	if synced != 0 {
		t.Fatal("the source was told it is synced before the cluster reconciler offered its bundles")
	}
	clusters()
	clusters()
	if synced != 1 {
		t.Errorf("the source was told %d times, want once after both offered", synced)
	}
}
