package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// FuzzFeedbackValues evaluates feedback paths, which arrive in a bundle's manifestConfigs, on objects as
// the management cluster returns them. Every value has the one field its type says, and a status carrying
// the values travels to the source unchanged.
func FuzzFeedbackValues(f *testing.F) {
	hostedCluster := []byte(`{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster",` +
		`"metadata":{"name":"mycluster","namespace":"ocm-dev-1"},"status":{` +
		`"conditions":[{"type":"Available","status":"True","message":"ok"},{"type":"Degraded","status":"False"}],` +
		`"version":{"history":[{"version":"4.20.8","state":"Completed","startedTime":"2026-01-02T03:04:05Z"}]},` +
		`"controlPlaneEndpoint":{"host":"api.example.com","port":443},"ratio":0.5,"paused":false,"big":1e400}}`)
	pod := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Running",` +
		`"conditions":[{"type":"Ready","status":"True"}]}}`)
	for _, path := range []string{
		`.status.conditions[?(@.type=="Available")].status`,
		`.status.conditions[?(@.type=="Available")].message`,
		".status.version.history",
		".status.controlPlaneEndpoint.port",
		".status",
		".status.ratio",
		"..type",
		".status.conditions[*]['type','status']",
		".status.conditions[-1:0:-1]",
		`.status.conditions[?(@.status>"A")]`,
		"{range .status.conditions[*]}{.type}{end}",
		`.status.conditions[?(@..x)]`,
	} {
		f.Add(path, hostedCluster)
	}
	f.Add(".status.phase", pod)
	f.Add(`.metadata["name"]`, []byte(`{"kind":"X","metadata":{"name":["a","b"]}}`))

	f.Fuzz(func(t *testing.T, path string, object []byte) {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(object); err != nil {
			return
		}
		rules := []protocol.FeedbackRule{
			{Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{{Name: "value", Path: path}}},
			{Type: protocol.FeedbackWellKnownStatus},
		}
		values, _ := FeedbackValues(obj, rules)
		for _, v := range values {
			checkFieldValue(t, v)
		}

		status := &protocol.ManifestBundleStatus{ResourceStatus: []protocol.ManifestCondition{{
			StatusFeedback: protocol.StatusFeedbackResult{Values: values},
		}}}
		e, err := protocol.NewStatusEvent("mc-1", protocol.ActionUpdateRequest,
			protocol.BundleRef{ClusterName: "mc-1", ResourceID: "r", ResourceVersion: 1}, status)
		if err != nil {
			t.Fatalf("feedback values do not make a status event: %v", err)
		}
		e.SetSequenceID("1")
		payload, props, err := protocol.ToMQTT(e)
		if err != nil {
			return // MaxJSONRawLength per value still lets many values pass the event limit
		}
		received, err := protocol.FromMQTT(payload, props)
		if err != nil {
			t.Fatalf("a status with feedback values does not decode: %v", err)
		}
		got, err := received.ManifestBundleStatus()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.ResourceStatus[0].StatusFeedback.Values, values) {
			t.Fatalf("feedback values changed on the wire:\nsent     %+v\nreceived %+v", values, got.ResourceStatus[0].StatusFeedback.Values)
		}
	})
}

func checkFieldValue(t *testing.T, v protocol.FeedbackValue) {
	t.Helper()
	fv := v.Value
	set := 0
	for _, p := range []bool{fv.Integer != nil, fv.String != nil, fv.Boolean != nil, fv.JSONRaw != nil} {
		if p {
			set++
		}
	}
	ok := set == 1
	switch fv.Type {
	case protocol.ValueInteger:
		ok = ok && fv.Integer != nil
	case protocol.ValueString:
		ok = ok && fv.String != nil
	case protocol.ValueBoolean:
		ok = ok && fv.Boolean != nil
	case protocol.ValueJSONRaw:
		ok = ok && fv.JSONRaw != nil && json.Valid([]byte(*fv.JSONRaw)) && len(*fv.JSONRaw) <= MaxJSONRawLength
	default:
		ok = false
	}
	if !ok {
		t.Fatalf("feedback value %s is not one value of type %q: %+v", v.Name, fv.Type, fv)
	}
}

