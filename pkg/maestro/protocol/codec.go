package protocol

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/format"
	"github.com/eclipse/paho.golang/paho"
)

// MaxEventBytes bounds an event on the wire: payload, content type and user properties together. DESIGN.md
// keeps events well under 512 KB; a bigger one is refused on both ends before any parsing.
const MaxEventBytes = 512 * 1024

// maxMQTTString is the longest MQTT v5 UTF-8 string, which bounds each user property key and value.
const maxMQTTString = 65535

// ErrEventTooLarge is wrapped by the errors of ToMQTT and FromMQTT for an event over MaxEventBytes.
var ErrEventTooLarge = errors.New("event too large")

// ToMQTT validates e and encodes it in CloudEvents binary content mode: the payload is the event's data,
// and the properties carry datacontenttype as the Content Type and every other attribute and extension as
// a "ce-<name>" user property. Publish both with QoS.
func ToMQTT(e Event) ([]byte, *paho.PublishProperties, error) {
	if err := e.Validate(); err != nil {
		return nil, nil, fmt.Errorf("cannot encode event %q: %w", e.ID(), err)
	}
	w := &publishWriter{}
	ctx := binding.WithForceBinary(context.Background())
	if _, err := binding.Write(ctx, binding.ToMessage(&e.Event), nil, w); err != nil {
		return nil, nil, fmt.Errorf("cannot encode event %q: %w", e.ID(), err)
	}
	if err := checkSize(w.payload, &w.props); err != nil {
		return nil, nil, fmt.Errorf("cannot encode event %q: %w", e.ID(), err)
	}
	for _, p := range w.props.User {
		if len(p.Value) > maxMQTTString {
			return nil, nil, fmt.Errorf("cannot encode event %q: user property %s is %d bytes, over MQTT's %d-byte limit for a string",
				e.ID(), p.Key, len(p.Value), maxMQTTString)
		}
	}
	return w.payload, &w.props, nil
}

// FromMQTT decodes a received PUBLISH. Binary mode is recognised by the ce-specversion user property,
// structured mode by the Content Type application/cloudevents+json; the event must then pass Validate.
// Extensions read from binary mode (all strings on the wire) get the CloudEvents types OCM gives them,
// so the same event decodes to the same Event from either mode.
func FromMQTT(payload []byte, props *paho.PublishProperties) (e Event, err error) {
	// Whatever a peer sends must not take the process down; a panic here is a bug to fix, reported as an error.
	defer func() {
		if r := recover(); r != nil {
			e, err = Event{}, fmt.Errorf("decoding an MQTT message panicked (a bug in the codec): %v", r)
		}
	}()
	if props == nil {
		props = &paho.PublishProperties{}
	}
	if err := checkSize(payload, props); err != nil {
		return Event{}, err
	}
	msg := &mqttMessage{payload: payload, props: props}
	if err := msg.detectMode(); err != nil {
		return Event{}, err
	}
	decoded, err := binding.ToEvent(context.Background(), msg)
	if err != nil {
		return Event{}, fmt.Errorf("malformed %s-mode CloudEvent: %w", msg.modeName(), err)
	}
	e = Event{Event: *decoded}
	content, err := e.validate(false)
	if err != nil {
		return Event{}, fmt.Errorf("invalid event %q: %w", e.ID(), err)
	}
	e.normalize()
	e.decoded = &decodedPayload{data: e.Data(), payload: content}
	return e, nil
}

// detectMode sets the message's version (binary mode) or format (structured mode), as the upstream binding
// does: binary wins when both are present.
func (m *mqttMessage) detectMode() error {
	seen := map[string]bool{}
	for _, p := range m.props.User {
		key := strings.ToLower(p.Key)
		if !strings.HasPrefix(key, userPropertyPrefix) {
			continue
		}
		if seen[key] {
			return fmt.Errorf("user property %s appears twice", p.Key)
		}
		seen[key] = true
	}
	if sv := m.props.User.Get(prefixedSpecs.PrefixedSpecVersionName()); sv != "" {
		if m.version = prefixedSpecs.Version(sv); m.version == nil {
			return fmt.Errorf("user property %s is %q, not a CloudEvents version", prefixedSpecs.PrefixedSpecVersionName(), sv)
		}
		return nil
	}
	ct := m.props.ContentType
	if f := format.Lookup(ct); f == format.JSON {
		m.format = f
		return nil
	}
	if format.IsFormat(ct) {
		return fmt.Errorf("content type %q is not supported: only single events (%s) are", ct, format.JSON.MediaType())
	}
	return fmt.Errorf("not a CloudEvent: no %s user property (binary mode) and content type %q is not %s (structured mode)",
		prefixedSpecs.PrefixedSpecVersionName(), ct, format.JSON.MediaType())
}

func (m *mqttMessage) modeName() string {
	if m.version != nil {
		return "binary"
	}
	return "structured"
}

func checkSize(payload []byte, props *paho.PublishProperties) error {
	n := len(payload) + len(props.ContentType)
	for _, p := range props.User {
		n += len(p.Key) + len(p.Value)
	}
	if n > MaxEventBytes {
		return fmt.Errorf("%w: %d bytes of payload and properties, the limit is %d (MaxEventBytes)", ErrEventTooLarge, n, MaxEventBytes)
	}
	return nil
}
