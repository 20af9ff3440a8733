package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/eclipse/paho.golang/paho"

	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// exampleEvents lists every CloudEvent in shared/maestro/examples with its type. A new file there fails
// TestExamples until it is listed here or in notEvents.
var exampleEvents = map[string]EventType{
	"cloudevents.agent.json":                     StatusUpdateRequest,
	"cloudevents.spec.maestro.json":              SpecCreateRequest,
	"cloudevents.status.maestro.json":            StatusUpdateRequest,
	"constructed_spec-resync-request.agent.json": SpecResyncRequest,
	"example_cloudevent-delete.json":             SpecDeleteRequest,
	"example_cloudevent-status-resync.json":      StatusResyncRequest,
	"example_cloudevent-update.json":             SpecUpdateRequest,
	"example_cloudevent.json":                    SpecCreateRequest,
}

// notEvents are the Kubernetes objects among the examples: Maestro's ManifestWork (whose spec becomes the
// bundle of cloudevents.spec.maestro.json, checked in TestManifestWorkExample) and the agent's
// AppliedManifestWork, a record kept on the management cluster that never travels on the wire.
var notEvents = map[string]bool{
	"manifestwork.json":        true,
	"appliedmanifestwork.json": true,
}

// TestExamples decodes every example event in structured mode, checks its payload and extensions against
// the file, encodes it in binary mode and checks that it decodes back to the same event.
func TestExamples(t *testing.T) {
	dir := examplesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s: %v", dir, err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		if notEvents[name] {
			continue
		}
		wantType, ok := exampleEvents[name]
		if !ok {
			t.Errorf("%s is neither in exampleEvents nor in notEvents: add it to one of them", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			raw := readExample(t, file)
			structured, err := FromMQTT(raw, &paho.PublishProperties{ContentType: event.ApplicationCloudEventsJSON})
			if err != nil {
				t.Fatalf("structured mode: %v", err)
			}
			if got := structured.EventType(); got != wantType {
				t.Fatalf("type = %v, want %v", got, wantType)
			}
			checkAgainstFile(t, structured, raw)

			payload, props, err := ToMQTT(structured)
			if err != nil {
				t.Fatalf("ToMQTT: %v", err)
			}
			checkBinaryWire(t, structured, payload, props)
			binary, err := FromMQTT(payload, props)
			if err != nil {
				t.Fatalf("binary mode: %v", err)
			}
			assertSameEvent(t, structured, binary)
		})
	}
}

