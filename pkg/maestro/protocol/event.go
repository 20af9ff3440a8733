package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Event is a CloudEvent of this protocol, with typed access to its extensions and payload. Events returned
// by FromMQTT are valid (see Validate), and ToMQTT refuses invalid ones; the accessors return the zero value
// for an extension that is absent.
type Event struct {
	event.Event
	// decoded is the payload FromMQTT decoded when it validated the event, which DecodePayload returns
	// while the event carries the same data: the data of an event received is decoded once, not again by
	// the reader. Copies of the event share it.
	decoded *decodedPayload
	// madeFrom is the payload an event made here was encoded from, which Validate checks while the event
	// carries the same data, instead of decoding what was just encoded on the event's way out.
	madeFrom *decodedPayload
}

type decodedPayload struct {
	data    []byte
	payload any
}

// BundleRef identifies the bundle an event is about.
type BundleRef struct {
	// ClusterName is the consumer the bundle is placed on.
	ClusterName string
	// ResourceID is the bundle's UID.
	ResourceID string
	// ResourceVersion is the bundle's generation.
	ResourceVersion int64
}

// NewSpecEvent returns a spec event of action create_request, update_request, delete_request or
// resync_response about one bundle. bundle may be nil only for a deletion, which must also carry
// SetDeletionTimestamp, as OCM sends it.
func NewSpecEvent(source string, action Action, ref BundleRef, bundle *ManifestBundle) (Event, error) {
	switch action {
	case ActionCreateRequest, ActionUpdateRequest, ActionDeleteRequest, ActionResyncResponse:
	default:
		return Event{}, fmt.Errorf("a spec event about a bundle cannot have action %q", action)
	}
	var data any // a nil *ManifestBundle in an interface is not nil
	if bundle != nil {
		data = bundle
	}
	return newBundleEvent(source, EventType{ManifestBundleDataType, SubResourceSpec, action}, ref, data)
}

// NewStatusEvent returns a status event of action update_request or resync_response, sent by the agent of
// ref.ClusterName. The caller sets SequenceID, StatusHash and OriginalSource.
func NewStatusEvent(source string, action Action, ref BundleRef, status *ManifestBundleStatus) (Event, error) {
	switch action {
	case ActionUpdateRequest, ActionResyncResponse:
	default:
		return Event{}, fmt.Errorf("a status event cannot have action %q", action)
	}
	if status == nil {
		return Event{}, errors.New("a status event needs a ManifestBundleStatus")
	}
	return newBundleEvent(source, EventType{ManifestBundleDataType, SubResourceStatus, action}, ref, status)
}

// NewSpecResyncRequest returns the event an agent sends on every (re)connect: the bundles it holds and
// their generations.
func NewSpecResyncRequest(source, clusterName string, versions []ResourceVersion) (Event, error) {
	if versions == nil {
		versions = []ResourceVersion{}
	}
	return newEvent(source, SpecResyncRequest, clusterName, &ResourceVersionList{Versions: versions})
}

// NewStatusResyncRequest returns the event a source sends to ask an agent for the statuses whose hash
// differs from hashes; no hashes asks for every status.
func NewStatusResyncRequest(source, clusterName string, hashes []ResourceStatusHash) (Event, error) {
	if hashes == nil {
		hashes = []ResourceStatusHash{}
	}
	return newEvent(source, StatusResyncRequest, clusterName, &ResourceStatusHashList{Hashes: hashes})
}

func newBundleEvent(source string, t EventType, ref BundleRef, data any) (Event, error) {
	if ref.ResourceID == "" {
		return Event{}, fmt.Errorf("%s needs a resource ID", t)
	}
	e, err := newEvent(source, t, ref.ClusterName, data)
	if err != nil {
		return Event{}, err
	}
	e.SetExtension(ExtensionResourceID, ref.ResourceID)
	if err := e.SetResourceVersion(ref.ResourceVersion); err != nil {
		return Event{}, err
	}
	return e, nil
}

// newEvent sets what OCM's event builder sets: a fresh ID, the time, and the clustername and
// originalsource extensions even when empty (OCM's decoders read them unconditionally).
func newEvent(source string, t EventType, clusterName string, data any) (Event, error) {
	e := Event{Event: event.New()}
	e.SetID(uuid.NewString())
	e.SetSource(source)
	e.SetType(t.String())
	e.SetTime(time.Now())
	e.SetExtension(ExtensionClusterName, clusterName)
	e.SetExtension(ExtensionOriginalSource, "")
	if data != nil {
		raw, err := json.Marshal(data)
		if err != nil {
			return Event{}, fmt.Errorf("encoding the data of %s: %w", t, err)
		}
		if err := e.SetData(event.ApplicationJSON, raw); err != nil {
			return Event{}, err
		}
		e.madeFrom = &decodedPayload{data: e.Data(), payload: data}
	}
	return e, nil
}

