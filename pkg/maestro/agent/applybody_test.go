package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// markedManifest decodes raw as decodeManifests does, takes out what a server sets, and marks it as the
// agent marks what it applies: what the apply's body must say.
func markedManifest(t testing.TB, raw []byte) (*unstructured.Unstructured, bool) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, false
	}
	if _, ok := obj.Object["metadata"].(map[string]any); !ok {
		return nil, false
	}
	unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
	obj.SetNamespace("")
	markOwned(obj, "6c5ee2d8-3b0e-4c8b-9e0a-3e5f4b3c2a10", 7)
	return obj, true
}

// sameJSON says whether a and b decode to the same value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s does not decode: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s does not decode: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestSpliceMetadataMakesTheMarkedManifest(t *testing.T) {
	hostedCluster, err := json.Marshal(map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": "c1", "namespace": "ocm-c1", "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{"release": map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"},
			"platform": map[string]any{"type": "Azure"}, "replicas": 3, "ratio": 0.25, "on": true, "none": nil,
			"text": `quotes " and \ and } and ] and <html> & é`}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  string
		// plain says whether spliceMetadata takes the manifest as it is.
		plain bool
	}{
		{"a HostedCluster", string(hostedCluster), true},
		{"whitespace everywhere", " {\n \"kind\" : \"ConfigMap\" ,\t\"apiVersion\":\"v1\",\r\n\"metadata\" : {\"name\":\"x\",\"namespace\":\"n\",\"resourceVersion\":\"5\"} ,\"data\" : { \"k\" : \"v\" } }\n", true},
		{"metadata first", `{"metadata":{"name":"x","annotations":{"keep":"me"}},"apiVersion":"v1","kind":"ConfigMap","data":{"a":"}"}}`, true},
		{"literals and arrays", `{"apiVersion":"v1","kind":"List","metadata":{"name":"x"},"items":[1,-2.5e3,true,false,null,"s",[{}],{"a":[]}],"n":12345678901234567890}`, true},
		{"escapes in values", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"\"}\\\u00e9\n"}}`, true},
		{"a key given twice", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"1"},"data":{"k":"2"}}`, false},
		{"metadata given twice", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"metadata":{"name":"y"}}`, false},
		{"an escaped key", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"d\u0061ta":{"k":"1"}}`, false},
		{"a key not ASCII", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"dätä":{"k":"1"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, ok := markedManifest(t, []byte(tc.raw))
			if !ok {
				t.Fatalf("%s does not decode as a manifest", tc.raw)
			}
			want, err := obj.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			body, plain := spliceMetadata([]byte(tc.raw), obj.Object["metadata"].(map[string]any))
			if plain != tc.plain {
				t.Fatalf("spliceMetadata took the manifest as it is: %v, want %v", plain, tc.plain)
			}
			if plain && !sameJSON(t, body, want) {
				t.Errorf("apply body\n%s\nwant what marshalling the marked manifest writes:\n%s", body, want)
			}
			if plain && strings.Contains(string(body), `"resourceVersion"`) {
				t.Errorf("apply body %s keeps the metadata that came", body)
			}
		})
	}
}

// The body of an apply holds the marked manifest, not a field more or less, whatever came.
func FuzzSpliceMetadata(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"n"},"data":{"k":"v"}}`))
	f.Add([]byte(`{"metadata":{"name":"x","labels":{"a":"b"}},"spec":[1,{"a":"]"},"\"}"],"status":null}`))
	f.Add([]byte(`{"a":1,"a":2,"metadata":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		obj, ok := markedManifest(t, raw)
		if !ok {
			return
		}
		body, plain := spliceMetadata(raw, runtime.DeepCopyJSONValue(obj.Object["metadata"]).(map[string]any))
		if !plain {
			return
		}
		want, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, body, want) {
			t.Errorf("apply body of %q is\n%s\nwant\n%s", raw, body, want)
		}
	})
}
