package protocol

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/format"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/eclipse/paho.golang/paho"
)

// The CloudEvents MQTT binding on paho.golang, as cloudevents/sdk-go's protocol/mqtt_paho/v2 does it: in
// binary mode, datacontenttype is the MQTT Content Type and every other attribute and extension is a user
// property prefixed "ce-"; in structured mode the Content Type is the event format's media type.

const userPropertyPrefix = "ce-"

var prefixedSpecs = spec.WithPrefix(userPropertyPrefix)

// mqttMessage reads a received PUBLISH as a binding.MessageReader, so binding.ToEvent builds the event.
type mqttMessage struct {
	payload []byte
	props   *paho.PublishProperties
	version spec.Version  // set in binary mode
	format  format.Format // set in structured mode
}

var (
	_ binding.MessageReader         = (*mqttMessage)(nil)
	_ binding.MessageMetadataReader = (*mqttMessage)(nil) // binding.ToEvent needs it in binary mode
)

func (m *mqttMessage) ReadEncoding() binding.Encoding {
	switch {
	case m.version != nil:
		return binding.EncodingBinary
	case m.format != nil:
		return binding.EncodingStructured
	}
	return binding.EncodingUnknown
}

func (m *mqttMessage) ReadStructured(ctx context.Context, w binding.StructuredWriter) error {
	if m.format == nil {
		return binding.ErrNotStructured
	}
	return w.SetStructuredEvent(ctx, m.format, bytes.NewReader(m.payload))
}

func (m *mqttMessage) ReadBinary(_ context.Context, w binding.BinaryWriter) error {
	if m.version == nil {
		return binding.ErrNotBinary
	}
	if ct := m.props.ContentType; ct != "" {
		if err := w.SetAttribute(m.version.AttributeFromKind(spec.DataContentType), ct); err != nil {
			return err
		}
	}
	for _, p := range m.props.User {
		if !strings.HasPrefix(p.Key, userPropertyPrefix) {
			continue // not ours: MQTT user properties are open to anyone
		}
		var err error
		if attr := m.version.Attribute(p.Key); attr != nil {
			err = w.SetAttribute(attr, p.Value)
		} else {
			err = w.SetExtension(strings.TrimPrefix(p.Key, userPropertyPrefix), p.Value)
		}
		if err != nil {
			return err
		}
	}
	if len(m.payload) > 0 {
		return w.SetData(bytes.NewReader(m.payload))
	}
	return nil
}

func (m *mqttMessage) GetAttribute(k spec.Kind) (spec.Attribute, any) {
	if m.version == nil {
		return nil, nil
	}
	attr := m.version.AttributeFromKind(k)
	if attr == nil {
		return nil, nil
	}
	if k == spec.DataContentType {
		return attr, m.props.ContentType
	}
	return attr, m.props.User.Get(userPropertyPrefix + attr.Name())
}

func (m *mqttMessage) GetExtension(name string) any {
	return m.props.User.Get(userPropertyPrefix + name)
}

// publishWriter writes an event in binary mode into a PUBLISH's payload and properties. Attributes come
// first in the spec's order, then extensions sorted by name, so the same event always looks the same on
// the wire.
type publishWriter struct {
	payload    []byte
	props      paho.PublishProperties
	extensions paho.UserProperties
}

var _ binding.BinaryWriter = (*publishWriter)(nil)

func (w *publishWriter) Start(context.Context) error { return nil }

func (w *publishWriter) SetAttribute(attr spec.Attribute, value any) error {
	s, err := types.Format(value)
	if err != nil {
		return err
	}
	if attr.Kind() == spec.DataContentType {
		w.props.ContentType = s
		return nil
	}
	w.props.User.Add(userPropertyPrefix+attr.Name(), s)
	return nil
}

func (w *publishWriter) SetExtension(name string, value any) error {
	s, err := types.Format(value)
	if err != nil {
		return err
	}
	w.extensions.Add(userPropertyPrefix+name, s)
	return nil
}

func (w *publishWriter) SetData(data io.Reader) error {
	payload, err := io.ReadAll(data)
	w.payload = payload
	return err
}

func (w *publishWriter) End(context.Context) error {
	sort.Slice(w.extensions, func(i, j int) bool { return w.extensions[i].Key < w.extensions[j].Key })
	w.props.User = append(w.props.User, w.extensions...)
	return nil
}