// EventType returns the parsed type; the zero EventType if the type is not one of this protocol's.
func (e Event) EventType() EventType {
	t, _ := ParseEventType(e.Type())
	return t
}

// The string extensions, "" when absent.

func (e Event) ClusterName() string    { return e.stringExtension(ExtensionClusterName) }
func (e Event) ResourceID() string     { return e.stringExtension(ExtensionResourceID) }
func (e Event) OriginalSource() string { return e.stringExtension(ExtensionOriginalSource) }
func (e Event) SequenceID() string     { return e.stringExtension(ExtensionSequenceID) }
func (e Event) StatusHash() string     { return e.stringExtension(ExtensionStatusHash) }

// ResourceVersion returns the bundle's generation, 0 if absent.
func (e Event) ResourceVersion() int64 {
	v, _, _ := e.resourceVersion()
	return v
}

// DeletionTimestamp returns when the bundle was deleted; the zero time if it is not being deleted.
func (e Event) DeletionTimestamp() time.Time {
	t, _, _ := e.deletionTimestamp()
	return t
}

// Metadata returns the bundle's object metadata carried in the metadata extension; the zero ObjectMeta if
// the extension is absent.
func (e Event) Metadata() (metav1.ObjectMeta, error) {
	var meta metav1.ObjectMeta
	raw, ok, err := e.extensionString(ExtensionMetadata)
	if err != nil || !ok {
		return meta, err
	}
	if err := json.Unmarshal([]byte(raw), &meta); err != nil {
		return meta, fmt.Errorf("extension %s is not a JSON ObjectMeta: %w", ExtensionMetadata, err)
	}
	return meta, nil
}

// SetResourceVersion sets the generation. CloudEvents integers are 32-bit, as OCM sends them.
func (e *Event) SetResourceVersion(generation int64) error {
	if generation < 0 || generation > math.MaxInt32 {
		return fmt.Errorf("resource version %d does not fit the %s extension (a CloudEvents Integer, 0 to %d)",
			generation, ExtensionResourceVersion, math.MaxInt32)
	}
	e.SetExtension(ExtensionResourceVersion, int32(generation))
	return nil
}

func (e *Event) SetDeletionTimestamp(t time.Time) {
	e.SetExtension(ExtensionDeletionTimestamp, types.Timestamp{Time: t.UTC()})
}

func (e *Event) SetOriginalSource(source string) { e.SetExtension(ExtensionOriginalSource, source) }
func (e *Event) SetSequenceID(id string)         { e.SetExtension(ExtensionSequenceID, id) }
func (e *Event) SetStatusHash(hash string)       { e.SetExtension(ExtensionStatusHash, hash) }

// SetMetadata sets the metadata extension to meta encoded as JSON, as OCM's codecs do.
func (e *Event) SetMetadata(meta metav1.ObjectMeta) error {
	raw, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encoding the %s extension: %w", ExtensionMetadata, err)
	}
	e.SetExtension(ExtensionMetadata, string(raw))
	return nil
}

func (e Event) stringExtension(name string) string {
	s, _, _ := e.extensionString(name)
	return s
}

func (e Event) extensionString(name string) (string, bool, error) {
	v, ok := e.Extensions()[name]
	if !ok {
		return "", false, nil
	}
	s, err := types.ToString(v)
	if err != nil {
		return "", true, fmt.Errorf("extension %s must be a string, got %v", name, v)
	}
	return s, true, nil
}

// resourceVersion reads the extension as a JSON number (structured mode) or decimal string (binary mode).
func (e Event) resourceVersion() (int64, bool, error) {
	v, ok := e.Extensions()[ExtensionResourceVersion]
	if !ok {
		return 0, false, nil
	}
	var n int64
	switch v := v.(type) {
	case int32:
		n = int64(v)
	case string:
		var err error
		if n, err = strconv.ParseInt(v, 10, 32); err != nil {
			return 0, true, fmt.Errorf("extension %s is %q, not a CloudEvents Integer", ExtensionResourceVersion, v)
		}
	default:
		return 0, true, fmt.Errorf("extension %s is %v, not a CloudEvents Integer", ExtensionResourceVersion, v)
	}
	if n < 0 {
		return 0, true, fmt.Errorf("extension %s is %d, a generation cannot be negative", ExtensionResourceVersion, n)
	}
	return n, true, nil
}

func (e Event) deletionTimestamp() (time.Time, bool, error) {
	v, ok := e.Extensions()[ExtensionDeletionTimestamp]
	if !ok {
		return time.Time{}, false, nil
	}
	t, err := types.ToTime(v)
	if err != nil {
		return time.Time{}, true, fmt.Errorf("extension %s is %v, not an RFC 3339 timestamp", ExtensionDeletionTimestamp, v)
	}
	return t, true, nil
}