// TestManifestWorkExample checks that the ManifestWork Maestro stores carries the same bundle as the event
// it sent for it: the spec's workload manifests and manifestConfigs, field for field.
func TestManifestWorkExample(t *testing.T) {
	dir := examplesDir(t)
	var work struct {
		Spec struct {
			Workload struct {
				Manifests []json.RawMessage `json:"manifests"`
			} `json:"workload"`
			DeleteOption    *DeleteOption          `json:"deleteOption"`
			ManifestConfigs []ManifestConfigOption `json:"manifestConfigs"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(readExample(t, filepath.Join(dir, "manifestwork.json")), &work); err != nil {
		t.Fatal(err)
	}
	fromWork := &ManifestBundle{
		Manifests:       work.Spec.Workload.Manifests,
		DeleteOption:    work.Spec.DeleteOption,
		ManifestConfigs: work.Spec.ManifestConfigs,
	}
	ev, err := FromMQTT(readExample(t, filepath.Join(dir, "cloudevents.spec.maestro.json")),
		&paho.PublishProperties{ContentType: event.ApplicationCloudEventsJSON})
	if err != nil {
		t.Fatal(err)
	}
	fromEvent, err := ev.ManifestBundle()
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, mustMarshal(t, fromWork), mustMarshal(t, fromEvent)) {
		t.Errorf("bundle from the ManifestWork:\n%s\nbundle from the event:\n%s", mustMarshal(t, fromWork), mustMarshal(t, fromEvent))
	}
}

// checkAgainstFile checks the typed view of e against the file it was read from: the payload structs keep
// every field of the data under OCM's names, and the accessors return the extensions' values.
func checkAgainstFile(t *testing.T, e Event, raw []byte) {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	payload, err := e.DecodePayload()
	if err != nil {
		t.Fatalf("DecodePayload: %v", err)
	}
	fileData, err := json.Marshal(file["data"])
	if err != nil {
		t.Fatal(err)
	}
	// A field the structs do not know would be dropped here; nulls are what Go writes for empty
	// non-omitempty fields, as OCM does.
	if reencoded := dropNulls(t, mustMarshal(t, payload)); !jsonEqual(t, fileData, reencoded) {
		t.Errorf("payload %T does not keep the data:\nfile:      %s\nre-encoded: %s", payload, fileData, reencoded)
	}

	for name, get := range map[string]func() string{
		ExtensionClusterName:    e.ClusterName,
		ExtensionResourceID:     e.ResourceID,
		ExtensionOriginalSource: e.OriginalSource,
		ExtensionSequenceID:     e.SequenceID,
		ExtensionStatusHash:     e.StatusHash,
	} {
		if want, ok := file[name]; ok && get() != want {
			t.Errorf("%s = %q, file has %q", name, get(), want)
		}
	}
	if want, ok := file[ExtensionResourceVersion].(float64); ok && e.ResourceVersion() != int64(want) {
		t.Errorf("ResourceVersion() = %d, file has %v", e.ResourceVersion(), want)
	}
	if want, ok := file[ExtensionDeletionTimestamp].(string); ok {
		if wantTime, _ := time.Parse(time.RFC3339Nano, want); !e.DeletionTimestamp().Equal(wantTime) {
			t.Errorf("DeletionTimestamp() = %v, file has %s", e.DeletionTimestamp(), want)
		}
	}
	if raw, ok := file[ExtensionMetadata].(string); ok {
		meta, err := e.Metadata()
		var want struct{ Name, UID string }
		if jsonErr := json.Unmarshal([]byte(raw), &want); err != nil || jsonErr != nil || meta.Name != want.Name || string(meta.UID) != want.UID {
			t.Errorf("Metadata() = %s/%s, %v; file has %s/%s", meta.Name, meta.UID, err, want.Name, want.UID)
		}
	}
}

// checkBinaryWire checks the MQTT form: data as the payload, datacontenttype as the Content Type, and
// attributes and extensions as ce- user properties with their canonical string values.
func checkBinaryWire(t *testing.T, e Event, payload []byte, props *paho.PublishProperties) {
	t.Helper()
	if string(payload) != string(e.Data()) {
		t.Errorf("payload is not the event's data:\n%s", payload)
	}
	if props.ContentType != e.DataContentType() {
		t.Errorf("Content Type = %q, want %q", props.ContentType, e.DataContentType())
	}
	want := map[string]string{"ce-specversion": "1.0", "ce-id": e.ID(), "ce-source": e.Source(), "ce-type": e.Type()}
	for name, value := range e.Extensions() {
		s, _ := types.Format(value)
		want["ce-"+name] = s
	}
	if _, ok := e.Extensions()[ExtensionResourceVersion]; ok && want["ce-resourceversion"] != "1" {
		t.Errorf("ce-resourceversion = %q, want the decimal 1 of the examples", want["ce-resourceversion"])
	}
	for key, value := range want {
		if got := props.User.Get(key); got != value {
			t.Errorf("user property %s = %q, want %q", key, got, value)
		}
	}
	if got := props.User.Get("ce-datacontenttype"); got != "" {
		t.Errorf("datacontenttype travels as a user property too (%q): it belongs in the Content Type only", got)
	}
}

// assertSameEvent compares two events attribute by attribute, extensions by their CloudEvents string
// form, and payloads both as bytes and decoded.
func assertSameEvent(t *testing.T, want, got Event) {
	t.Helper()
	for _, a := range []struct{ name, want, got string }{
		{"specversion", want.SpecVersion(), got.SpecVersion()},
		{"id", want.ID(), got.ID()},
		{"source", want.Source(), got.Source()},
		{"type", want.Type(), got.Type()},
		{"subject", want.Subject(), got.Subject()},
		{"datacontenttype", want.DataContentType(), got.DataContentType()},
		{"data", string(want.Data()), string(got.Data())},
	} {
		if a.want != a.got {
			t.Errorf("%s = %q, want %q", a.name, a.got, a.want)
		}
	}
	if !want.Time().Equal(got.Time()) {
		t.Errorf("time = %v, want %v", got.Time(), want.Time())
	}
	if w, g := formatExtensions(t, want), formatExtensions(t, got); !reflect.DeepEqual(w, g) {
		t.Errorf("extensions = %v, want %v", g, w)
	}
	if !reflect.DeepEqual(want.Extensions()[ExtensionResourceVersion], got.Extensions()[ExtensionResourceVersion]) {
		t.Errorf("resourceversion decoded as %#v, want %#v", got.Extensions()[ExtensionResourceVersion], want.Extensions()[ExtensionResourceVersion])
	}
	wantPayload, err1 := want.DecodePayload()
	gotPayload, err2 := got.DecodePayload()
	if err1 != nil || err2 != nil || !reflect.DeepEqual(wantPayload, gotPayload) {
		t.Errorf("payload = %+v (%v), want %+v (%v)", gotPayload, err2, wantPayload, err1)
	}
}

func formatExtensions(t *testing.T, e Event) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, value := range e.Extensions() {
		s, err := types.Format(value)
		if err != nil {
			t.Fatalf("extension %s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// readExample reads an example; a "_note" key, which the project added to the constructed example to say
// where it comes from, is removed: it is not a valid CloudEvents attribute name and no peer sends it.
func readExample(t *testing.T, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if _, ok := fields["_note"]; !ok {
		return raw
	}
	delete(fields, "_note")
	return mustMarshal(t, fields)
}

// examplesDir returns shared/maestro/examples: under $HCP_SHARED_DIR if set, else in the folder "shared"
// beside the repository.
func examplesDir(t *testing.T) string {
	t.Helper()
	shared := os.Getenv("HCP_SHARED_DIR")
	if shared == "" {
		root, err := paths.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		shared = filepath.Join(filepath.Dir(root), "shared")
	}
	dir := filepath.Join(shared, "maestro", "examples")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the example events are Maestro's own (shared/maestro/PROVENANCE.md), expected in %s: "+
			"set HCP_SHARED_DIR to the folder that holds maestro/examples", dir)
	}
	return dir
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var av, bv any
	if err := json.Unmarshal(a, &av); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &bv); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(av, bv)
}

func dropNulls(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var drop func(v any) any
	drop = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if x == nil {
					delete(v, k)
				} else {
					v[k] = drop(x)
				}
			}
		case []any:
			for i, x := range v {
				v[i] = drop(x)
			}
		}
		return v
	}
	return mustMarshal(t, drop(v))
}
