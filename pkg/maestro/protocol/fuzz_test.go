package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/eclipse/paho.golang/paho"

	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// The fuzz targets below take what a peer controls: every MQTT user property, the Content Type and the
// payload of a PUBLISH, and the data of each event type. go test runs their seeds; go test -fuzz explores
// further. Their seeds include Maestro's own events (shared/maestro/examples) when that folder is there.

// FuzzFromMQTTProperties decodes PUBLISH packets whose user properties are all the fuzzer's: props holds
// one "key=value" property a line. Whatever decodes must be a valid event with a payload of its type,
// must re-encode, decode to the same event, and look the same on the wire each time it is encoded.
func FuzzFromMQTTProperties(f *testing.F) {
	for _, raw := range sharedExampleEvents(f) {
		f.Add(raw, event.ApplicationCloudEventsJSON, "")
		e, err := FromMQTT(raw, &paho.PublishProperties{ContentType: event.ApplicationCloudEventsJSON})
		if err != nil {
			f.Fatal(err)
		}
		payload, props, err := ToMQTT(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(payload, props.ContentType, propertyLines(props.User))
	}
	for _, build := range []func() (Event, error){
		func() (Event, error) { return NewSpecEvent("hcp", ActionCreateRequest, testRef, testBundle) },
		func() (Event, error) {
			e, err := NewStatusEvent("mc-1", ActionUpdateRequest, testRef, testStatus)
			e.SetSequenceID("7")
			return e, err
		},
		func() (Event, error) { return NewSpecResyncRequest("mc-1", "mc-1", []ResourceVersion{{"r", 1}}) },
		func() (Event, error) { return NewStatusResyncRequest("hcp", "mc-1", nil) },
	} {
		e, err := build()
		if err != nil {
			f.Fatal(err)
		}
		payload, props, err := ToMQTT(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(payload, props.ContentType, propertyLines(props.User))
	}
	// Attributes in the wrong case, twice, empty, or with values of the wrong CloudEvents type.
	f.Add([]byte(`{"manifests":[]}`), "application/json",
		"ce-specversion=1.0\nCE-ID=1\nce-source=s\nce-type="+SpecCreateRequest.String()+"\nce-resourceid=r\nce-resourceversion=2147483648")
	f.Add([]byte{}, "", "ce-specversion=1.0\nce-id=\nce-time=not a time\nce-=x\nce-metadata={\"uid\":1}\nce-deletiontimestamp=0001-01-01T00:00:00Z")
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"`+SpecDeleteRequest.String()+
		`","resourceid":"r","resourceversion":1,"deletiontimestamp":"2026-01-02T03:04:05Z","data_base64":"e30="}`),
		event.ApplicationCloudEventsJSON, "")

	f.Fuzz(func(t *testing.T, payload []byte, contentType, props string) {
		in := &paho.PublishProperties{ContentType: contentType, User: parsePropertyLines(props)}
		for _, p := range in.User {
			if len(p.Key) > maxMQTTString || len(p.Value) > maxMQTTString {
				return // no MQTT v5 packet carries it
			}
		}
		e, err := FromMQTT(payload, in)
		if err != nil {
			if strings.Contains(err.Error(), "panicked") {
				t.Fatal(err)
			}
			return
		}
		checkDecoded(t, e)
	})
}

