package protocol

import (
	"fmt"
	"strings"
)

// ManifestBundleDataType is the only CloudEvents data type this protocol carries.
const ManifestBundleDataType = "io.open-cluster-management.works.v1alpha1.manifestbundles"

// SubResource says whether an event is about a bundle's spec or its status.
type SubResource string

const (
	SubResourceSpec   SubResource = "spec"
	SubResourceStatus SubResource = "status"
)

// Action is the last part of an event type.
type Action string

const (
	ActionCreateRequest  Action = "create_request"
	ActionUpdateRequest  Action = "update_request"
	ActionDeleteRequest  Action = "delete_request"
	ActionResyncRequest  Action = "resync_request"
	ActionResyncResponse Action = "resync_response"
)

// EventType is a parsed CloudEvents type: <DataType>.<SubResource>.<Action>.
type EventType struct {
	DataType    string
	SubResource SubResource
	Action      Action
}

// The event types of DESIGN.md section 4. Spec events go from the source to the agent, except
// SpecResyncRequest, which the agent sends on (re)connect; status events go from the agent to the source,
// except StatusResyncRequest, which the source sends.
var (
	SpecCreateRequest    = EventType{ManifestBundleDataType, SubResourceSpec, ActionCreateRequest}
	SpecUpdateRequest    = EventType{ManifestBundleDataType, SubResourceSpec, ActionUpdateRequest}
	SpecDeleteRequest    = EventType{ManifestBundleDataType, SubResourceSpec, ActionDeleteRequest}
	SpecResyncRequest    = EventType{ManifestBundleDataType, SubResourceSpec, ActionResyncRequest}
	SpecResyncResponse   = EventType{ManifestBundleDataType, SubResourceSpec, ActionResyncResponse}
	StatusUpdateRequest  = EventType{ManifestBundleDataType, SubResourceStatus, ActionUpdateRequest}
	StatusResyncRequest  = EventType{ManifestBundleDataType, SubResourceStatus, ActionResyncRequest}
	StatusResyncResponse = EventType{ManifestBundleDataType, SubResourceStatus, ActionResyncResponse}
)

var knownTypes = []EventType{
	SpecCreateRequest, SpecUpdateRequest, SpecDeleteRequest, SpecResyncRequest, SpecResyncResponse,
	StatusUpdateRequest, StatusResyncRequest, StatusResyncResponse,
}

// String returns the CloudEvents type, e.g.
// io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request.
func (t EventType) String() string {
	return t.DataType + "." + string(t.SubResource) + "." + string(t.Action)
}

// ParseEventType parses a CloudEvents type and accepts only the eight types this protocol defines.
func ParseEventType(s string) (EventType, error) {
	rest, ok := strings.CutPrefix(s, ManifestBundleDataType+".")
	if !ok {
		return EventType{}, fmt.Errorf("unknown event type %q: the data type must be %s", s, ManifestBundleDataType)
	}
	sub, action, _ := strings.Cut(rest, ".")
	t := EventType{DataType: ManifestBundleDataType, SubResource: SubResource(sub), Action: Action(action)}
	for _, known := range knownTypes {
		if t == known {
			return t, nil
		}
	}
	return EventType{}, fmt.Errorf("unknown event type %q: %q is not one of spec.create_request, spec.update_request, "+
		"spec.delete_request, spec.resync_request, spec.resync_response, status.update_request, "+
		"status.resync_request, status.resync_response", s, rest)
}

// The CloudEvents extensions of DESIGN.md section 4, named as OCM names them.
const (
	// ExtensionClusterName is the consumer the bundle is placed on.
	ExtensionClusterName = "clustername"
	// ExtensionResourceID is the bundle's UID.
	ExtensionResourceID = "resourceid"
	// ExtensionResourceVersion is the bundle's generation, a CloudEvents Integer.
	ExtensionResourceVersion = "resourceversion"
	// ExtensionDeletionTimestamp is set when the bundle is being deleted, a CloudEvents Timestamp.
	ExtensionDeletionTimestamp = "deletiontimestamp"
	// ExtensionOriginalSource is the source that created the bundle, echoed back by the agent.
	ExtensionOriginalSource = "originalsource"
	// ExtensionSequenceID orders the status events of one agent (a decimal snowflake ID in OCM).
	ExtensionSequenceID = "sequenceid"
	// ExtensionStatusHash is the hash of the status the agent reported, compared on status resync.
	ExtensionStatusHash = "statushash"
	// ExtensionMetadata is the bundle's metav1.ObjectMeta encoded as a JSON string.
	ExtensionMetadata = "metadata"
)
