package app

import (
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// The watch cache's snapshots (k8s.io/apiserver's ListFromCacheSnapshot, beta and on since 1.34) let it
// answer a list at a past resource version, and the pages after the first of a paginated list, without
// etcd. For that it keeps, for every event it holds, the nodes of its B-tree that the event's write
// copied: with 100,000 clusters and a steady stream of creates, 150 MB of the server's live heap, which
// the collector marks over and over (test/bench/README.md). The server's own readers list whole
// (informers, controllers) or page through little (the shim's node pools of a cluster), so hcp-apiserver
// turns the snapshots off by default: those pages are read from etcd, as kube-apiserver read them before
// 1.34. A list of the current state (no continue token, no exact resource version) is served from the
// cache either way. --feature-gates=ListFromCacheSnapshot=true turns the snapshots back on.
//
// The storage's size estimates (SizeBasedListCostEstimate, beta and on since 1.34) keep, for every object
// of every resource, its key and the size of its value, updated on every event, and rebuild that map each
// minute from all the watch cache's keys: about 16 MB of the live heap at 100,000 clusters. Only API Priority
// and Fairness reads them, to weigh a list, and hcp-apiserver does not run it (it limits requests in flight);
// without them the storage counts each resource's objects in etcd once a minute, as it did before 1.34.
func init() {
	for _, gate := range []featuregate.Feature{features.ListFromCacheSnapshot, features.SizeBasedListCostEstimate} {
		if err := utilfeature.DefaultMutableFeatureGate.OverrideDefault(gate, false); err != nil {
			panic(err)
		}
	}
}