// FuzzDecodeManifests maps the manifests of a received bundle to the resources the agent applies them
// to. Each manifest gets its ordinal and either an object to apply, with a name and a resource (and a
// namespace when the resource is namespaced), or an error.
func FuzzDecodeManifests(f *testing.F) {
	f.Add([]byte(`{"manifests":[` +
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ocm-dev-1","namespace":"ignored","resourceVersion":"7","uid":"u"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ocm-dev-1"},"data":{"a":"b"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}},` +
		`{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"name":"h","namespace":"ocm-dev-1"}},` +
		`{"apiVersion":"example.com/v1","kind":"Unknown","metadata":{"name":"u"}},` +
		`{"kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}},{"apiVersion":"v1"},{"apiVersion":"/v1/","kind":"ConfigMap"}]}`))
	// Keys given twice, escaped, or not ASCII: the last of each counts, as decoding whole reads it.
	f.Add([]byte(`{"manifests":[` +
		`{"apiVersion":"v1","kind":"Namespace","kind":"ConfigMap","metadata":{"name":"a"},"metadata":{"name":"c","namespace":"n"},"data":{"a":"1"},"data":{"b":"2"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"d\u0061ta":{"a":"1"},"dätä":{"b":"2"}},` +
		`{"apiVersion":"v1","\u006bind":"ConfigMap","kind":"Namespace","metadata":{"name":"c"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"k":"\"}\\]"},"x":[1,{"y":null}],"z":-1.5e3}]}`))
	f.Add([]byte(`{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n","managedFields":[{}],"generation":1}}],` +
		`"manifestConfigs":[{"resourceIdentifier":{"resource":"configmaps","name":"c","namespace":"n"}}]}`))
	mapper := newRESTMapper(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", Kind: "Namespace", Namespaced: false, Verbs: []string{"get", "patch"}},
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"get", "patch"}},
		}},
		{GroupVersion: "hypershift.openshift.io/v1beta1", APIResources: []metav1.APIResource{
			{Name: "hostedclusters", Kind: "HostedCluster", Namespaced: true, Verbs: []string{"get", "patch"}},
		}},
	}}})

	f.Fuzz(func(t *testing.T, data []byte) {
		var bundle protocol.ManifestBundle
		if err := json.Unmarshal(data, &bundle); err != nil || bundle.Validate() != nil {
			return // FromMQTT refuses it
		}
		manifests := decodeManifests(context.Background(), mapper, &bundle)
		if len(manifests) != len(bundle.Manifests) {
			t.Fatalf("%d manifests decoded as %d", len(bundle.Manifests), len(manifests))
		}
		for i, m := range manifests {
			if m.meta.Ordinal != int32(i) {
				t.Fatalf("manifests[%d] has ordinal %d", i, m.meta.Ordinal)
			}
			if m.err != nil {
				continue
			}
			mapping, err := mapper.mapping(context.Background(), m.object.GroupVersionKind())
			switch {
			case m.object == nil || m.gvr.Empty() || m.meta.Name == "" || m.meta.Resource != m.gvr.Resource:
				t.Fatalf("manifests[%d] has no error but cannot be applied: %+v", i, m)
			case m.object.GetName() != m.meta.Name || m.object.GetNamespace() != m.meta.Namespace:
				t.Fatalf("manifests[%d] is %s/%s, reported as %s/%s", i, m.object.GetNamespace(), m.object.GetName(), m.meta.Namespace, m.meta.Name)
			case err != nil || mapping.Resource != m.gvr:
				t.Fatalf("manifests[%d] is mapped to %v, not to %v (%v)", i, m.gvr, mapping, err)
			case (mapping.Scope.Name() == "namespace") != (m.meta.Namespace != ""):
				t.Fatalf("manifests[%d] of scope %s has namespace %q", i, mapping.Scope.Name(), m.meta.Namespace)
			}
			// What is written: the whole manifest as it came, with the metadata decodeManifests left.
			came := &unstructured.Unstructured{}
			if err := came.UnmarshalJSON(bundle.Manifests[i]); err != nil {
				t.Fatalf("manifests[%d] was decoded, but does not decode whole: %v", i, err)
			}
			if came.GetAPIVersion() != m.object.GetAPIVersion() || came.GetKind() != m.object.GetKind() {
				t.Fatalf("manifests[%d] is a %s %s, decoded as a %s %s", i, came.GetAPIVersion(), came.GetKind(), m.object.GetAPIVersion(), m.object.GetKind())
			}
			came.Object["metadata"] = m.object.Object["metadata"]
			whole, err := m.wholeObject()
			if err != nil || !reflect.DeepEqual(whole.Object, came.Object) {
				t.Fatalf("manifests[%d] is decoded whole as %v (%v), want %v", i, whole, err, came.Object)
			}
			body, err := m.applyBody(whole.Object["metadata"].(map[string]any))
			if err != nil {
				t.Fatalf("manifests[%d] cannot be sent to the management cluster: %v", i, err)
			}
			if want, _ := whole.MarshalJSON(); !sameJSON(t, body, want) {
				t.Fatalf("manifests[%d] is sent as\n%s\nwant\n%s", i, body, want)
			}
			_ = configFor(bundle.ManifestConfigs, m.meta)
		}
	})
}

// FuzzDecodeRecord reads the records the agent keeps in Secrets, which anyone with access to the state
// namespace can write. A record that reads is written back the same.
func FuzzDecodeRecord(f *testing.F) {
	bundle, err := json.Marshal(&protocol.ManifestBundle{Manifests: []json.RawMessage{json.RawMessage(`{"kind":"ConfigMap"}`)}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("55c61e54-a3f6-563d-9fec-b1fe297bdfdb", []byte(`{"generation":3,"bundle":`+string(bundle)+`}`))
	f.Add("r", []byte(`{"generation":0,"deleting":true}`))
	f.Add("r", []byte(`{"generation":1,"deleting":"T","bundle":{"manifests":[" {}"]}}`))
	f.Add("-r", []byte(`{"generation":9223372036854775807,"bundle":{"manifests":null}}`))
	f.Fuzz(func(t *testing.T, id string, raw []byte) {
		s, err := decodeRecord(id, raw)
		if err != nil {
			return
		}
		if s.generation < 0 || (s.bundle == nil && !s.deleting) {
			t.Fatalf("decodeRecord(%q, %q) = %+v", id, raw, s)
		}
		encoded, err := encodeRecord(s)
		if err != nil {
			t.Fatalf("a record that reads cannot be written: %v", err)
		}
		again, err := decodeRecord(id, encoded)
		if err != nil {
			t.Fatalf("a record written from one that reads does not read: %v", err)
		}
		reencoded, err := encodeRecord(again)
		if err != nil {
			t.Fatal(err)
		}
		if again.generation != s.generation || again.deleting != s.deleting || !bytes.Equal(encoded, reencoded) {
			t.Fatalf("the record changed when written and read:\n%q\n%q", encoded, reencoded)
		}
	})
}
