package app

import (
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
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
func init() {
	if err := utilfeature.DefaultMutableFeatureGate.OverrideDefault(features.ListFromCacheSnapshot, false); err != nil {
		panic(err)
	}
}