// checkDecoded checks what FromMQTT promises of an event it returns, and that it survives the wire.
func checkDecoded(t *testing.T, e Event) {
	t.Helper()
	if err := e.Validate(); err != nil {
		t.Fatalf("FromMQTT returned an event that does not validate: %v", err)
	}
	t.Logf("decoded %s %s", e.Type(), e.ID())
	var err error
	switch typ := e.EventType(); {
	case typ == SpecResyncRequest:
		_, err = e.ResourceVersions()
	case typ == StatusResyncRequest:
		_, err = e.StatusHashes()
	case typ.SubResource == SubResourceSpec:
		_, err = e.ManifestBundle()
	case typ.SubResource == SubResourceStatus:
		_, err = e.ManifestBundleStatus()
	default:
		t.Fatalf("FromMQTT returned an event of an unknown type %q", e.Type())
	}
	if err != nil {
		t.Fatalf("the payload of a decoded %s does not decode: %v", e.Type(), err)
	}
	if _, err := e.Metadata(); err != nil {
		t.Fatalf("the metadata of a decoded event does not decode: %v", err)
	}
	_, _, _, _, _, _, _ = e.ClusterName(), e.ResourceID(), e.OriginalSource(), e.SequenceID(), e.StatusHash(),
		e.ResourceVersion(), e.DeletionTimestamp()

	payload, props, err := ToMQTT(e)
	if err != nil {
		if errors.Is(err, ErrEventTooLarge) || strings.Contains(err.Error(), "over MQTT's") {
			return // structured mode carries what binary mode cannot: the limits are the wire's
		}
		t.Fatalf("a decoded event does not re-encode: %v", err)
	}
	again, err := FromMQTT(payload, props)
	if err != nil {
		t.Fatalf("a re-encoded event does not decode: %v\npayload %q\nproperties %v", err, payload, props)
	}
	assertSameEvent(t, e, again)
	payload2, props2, err := ToMQTT(again)
	if err != nil {
		t.Fatalf("the event does not re-encode a second time: %v", err)
	}
	if !bytes.Equal(payload, payload2) || !reflect.DeepEqual(props, props2) {
		t.Fatalf("the same event looks different on the wire:\n%q %v\n%q %v", payload, props, payload2, props2)
	}
}

