package agent

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
	sigsjson "sigs.k8s.io/json"
)

// envelopeDecoder decodes a watch event's envelope as client-go's JSON serializer does.
type envelopeDecoder struct{ runtime.Decoder }

func (envelopeDecoder) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	event := into.(*metav1.WatchEvent)
	*event = metav1.WatchEvent{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, event); err != nil {
		return nil, nil, err
	}
	return event, &schema.GroupVersionKind{}, nil
}

type decodedEvent struct {
	Type   watch.EventType
	Object runtime.Object
}

// decodeStream reads a watch stream as client-go does, with the given framer and envelope decoder, until
// the first error, and returns the events and that error.
func decodeStream(stream []byte, chunk int, framer runtime.Framer, envelope runtime.Decoder) ([]decodedEvent, error) {
	frames := framer.NewFrameReader(io.NopCloser(&chunkedReader{data: stream, chunk: chunk}))
	d := restclientwatch.NewDecoder(streaming.NewDecoder(frames, envelope), unstructured.UnstructuredJSONScheme)
	var events []decodedEvent
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			return events, err
		}
		events = append(events, decodedEvent{typ, obj})
	}
}

// chunkedReader returns at most chunk bytes a read, as a stream arrives in pieces.
type chunkedReader struct {
	data  []byte
	chunk int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.chunk)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// sameDecoding checks that the agent's framer and envelope reader read stream as client-go's JSON framer
// and serializer do: the same events, then the same end (EOF, or an error).
func sameDecoding(t *testing.T, stream []byte, chunk int) {
	t.Helper()
	want, wantErr := decodeStream(stream, chunk, json.Framer, envelopeDecoder{})
	got, gotErr := decodeStream(stream, chunk, watchFramer{}, watchEventDecoder{})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stream %q in reads of %d bytes: the agent read\n%+v\nwhere client-go reads\n%+v", stream, chunk, got, want)
	}
	if errors.Is(gotErr, io.EOF) != errors.Is(wantErr, io.EOF) || (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("stream %q in reads of %d bytes: the agent's read ended with %v where client-go's ends with %v", stream, chunk, gotErr, wantErr)
	}
}

var watchFramingSeeds = []string{
	watchStream,
	// Strings holding brackets, quotes, backslashes and escapes; whitespace between and inside events.
	` {"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"x":"}]\"{[\\","y":"\u00e9\\u0041"}} , "type" : "ADDED"}` + "\r\n\t" +
		`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"z":"\\\\\""}}}`,
	// An escaped key and a type with an escape, which the JSON decoder reads.
	`{"typ\u0065":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}{"type":"DELET\u0045D","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}`,
	// Keys that are not the envelope's, a null object, a duplicate type.
	`{"type":"ADDED","extra":[1,{"a":"b"}],"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}{"type":"ADDED","type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b"}}}{"type":"ADDED","object":null}`,
	// Ends: mid-event, with a stray bracket, with invalid JSON inside an object, with a literal.
	`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}{"type":"ADDED","obj`,
	`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}]}`,
	`{"type":"ADDED","object":{"kind":"ConfigMap" "apiVersion":"v1"}}`,
	`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}} null`,
	`[{"type":"ADDED"}]`,
	"\"ADDED\"",
	"",
	"   \n",
}

// TestWatchFramingReadsAsClientGo reads streams with the agent's framer and envelope reader and with
// client-go's, whole and a few bytes at a time.
func TestWatchFramingReadsAsClientGo(t *testing.T) {
	for _, stream := range watchFramingSeeds {
		for _, chunk := range []int{1, 7, 4096} {
			sameDecoding(t, []byte(stream), chunk)
		}
	}
	// The envelope kube-apiserver writes is read without the JSON decoder; other envelopes are left to it.
	for envelope, fast := range map[string]bool{
		`{"type":"ADDED","object":{"a":"}"}}`:              true,
		` { "object" : {} , "type" : "BOOKMARK" } `:        true,
		`{"type":"ADDED","object":null}`:                   false,
		`{"typ\u0065":"ADDED","object":{}}`:                false,
		`{"type":"ADD\"ED","object":{}}`:                   false,
		`{"type":"ADDED","object":{},"extra":1}`:           false,
		`{"Type":"ADDED","object":{}}`:                     false,
		`{"type":"ADDED","object":{}} {}`:                  false,
		`{"type":"ADDED","object":{"a":[}]}`:               false,
		`{"type":"ADDED","object":{}`:                      false,
		"{\"type\":\"ADD\xffED\",\"object\":{}}":           false,
		`{"type":"ADDED","object":{"a":"` + "\x01" + `"}}`: true,
	} {
		if got := readWatchEnvelope([]byte(envelope), &metav1.WatchEvent{}); got != fast {
			t.Errorf("readWatchEnvelope(%q) = %v, want %v", envelope, got, fast)
		}
	}
}

// TestWatchFramingHoldsLongEvents reads an event longer than the framer's first buffer, and longer than
// the buffer the streaming decoder first reads into, in pieces.
func TestWatchFramingHoldsLongEvents(t *testing.T) {
	long := `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"x":"` +
		strings.Repeat(`\"}{`, 20000) + `"}}}`
	stream := []byte(long + "\n" + long)
	sameDecoding(t, stream, 1000)
	events, err := decodeStream(stream, 1000, watchFramer{}, watchEventDecoder{})
	if len(events) != 2 || !errors.Is(err, io.EOF) {
		t.Fatalf("read %d events and %v, want 2 and EOF", len(events), err)
	}
	if x, _, _ := unstructured.NestedString(events[1].Object.(*unstructured.Unstructured).Object, "data", "x"); x != strings.Repeat(`"}{`, 20000) {
		t.Errorf("the second event's value is %d bytes, want %d", len(x), 3*20000)
	}
}

func FuzzWatchFraming(f *testing.F) {
	for _, stream := range watchFramingSeeds {
		f.Add([]byte(stream), 5)
	}
	f.Fuzz(func(t *testing.T, stream []byte, chunk int) {
		if chunk < 1 || chunk > 1<<16 || bytes.Count(stream, []byte("[")) > 1000 {
			t.Skip()
		}
		sameDecoding(t, stream, chunk)
	})
}
