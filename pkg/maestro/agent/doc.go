// Package agent is the maestro-agent (DESIGN.md sections 4 and 5): it receives the ManifestBundles a source
// sends over MQTT, applies their manifests to the management cluster, watches what it applied, evaluates
// the bundles' feedback rules and sends back their ManifestBundleStatus, and deletes a bundle's objects when
// the bundle is deleted.
//
// The pieces:
//   - Agent speaks the protocol: it takes spec events, applies and deletes bundles one at a time per
//     bundle, sends status events with growing sequence IDs, resyncs with the source on every connect and
//     every interval, and records each bundle it holds in Secrets shared by many bundles (record.go), so
//     that a restart loses nothing.
//   - Applier writes a bundle's manifests (server-side apply by default; Update, CreateOnly and ReadOnly on
//     request), refuses a generation older than the one already applied, and deletes a bundle's objects.
//   - BuildStatus and FeedbackValues turn the objects as they are into a status, as the OCM work agent
//     reports it; StatusHash says whether it changed.
//   - Watcher keeps informers on the applied objects and calls back with a bundle's status whenever it
//     changes: no polling.
//   - Inspection bundles (inspection*.go) only read: a fixed view of a hosted control plane (its
//     HostedCluster, NodePools, Pods, Events, or a container's log tail), trimmed of what could hold a
//     secret and cut to MaxJSONRawLength, answered as the feedback value protocol.InspectionFeedbackName.
//     The Applier reads the view once per applied generation (and again after a restart); the status
//     carries that answer until the next. A bundle that is not all ReadOnly manifests of the kinds their
//     views read around is refused whole, before anything is read, and its status says why
//     (ReasonInspectionRefused).
//
// Every object the agent writes carries the label BundleLabel (the bundle's resource ID) and the annotation
// GenerationAnnotation (the bundle generation that wrote it). The labels are how the agent finds its own
// objects again after a restart, including objects a later generation of the bundle no longer lists; the
// annotation is how it refuses to go back to an older generation. The Watcher's informers hold every
// labelled object, so an apply reads them there, not from the management cluster.
//
// It imports nothing of the server (apiserver, registry, admission, controller) nor apis/: only
// pkg/maestro/protocol, pkg/maestro/transport, client-go and component-base's metrics, so the agent
// binary stays small.
package agent