// FuzzManifestBundle decodes the data of a spec event. A bundle that decodes and validates travels in a
// spec event and arrives as the same bundle; one that does not validate is refused by ToMQTT.
func FuzzManifestBundle(f *testing.F) {
	f.Add(mustMarshal(f, testBundle))
	for _, raw := range sharedExampleEvents(f) {
		if data := exampleData(f, raw); data != nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"manifests":[null, 1, " {}"],"deleteOption":{"propagationPolicy":"SelectivelyOrphan",` +
		`"selectivelyOrphans":{"orphaningRules":[{}]},"ttlSecondsAfterFinished":-1}}`))
	f.Add([]byte(`{"manifests":[{"a":"<\u2028>"}],"manifestConfigs":[{"updateStrategy":{"serverSideApply":{"ignoreFields":[{"jsonPaths":null}]}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var bundle ManifestBundle
		if err := json.Unmarshal(data, &bundle); err != nil {
			return
		}
		invalid := bundle.Validate()
		e, err := NewSpecEvent("hcp", ActionUpdateRequest, testRef, &bundle)
		if err != nil {
			t.Fatalf("a decoded bundle does not make an event: %v", err)
		}
		payload, props, err := ToMQTT(e)
		switch {
		case invalid != nil && err == nil:
			t.Fatalf("ToMQTT sent a bundle that does not validate (%v)", invalid)
		case invalid != nil || errors.Is(err, ErrEventTooLarge):
			return
		case err != nil:
			t.Fatalf("a valid bundle does not encode: %v", err)
		}
		received, err := FromMQTT(payload, props)
		if err != nil {
			t.Fatalf("a valid bundle does not decode: %v", err)
		}
		got, err := received.ManifestBundle()
		if err != nil {
			t.Fatal(err)
		}
		if want, got := mustMarshal(t, &bundle), mustMarshal(t, got); !bytes.Equal(want, got) {
			t.Fatalf("the bundle changed on the wire:\nsent     %s\nreceived %s", want, got)
		}
	})
}

// FuzzManifestBundleStatus decodes the data of a status event, as the source does with what agents send.
// A status that decodes travels in a status event and arrives as the same status.
func FuzzManifestBundleStatus(f *testing.F) {
	f.Add(mustMarshal(f, testStatus))
	f.Add(mustMarshal(f, &ManifestBundleStatus{ManifestBundle: testBundle}))
	for _, raw := range sharedExampleEvents(f) {
		if data := exampleData(f, raw); data != nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"conditions":[{"type":"Applied","status":"True","lastTransitionTime":"2026-01-02T03:04:05+23:59"}],` +
		`"resourceStatus":[{"statusFeedback":{"values":[{"name":"n","fieldValue":{"type":"Integer","integer":-9223372036854775808,` +
		`"string":"","boolean":false,"jsonRaw":"{"}}]}}],"manifestBundle":{"manifests":[[]]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var status ManifestBundleStatus
		if err := json.Unmarshal(data, &status); err != nil {
			return
		}
		var invalid error
		if status.ManifestBundle != nil {
			invalid = status.ManifestBundle.Validate()
		}
		e, err := NewStatusEvent("mc-1", ActionUpdateRequest, testRef, &status)
		if err != nil {
			t.Fatalf("a decoded status does not make an event: %v", err)
		}
		e.SetSequenceID("1")
		payload, props, err := ToMQTT(e)
		switch {
		case invalid != nil && err == nil:
			t.Fatalf("ToMQTT sent a status whose bundle does not validate (%v)", invalid)
		case invalid != nil || errors.Is(err, ErrEventTooLarge):
			return
		case err != nil:
			t.Fatalf("a decoded status does not encode: %v", err)
		}
		received, err := FromMQTT(payload, props)
		if err != nil {
			t.Fatalf("a status that encodes does not decode: %v\n%s", err, payload)
		}
		got, err := received.ManifestBundleStatus()
		if err != nil {
			t.Fatal(err)
		}
		if want, got := mustMarshal(t, &status), mustMarshal(t, got); !bytes.Equal(want, got) {
			t.Fatalf("the status changed on the wire:\nsent     %s\nreceived %s", want, got)
		}
	})
}

// FuzzParseTopic parses topic names as the source and agent do with every received event: what parses
// is built back by the topic functions into the same name.
func FuzzParseTopic(f *testing.F) {
	f.Add("sources/hcp/consumers/mc-1/agentevents")
	f.Add("sources/hcp/consumers/mc-1/sourceevents")
	f.Add("$share/g/sources/hcp/consumers/+/agentevents")
	f.Add("sources//consumers/MC/agentevents/")
	f.Fuzz(func(t *testing.T, topic string) {
		source, consumer, kind, err := ParseTopic(topic)
		if err != nil {
			return
		}
		build := SourceEventsTopic
		if kind == AgentEvents {
			build = AgentEventsTopic
		}
		again, err := build(source, consumer)
		if err != nil || again != topic {
			t.Fatalf("ParseTopic(%q) = %q, %q, %q, but the topic built from them is %q, %v", topic, source, consumer, kind, again, err)
		}
	})
}

// sharedExampleEvents returns Maestro's example events in structured mode, as readExample reads them; none
// when shared/maestro/examples is not there (TestExamples says where it is looked for).
func sharedExampleEvents(f *testing.F) [][]byte {
	f.Helper()
	shared := os.Getenv("HCP_SHARED_DIR")
	if shared == "" {
		root, err := paths.RepoRoot()
		if err != nil {
			f.Fatal(err)
		}
		shared = filepath.Join(filepath.Dir(root), "shared")
	}
	var events [][]byte
	for name := range exampleEvents {
		raw, err := os.ReadFile(filepath.Join(shared, "maestro", "examples", name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			f.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		delete(fields, "_note") // see readExample
		events = append(events, mustMarshal(f, fields))
	}
	return events
}

// exampleData returns the data of a structured-mode event, nil if it has none.
func exampleData(f *testing.F, raw []byte) []byte {
	f.Helper()
	var e struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		f.Fatal(err)
	}
	return e.Data
}

// propertyLines writes user properties one "key=value" a line, as FuzzFromMQTTProperties reads them.
func propertyLines(props paho.UserProperties) string {
	lines := make([]string, 0, len(props))
	for _, p := range props {
		lines = append(lines, p.Key+"="+p.Value)
	}
	return strings.Join(lines, "\n")
}

func parsePropertyLines(s string) paho.UserProperties {
	if s == "" {
		return nil
	}
	var props paho.UserProperties
	for _, line := range strings.Split(s, "\n") {
		key, value, _ := strings.Cut(line, "=")
		props = append(props, paho.UserProperty{Key: key, Value: value})
	}
	return props
}
