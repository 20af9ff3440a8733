package clusterstatus

import "testing"

// The source may delete what it does not hold only once the cluster and the node pool controllers have
// both offered their bundles, in whichever order they finish.
func TestOfferGateWaitsForEveryController(t *testing.T) {
	synced := 0
	gate := NewOfferGate(func() { synced++ })
	clusters, pools := gate.Join(), gate.Join()

	pools()
	pools()
	if synced != 0 {
		t.Fatal("the source was told it is synced before the cluster controller offered its bundles")
	}
	clusters()
	clusters()
	if synced != 1 {
		t.Errorf("the source was told %d times, want once after both offered", synced)
	}
}
