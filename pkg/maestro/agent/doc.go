// Package agent is the engine of the maestro-agent (DESIGN.md sections 4 and 5): it applies the manifests of
// a ManifestBundle to the management cluster, watches what it applied, evaluates the bundle's feedback rules
// and builds the ManifestBundleStatus the agent sends back, and deletes a bundle's objects when the bundle is
// deleted. It speaks to the management cluster's kube-apiserver only; the MQTT side lives elsewhere.
//
// The pieces:
//   - Applier writes a bundle's manifests (server-side apply by default; Update, CreateOnly and ReadOnly on
//     request), refuses a generation older than the one already applied, and deletes a bundle's objects.
//   - BuildStatus and FeedbackValues turn the objects as they are into a status, as the OCM work agent
//     reports it; StatusHash says whether it changed.
//   - Watcher keeps informers on the applied objects and calls back with a bundle's status whenever it
//     changes: no polling.
//
// Every object the agent writes carries the label BundleLabel (the bundle's resource ID) and the annotation
// GenerationAnnotation (the bundle generation that wrote it). The labels are how the agent finds its own
// objects again after a restart, including objects a later generation of the bundle no longer lists; the
// annotation is how it refuses to go back to an older generation.
//
// It imports nothing of the server (apiserver, registry, admission, controller) nor apis/: only
// pkg/maestro/protocol and client-go, so the agent binary stays small.
package agent
