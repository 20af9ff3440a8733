// Package updateservice is a TEST DOUBLE of the OpenShift update service (Cincinnati). It is not
// Cincinnati and reads no release images or graph data.
//
// It serves GET /api/upgrades_info/v1/graph?channel=<channel>&arch=<arch> in the service's wire
// format ({"nodes":[{"version","payload","metadata"}],"edges":[[from,to]],"conditionalEdges":[...]})
// from graphs the test sets per channel and changes while it runs (Set, AddNode, AddEdge,
// AddConditionalEdge, RemoveNode), so that the code that polls the service can be tested end to end:
//
//   - A node's metadata io.openshift.upgrades.graph.release.channels lists every channel whose graph
//     has its version, as the real service lists the channels a release is in, unless the test set it.
//     A node without a payload gets quay.io/openshift-release-dev/ocp-release:<version>-<arch> for the
//     requested arch (x86_64 for amd64, aarch64 for arm64). A channel never set serves an empty graph.
//   - Each answer has an ETag (a hash of the body) and a Last-Modified (when the channel last
//     changed, at least a second after the change before it, so that it moves with every change). A
//     request whose If-None-Match names the ETag, or, without If-None-Match, whose If-Modified-Since is
//     not before Last-Modified, gets 304 Not Modified.
//   - A request that is not GET, does not accept application/json, or lacks the channel or arch query
//     parameter gets 400 and is listed in Rejected; any other path gets 404.
//   - Faults, for all channels or the ones named: Down answers 503, Garbage answers 200 with a body
//     that is no graph, Up ends them.
//   - Requests counts the requests for each channel, NotModified the 304s among them.
package updateservice
