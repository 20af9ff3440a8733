package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/eclipse/paho.golang/paho"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	testRef    = BundleRef{ClusterName: "mc-1", ResourceID: "55c61e54-a3f6-563d-9fec-b1fe297bdfdb", ResourceVersion: 3}
	testBundle = &ManifestBundle{
		Manifests:    []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"hc-1"}}`)},
		DeleteOption: &DeleteOption{PropagationPolicy: DeletePropagationForeground},
		ManifestConfigs: []ManifestConfigOption{{
			ResourceIdentifier: ResourceIdentifier{Resource: "namespaces", Name: "hc-1"},
			FeedbackRules:      []FeedbackRule{{Type: FeedbackJSONPaths, JSONPaths: []JSONPath{{Name: "phase", Path: ".status.phase"}}}},
			UpdateStrategy: &UpdateStrategy{Type: UpdateStrategyServerSideApply,
				ServerSideApply: &ServerSideApplyConfig{Force: true, FieldManager: "work-agent"}},
		}},
	}
	phase      = "Active"
	testStatus = &ManifestBundleStatus{
		Conditions: []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue, ObservedGeneration: 3,
			LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), Reason: "Applied", Message: ""}},
		ResourceStatus: []ManifestCondition{{
			ResourceMeta:   ManifestResourceMeta{Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "hc-1"},
			StatusFeedback: StatusFeedbackResult{Values: []FeedbackValue{{Name: "phase", Value: FieldValue{Type: ValueString, String: &phase}}}},
			Conditions:     []metav1.Condition{},
		}},
	}
)

func TestConstructedEventsRoundTrip(t *testing.T) {
	deletedAt := time.Date(2026, 1, 2, 3, 4, 5, 678900000, time.UTC)
	for _, tc := range []struct {
		name        string
		build       func() (Event, error)
		wantType    EventType
		wantPayload any
	}{{
		name: "spec create_request",
		build: func() (Event, error) {
			e, err := NewSpecEvent("hcp-apiserver", ActionCreateRequest, testRef, testBundle)
			if err == nil {
				err = e.SetMetadata(metav1.ObjectMeta{Name: "hc-1", UID: types.UID(testRef.ResourceID), Generation: 3})
			}
			return e, err
		},
		wantType: SpecCreateRequest, wantPayload: testBundle,
	}, {
		name: "spec delete_request without data",
		build: func() (Event, error) {
			e, err := NewSpecEvent("hcp-apiserver", ActionDeleteRequest, testRef, nil)
			e.SetDeletionTimestamp(deletedAt)
			return e, err
		},
		wantType: SpecDeleteRequest, wantPayload: &ManifestBundle{},
	}, {
		name: "spec resync_response",
		build: func() (Event, error) {
			return NewSpecEvent("hcp-apiserver", ActionResyncResponse, testRef, testBundle)
		},
		wantType: SpecResyncResponse, wantPayload: testBundle,
	}, {
		name: "status update_request",
		build: func() (Event, error) {
			e, err := NewStatusEvent("mc-1-work-agent", ActionUpdateRequest, testRef, testStatus)
			e.SetSequenceID("2000808179721572352")
			e.SetStatusHash("6170884280acbd9d")
			e.SetOriginalSource("hcp-apiserver")
			return e, err
		},
		wantType: StatusUpdateRequest, wantPayload: testStatus,
	}, {
		name: "spec resync_request",
		build: func() (Event, error) {
			return NewSpecResyncRequest("mc-1-work-agent", "mc-1", []ResourceVersion{{ResourceID: testRef.ResourceID, ResourceVersion: 3}})
		},
		wantType:    SpecResyncRequest,
		wantPayload: &ResourceVersionList{Versions: []ResourceVersion{{ResourceID: testRef.ResourceID, ResourceVersion: 3}}},
	}, {
		name:        "status resync_request for every status",
		build:       func() (Event, error) { return NewStatusResyncRequest("hcp-apiserver", "mc-1", nil) },
		wantType:    StatusResyncRequest,
		wantPayload: &ResourceStatusHashList{Hashes: []ResourceStatusHash{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sent, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			payload, props, err := ToMQTT(sent)
			if err != nil {
				t.Fatalf("ToMQTT: %v", err)
			}
			got, err := FromMQTT(payload, props)
			if err != nil {
				t.Fatalf("FromMQTT: %v", err)
			}
			assertSameEvent(t, sent, got)
			if got.EventType() != tc.wantType {
				t.Errorf("type = %v, want %v", got.EventType(), tc.wantType)
			}
			// Compared as JSON: metav1.Time decodes into the local time zone.
			decoded, err := got.DecodePayload()
			if err != nil || reflect.TypeOf(decoded) != reflect.TypeOf(tc.wantPayload) ||
				!jsonEqual(t, mustMarshal(t, decoded), mustMarshal(t, tc.wantPayload)) {
				t.Errorf("payload = %+v, %v; want %+v", decoded, err, tc.wantPayload)
			}
			if tc.wantType.Action != ActionResyncRequest &&
				(got.ResourceID() != testRef.ResourceID || got.ResourceVersion() != testRef.ResourceVersion || got.ClusterName() != "mc-1") {
				t.Errorf("bundle = %s/%s@%d, want %+v", got.ClusterName(), got.ResourceID(), got.ResourceVersion(), testRef)
			}
		})
	}
}

// A received event's data is decoded once, when FromMQTT validates it; given other data, the event is
// decoded afresh.
func TestReceivedPayloadFollowsTheData(t *testing.T) {
	sent, err := NewStatusResyncRequest("hcp-apiserver", "mc-1", []ResourceStatusHash{{ResourceID: testRef.ResourceID, StatusHash: "one"}})
	if err != nil {
		t.Fatal(err)
	}
	payload, props, err := ToMQTT(sent)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromMQTT(payload, props)
	if err != nil {
		t.Fatal(err)
	}
	first, err := got.StatusHashes()
	if err != nil || len(first.Hashes) != 1 || first.Hashes[0].StatusHash != "one" {
		t.Fatalf("payload %+v, %v", first, err)
	}
	if again, _ := got.StatusHashes(); again != first {
		t.Error("the data of a received event was decoded again")
	}
	if err := got.SetData("application/json", []byte(`{"statusHashes":[{"resourceID":"`+testRef.ResourceID+`","statusHash":"two"}]}`)); err != nil {
		t.Fatal(err)
	}
	if changed, err := got.StatusHashes(); err != nil || len(changed.Hashes) != 1 || changed.Hashes[0].StatusHash != "two" {
		t.Fatalf("after new data the payload is %+v, %v", changed, err)
	}
}

func TestAccessors(t *testing.T) {
	deletedAt := time.Date(2026, 1, 2, 3, 4, 5, 678900000, time.FixedZone("CET", 3600))
	e, err := NewStatusEvent("mc-1-work-agent", ActionResyncResponse, testRef, testStatus)
	if err != nil {
		t.Fatal(err)
	}
	e.SetSequenceID("42")
	e.SetStatusHash("abc")
	e.SetOriginalSource("hcp-apiserver")
	e.SetDeletionTimestamp(deletedAt)
	if err := e.SetMetadata(metav1.ObjectMeta{Name: "hc-1", Labels: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	payload, props, err := ToMQTT(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromMQTT(payload, props)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := got.Metadata()
	if err != nil || meta.Name != "hc-1" || meta.Labels["a"] != "b" {
		t.Errorf("Metadata() = %+v, %v", meta, err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"SequenceID", got.SequenceID(), "42"},
		{"StatusHash", got.StatusHash(), "abc"},
		{"OriginalSource", got.OriginalSource(), "hcp-apiserver"},
		{"ce-deletiontimestamp", props.User.Get("ce-deletiontimestamp"), "2026-01-02T02:04:05.6789Z"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if !got.DeletionTimestamp().Equal(deletedAt) {
		t.Errorf("DeletionTimestamp() = %v, want %v", got.DeletionTimestamp(), deletedAt)
	}
	if _, err := got.ManifestBundle(); err == nil || !strings.Contains(err.Error(), "not a *protocol.ManifestBundle") {
		t.Errorf("ManifestBundle() of a status event: got %v", err)
	}
}

// TestBinaryWireLayout pins what a peer sees: attributes in sdk-go's order, then extensions by name,
// datacontenttype as the MQTT Content Type, the bundle JSON as the payload.
func TestBinaryWireLayout(t *testing.T) {
	e, err := NewSpecEvent("hcp-apiserver", ActionUpdateRequest, testRef, testBundle)
	if err != nil {
		t.Fatal(err)
	}
	e.SetID("0192bd68-8444-4743-b02b-4a6605ec0413")
	e.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	payload, props, err := ToMQTT(e)
	if err != nil {
		t.Fatal(err)
	}
	want := paho.UserProperties{
		{Key: "ce-id", Value: "0192bd68-8444-4743-b02b-4a6605ec0413"},
		{Key: "ce-source", Value: "hcp-apiserver"},
		{Key: "ce-specversion", Value: "1.0"},
		{Key: "ce-type", Value: "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.update_request"},
		{Key: "ce-time", Value: "2026-01-02T03:04:05Z"},
		{Key: "ce-clustername", Value: "mc-1"},
		{Key: "ce-originalsource", Value: ""},
		{Key: "ce-resourceid", Value: "55c61e54-a3f6-563d-9fec-b1fe297bdfdb"},
		{Key: "ce-resourceversion", Value: "3"},
	}
	if !reflect.DeepEqual(props.User, want) {
		t.Errorf("user properties:\n got %v\nwant %v", props.User, want)
	}
	if props.ContentType != "application/json" {
		t.Errorf("Content Type = %q", props.ContentType)
	}
	if string(payload) != string(mustMarshal(t, testBundle)) {
		t.Errorf("payload = %s", payload)
	}
}

func TestConstructorErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func() (Event, error)
		wantErr string
	}{
		{"spec event with a resync_request action", func() (Event, error) {
			return NewSpecEvent("s", ActionResyncRequest, testRef, testBundle)
		}, `cannot have action "resync_request"`},
		{"status event with a delete action", func() (Event, error) {
			return NewStatusEvent("s", ActionDeleteRequest, testRef, testStatus)
		}, `cannot have action "delete_request"`},
		{"status event without status", func() (Event, error) {
			return NewStatusEvent("s", ActionUpdateRequest, testRef, nil)
		}, "needs a ManifestBundleStatus"},
		{"no resource ID", func() (Event, error) {
			return NewSpecEvent("s", ActionCreateRequest, BundleRef{ClusterName: "mc-1", ResourceVersion: 1}, testBundle)
		}, "needs a resource ID"},
		{"generation over int32", func() (Event, error) {
			return NewSpecEvent("s", ActionCreateRequest, BundleRef{ResourceID: "x", ResourceVersion: 1 << 31}, testBundle)
		}, "resource version 2147483648 does not fit the resourceversion extension"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.build(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v; want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	huge := &ManifestBundle{Manifests: []json.RawMessage{
		json.RawMessage(`{"kind":"ConfigMap","data":{"x":"` + strings.Repeat("a", MaxEventBytes) + `"}}`)}}
	for _, tc := range []struct {
		name    string
		build   func() (Event, error)
		wantErr string
	}{
		{"delete without deletion timestamp", func() (Event, error) {
			return NewSpecEvent("s", ActionDeleteRequest, testRef, nil)
		}, "spec.delete_request has no deletiontimestamp extension"},
		{"update without bundle", func() (Event, error) {
			return NewSpecEvent("s", ActionUpdateRequest, testRef, nil)
		}, "spec.update_request has no data"},
		{"status without sequence id", func() (Event, error) {
			return NewStatusEvent("s", ActionUpdateRequest, testRef, testStatus)
		}, "status.update_request has no sequenceid extension"},
		{"manifest that is not an object", func() (Event, error) {
			return NewSpecEvent("s", ActionCreateRequest, testRef, &ManifestBundle{Manifests: []json.RawMessage{json.RawMessage(`[1]`)}})
		}, "manifests[0] is not a JSON object"},
		{"oversized bundle", func() (Event, error) {
			return NewSpecEvent("s", ActionCreateRequest, testRef, huge)
		}, "event too large"},
		{"metadata over MQTT's string limit", func() (Event, error) {
			e, err := NewSpecEvent("s", ActionCreateRequest, testRef, testBundle)
			if err == nil {
				err = e.SetMetadata(metav1.ObjectMeta{Annotations: map[string]string{"big": strings.Repeat("a", 70000)}})
			}
			return e, err
		}, "user property ce-metadata is 70"},
		{"empty source", func() (Event, error) {
			return NewSpecEvent("", ActionCreateRequest, testRef, testBundle)
		}, "source: REQUIRED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = ToMQTT(e)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ToMQTT error = %v; want one containing %q", err, tc.wantErr)
			}
		})
	}
	e, _ := NewSpecEvent("s", ActionCreateRequest, testRef, huge)
	if _, _, err := ToMQTT(e); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("oversized event: error %v is not ErrEventTooLarge", err)
	}
}

// wireMessage is a valid binary-mode spec.create_request as ToMQTT writes it, for tests to break.
func wireMessage(t *testing.T) ([]byte, *paho.PublishProperties) {
	t.Helper()
	e, err := NewSpecEvent("maestro", ActionCreateRequest, testRef, testBundle)
	if err != nil {
		t.Fatal(err)
	}
	payload, props, err := ToMQTT(e)
	if err != nil {
		t.Fatal(err)
	}
	return payload, props
}

func withProperty(props *paho.PublishProperties, key, value string) *paho.PublishProperties {
	out := *props
	out.User = nil
	set := false
	for _, p := range props.User {
		if p.Key == key {
			set = true
			if value == "" {
				continue // removed
			}
			p.Value = value
		}
		out.User = append(out.User, p)
	}
	if !set && value != "" {
		out.User.Add(key, value)
	}
	return &out
}

func TestDecodeErrors(t *testing.T) {
	payload, props := wireMessage(t)
	structured := func(s string) ([]byte, *paho.PublishProperties) {
		return []byte(s), &paho.PublishProperties{ContentType: event.ApplicationCloudEventsJSON}
	}
	statusType := StatusUpdateRequest.String()
	for _, tc := range []struct {
		name    string
		payload []byte
		props   *paho.PublishProperties
		wantErr string
	}{
		{"missing ce-specversion", payload, withProperty(props, "ce-specversion", ""),
			`no ce-specversion user property (binary mode) and content type "application/json" is not application/cloudevents+json`},
		{"no properties at all", payload, nil, "no ce-specversion user property"},
		{"unknown specversion", payload, withProperty(props, "ce-specversion", "2.0"),
			`user property ce-specversion is "2.0", not a CloudEvents version`},
		{"specversion 0.3", payload, withProperty(props, "ce-specversion", "0.3"), `specversion is "0.3", want "1.0"`},
		{"unknown event type", payload,
			withProperty(props, "ce-type", "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.watch_request"),
			`unknown event type "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.watch_request"`},
		{"missing id", payload, withProperty(props, "ce-id", ""), "id: MUST be a non-empty string"},
		{"non-JSON data", []byte("manifests: []"), props, "data of " + SpecCreateRequest.String() + " is not a JSON *protocol.ManifestBundle"},
		{"data of the wrong shape", []byte(`{"manifests":5}`), props, "cannot unmarshal number"},
		{"no data", nil, props, "spec.create_request has no data"},
		{"text data", payload, &paho.PublishProperties{ContentType: "text/plain", User: props.User},
			`datacontenttype "text/plain", want "application/json"`},
		{"oversized payload", make([]byte, MaxEventBytes+1), props, "event too large"},
		{"duplicate attribute", payload, &paho.PublishProperties{ContentType: props.ContentType,
			User: append(append(paho.UserProperties{}, props.User...), paho.UserProperty{Key: "ce-type", Value: statusType})},
			"user property ce-type appears twice"},
		{"resourceversion not a number", payload, withProperty(props, "ce-resourceversion", "abc"),
			`extension resourceversion is "abc", not a CloudEvents Integer`},
		{"negative resourceversion", payload, withProperty(props, "ce-resourceversion", "-1"), "cannot be negative"},
		{"missing resourceid", payload, withProperty(props, "ce-resourceid", ""), "spec.create_request has no resourceid extension"},
		{"bad deletiontimestamp", payload, withProperty(props, "ce-deletiontimestamp", "yesterday"),
			`extension deletiontimestamp is yesterday, not an RFC 3339 timestamp`},
		{"metadata not JSON", payload, withProperty(props, "ce-metadata", "name=x"), "extension metadata is not a JSON ObjectMeta"},
		{"status without sequenceid", []byte(`{"conditions":[]}`), withProperty(props, "ce-type", statusType),
			"status.update_request has no sequenceid extension"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromMQTT(tc.payload, tc.props)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("FromMQTT error = %v; want one containing %q", err, tc.wantErr)
			}
		})
	}

	for _, tc := range []struct {
		name, event, wantErr string
	}{
		{"not JSON", `specversion: 1.0`, "malformed structured-mode CloudEvent"},
		{"missing specversion", `{"id":"1","source":"s","type":"` + SpecCreateRequest.String() + `"}`, "specversion"},
		{"extension name with an underscore", `{"specversion":"1.0","_note":"x"}`, "CloudEvents attribute names MUST consist of"},
		{"object extension", `{"specversion":"1.0","id":"1","source":"s","type":"t","metadata":{"name":"x"}}`, "malformed structured-mode CloudEvent"},
	} {
		t.Run("structured "+tc.name, func(t *testing.T) {
			_, err := FromMQTT(structured(tc.event))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("FromMQTT error = %v; want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := FromMQTT([]byte("[]"), &paho.PublishProperties{ContentType: event.ApplicationCloudEventsBatchJSON}); err == nil ||
		!strings.Contains(err.Error(), "only single events") {
		t.Errorf("batch: got %v", err)
	}
}

// FuzzFromMQTT checks that no message decodes with a panic, and that whatever decodes re-encodes and
// decodes to the same event. go test runs the seeds; go test -fuzz=FuzzFromMQTT explores further.
func FuzzFromMQTT(f *testing.F) {
	e, err := NewSpecEvent("maestro", ActionCreateRequest, testRef, testBundle)
	if err != nil {
		f.Fatal(err)
	}
	structured, err := json.Marshal(e.Event)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(structured, event.ApplicationCloudEventsJSON, "", "", "")
	f.Add(mustMarshal(f, testBundle), "application/json", "1.0", SpecUpdateRequest.String(), "7")
	f.Add([]byte(`{"statusHashes":null}`), "", "1.0", StatusResyncRequest.String(), "")
	f.Add([]byte(`{"manifests":[{}]}`), "application/json", "1.0", SpecDeleteRequest.String(), "1e3")
	f.Add([]byte{0xff, 0x00}, "application/cloudevents+json; charset=utf-8", "", "", "")
	f.Fuzz(func(t *testing.T, payload []byte, contentType, specVersion, eventType, resourceVersion string) {
		props := &paho.PublishProperties{ContentType: contentType}
		if specVersion != "" {
			props.User.Add("ce-specversion", specVersion).Add("ce-id", "1").Add("ce-source", "maestro").
				Add("ce-type", eventType).Add("ce-resourceid", "r").Add("ce-resourceversion", resourceVersion).
				Add("ce-deletiontimestamp", "2026-01-02T03:04:05Z").Add("ce-sequenceid", "1")
		}
		got, err := FromMQTT(payload, props)
		if err != nil {
			if strings.Contains(err.Error(), "panicked") {
				t.Fatal(err)
			}
			return
		}
		payload2, props2, err := ToMQTT(got)
		if err != nil {
			t.Fatalf("decoded %v but cannot re-encode it: %v", got, err)
		}
		again, err := FromMQTT(payload2, props2)
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v", err)
		}
		assertSameEvent(t, got, again)
	})
}

// An event made here is validated on its way out without decoding the data it was just encoded into;
// its readers still get a payload of their own, and new data is validated as the data it is.
func TestMadeEventsAreNotDecodedOnTheirWayOut(t *testing.T) {
	manifests := make([]json.RawMessage, 200)
	for i := range manifests {
		manifests[i] = json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"}}`, i))
	}
	bundle := &ManifestBundle{Manifests: manifests}
	e, err := NewSpecEvent("hcp-apiserver", ActionCreateRequest, testRef, bundle)
	if err != nil {
		t.Fatal(err)
	}
	// Decoding 200 manifests allocates at least one slice each.
	if allocs := testing.AllocsPerRun(10, func() {
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
	}); allocs >= 100 {
		t.Errorf("validating a bundle of 200 manifests made here: %.0f allocations, want fewer than 100 (its data decoded again)", allocs)
	}
	read, err := e.ManifestBundle()
	if err != nil {
		t.Fatal(err)
	}
	if read == bundle || len(read.Manifests) != len(manifests) || string(read.Manifests[7]) != string(manifests[7]) {
		t.Errorf("a reader of the event got %p with %d manifests, want its own copy of %p's %d", read, len(read.Manifests), bundle, len(manifests))
	}
	if err := e.SetData("application/json", []byte(`{"manifests":[[1]]}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ToMQTT(e); err == nil || !strings.Contains(err.Error(), "manifests[0] is not a JSON object") {
		t.Errorf("an event made here and given data that is not a bundle: ToMQTT error %v, want manifests[0] is not a JSON object", err)
	}
}

// BenchmarkToMQTT encodes the spec event of a HostedCluster-sized bundle, as the source does for every
// bundle it publishes.
func BenchmarkToMQTT(b *testing.B) {
	manifest := json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"x":"` + strings.Repeat("abcdefgh", 500) + `"}}`)
	e, err := NewSpecEvent("hcp-apiserver", ActionCreateRequest, testRef, &ManifestBundle{Manifests: []json.RawMessage{manifest}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ToMQTT(e); err != nil {
			b.Fatal(err)
		}
	}
}
