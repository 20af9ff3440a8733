package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// Validate checks what a receiver relies on: a valid CloudEvents 1.0 event of one of the eight types,
// extensions of the right CloudEvents types, the extensions its type needs, and data that decodes into its
// type's payload. ToMQTT and FromMQTT call it, so bad events fail where they are made or received.
func (e Event) Validate() error {
	_, err := e.validate(true)
	return err
}

// validate is Validate, returning the payload it decoded. madeFrom allows the payload the event was
// made from in place of its decoded data (encoding/json decodes what it encoded); a reader wants the
// decoded payload, which is its own.
func (e Event) validate(madeFrom bool) (any, error) {
	if err := e.Event.Validate(); err != nil {
		// sdk-go lists one "attribute: problem" per line.
		return nil, fmt.Errorf("not a valid CloudEvent: %s", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; "))
	}
	if sv := e.SpecVersion(); sv != event.CloudEventsVersionV1 {
		return nil, fmt.Errorf("specversion is %q, want %q", sv, event.CloudEventsVersionV1)
	}
	t, err := ParseEventType(e.Type())
	if err != nil {
		return nil, err
	}
	for _, name := range []string{ExtensionClusterName, ExtensionResourceID, ExtensionOriginalSource,
		ExtensionSequenceID, ExtensionStatusHash} {
		if _, _, err := e.extensionString(name); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
	}
	if _, err := e.Metadata(); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	_, hasVersion, err := e.resourceVersion()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	_, deleting, err := e.deletionTimestamp()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}

	if t.Action != ActionResyncRequest {
		if e.ResourceID() == "" {
			return nil, fmt.Errorf("%s has no %s extension", t, ExtensionResourceID)
		}
		if !hasVersion {
			return nil, fmt.Errorf("%s has no %s extension", t, ExtensionResourceVersion)
		}
	}
	if t.SubResource == SubResourceStatus && t.Action != ActionResyncRequest && e.SequenceID() == "" {
		// The source drops stale status events by sequence id; OCM's source codec refuses events without one.
		return nil, fmt.Errorf("%s has no %s extension", t, ExtensionSequenceID)
	}
	if t == SpecDeleteRequest && !deleting {
		return nil, fmt.Errorf("%s has no %s extension", t, ExtensionDeletionTimestamp)
	}
	if len(e.Data()) == 0 && !(t.SubResource == SubResourceSpec && deleting) {
		return nil, fmt.Errorf("%s has no data: only a spec event with %s may omit it", t, ExtensionDeletionTimestamp)
	}
	return e.decodePayload(madeFrom)
}

// DecodePayload decodes the data into the payload of the event's type: *ManifestBundle for spec events
// about a bundle (empty for a deletion without data), *ManifestBundleStatus for status events about a
// bundle, *ResourceVersionList for spec.resync_request and *ResourceStatusHashList for
// status.resync_request.
func (e Event) DecodePayload() (any, error) {
	return e.decodePayload(false)
}

func (e Event) decodePayload(madeFrom bool) (any, error) {
	t, err := ParseEventType(e.Type())
	if err != nil {
		return nil, err
	}
	if mt := e.DataMediaType(); mt != "" && mt != event.ApplicationJSON {
		return nil, fmt.Errorf("%s has datacontenttype %q, want %q", t, mt, event.ApplicationJSON)
	}
	var payload any
	switch {
	case t == SpecResyncRequest:
		payload = &ResourceVersionList{}
	case t == StatusResyncRequest:
		payload = &ResourceStatusHashList{}
	case t.SubResource == SubResourceSpec:
		payload = &ManifestBundle{}
	default:
		payload = &ManifestBundleStatus{}
	}
	data := e.Data()
	if len(data) == 0 {
		return payload, nil
	}
	if d := e.decoded; d != nil && bytes.Equal(d.data, data) {
		return d.payload, nil
	}
	if d := e.madeFrom; madeFrom && d != nil && bytes.Equal(d.data, data) && reflect.TypeOf(d.payload) == reflect.TypeOf(payload) {
		payload = d.payload
	} else if err := json.Unmarshal(data, payload); err != nil {
		return nil, fmt.Errorf("data of %s is not a JSON %T: %w", t, payload, err)
	}
	switch p := payload.(type) {
	case *ManifestBundle:
		err = p.Validate()
	case *ManifestBundleStatus:
		if p.ManifestBundle != nil {
			err = p.ManifestBundle.Validate()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("data of %s: %w", t, err)
	}
	return payload, nil
}

// ManifestBundle returns the bundle of a spec event about a bundle.
func (e Event) ManifestBundle() (*ManifestBundle, error) { return payloadAs[*ManifestBundle](e) }

// ManifestBundleStatus returns the status of a status event about a bundle.
func (e Event) ManifestBundleStatus() (*ManifestBundleStatus, error) {
	return payloadAs[*ManifestBundleStatus](e)
}

// ResourceVersions returns the payload of a spec.resync_request.
func (e Event) ResourceVersions() (*ResourceVersionList, error) {
	return payloadAs[*ResourceVersionList](e)
}

// StatusHashes returns the payload of a status.resync_request.
func (e Event) StatusHashes() (*ResourceStatusHashList, error) {
	return payloadAs[*ResourceStatusHashList](e)
}

func payloadAs[P any](e Event) (P, error) {
	var zero P
	payload, err := e.DecodePayload()
	if err != nil {
		return zero, err
	}
	p, ok := payload.(P)
	if !ok {
		return zero, fmt.Errorf("%s carries a %T, not a %T", e.Type(), payload, zero)
	}
	return p, nil
}

// normalize gives the typed extensions the CloudEvents types OCM sets them with, whichever content mode
// they arrived in (binary mode carries every value as a string), so that an event decodes to the same
// thing from either mode. Validate must have passed.
func (e *Event) normalize() {
	if v, ok, _ := e.resourceVersion(); ok {
		e.SetExtension(ExtensionResourceVersion, int32(v))
	}
	if t, ok, _ := e.deletionTimestamp(); ok {
		e.SetExtension(ExtensionDeletionTimestamp, types.Timestamp{Time: t})
	}
}
