// Package protocol is the Maestro wire protocol as this project speaks it (DESIGN.md section 4): the MQTT
// topics, the CloudEvents types and extensions of the open-cluster-management (OCM) "manifestbundles" data
// type, their JSON payloads, and the codec between an event and an MQTT v5 PUBLISH.
//
// It knows manifest bundles, not clusters: it imports nothing from apis/ or the server packages, so the
// maestro-agent binary can use it and stay small.
//
// On the wire an event travels in CloudEvents binary content mode, as the cloudevents/sdk-go mqtt_paho
// binding writes it: every attribute and extension is a user property "ce-<name>", datacontenttype is the
// MQTT Content Type property and the payload is the event's data. FromMQTT also reads structured mode
// (Content Type application/cloudevents+json, the whole event as the payload), which is how the examples in
// shared/maestro/examples are written.
//
// Dependencies, and why each one:
//   - github.com/cloudevents/sdk-go/v2: the CloudEvents 1.0 event type, its validation, the JSON
//     (structured) format and the binding machinery that maps an event to and from a transport message,
//     so attribute names, value formats and validation match Maestro and the OCM work agent, which use it.
//     Only its event, binding and types packages are imported: the root package also pulls in its HTTP client.
//   - github.com/eclipse/paho.golang: the MQTT v5 client the source and agent publish with; the codec
//     produces and reads its PublishProperties (Content Type and user properties).
//   - k8s.io/apimachinery metav1: the payloads' conditions are metav1.Condition and the metadata extension
//     is a JSON-encoded metav1.ObjectMeta, exactly as OCM declares them.
//
// Not used, on purpose: github.com/cloudevents/sdk-go/protocol/mqtt_paho/v2, the upstream binding, is not
// served by the module proxy this project builds with and was written against paho.golang v0.12; binding.go
// is the same small adapter (about a hundred lines) on paho.golang v0.23. open-cluster-management.io/sdk-go
// and open-cluster-management.io/api are not imported: they pin a second Kubernetes version, so the payload
// structs are declared here with OCM's JSON field names.
package protocol
