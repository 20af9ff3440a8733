package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const (
	targetNamespace = "hostile"
	targetCluster   = "c1"
	targetPool      = targetCluster + ".np1"
	targetMC        = "mc-1"
	targetSub       = "0a1b2c3d-0000-4000-8000-000000000001"
	targetOperation = "0a1b2c3d-0000-4000-8000-0000000000ff"
)

// apiKind is one kind of the API: where it lives, and valid objects of it to spoil.
type apiKind struct {
	resource   string
	namespaced bool
	// valid returns a valid object of the kind named name.
	valid func(name string) runtime.Object
	// fresh is a name that is not taken, for creates.
	fresh string
	// existing is the name of an object of the kind that the probes update and patch.
	existing string
}

func apiKinds() []apiKind {
	return []apiKind{
		{resource: "hcpclusters", namespaced: true, fresh: "fresh-cluster", existing: targetCluster,
			valid: func(name string) runtime.Object {
				return typed(fixtures.HCPCluster(targetNamespace, name), "HCPCluster")
			}},
		{resource: "nodepools", namespaced: true, fresh: targetCluster + ".fresh", existing: targetPool,
			valid: func(name string) runtime.Object {
				np := fixtures.NodePool(targetNamespace, targetCluster, strings.TrimPrefix(name, targetCluster+"."))
				return typed(np, "NodePool")
			}},
		{resource: "externalauths", namespaced: true, fresh: targetCluster + ".fresh", existing: targetCluster + ".idp",
			valid: func(name string) runtime.Object {
				ea := fixtures.ExternalAuth(targetNamespace, targetCluster, strings.TrimPrefix(name, targetCluster+"."))
				return typed(ea, "ExternalAuth")
			}},
		{resource: "breakglasscredentials", namespaced: true, fresh: "fresh-credential",
			valid: func(name string) runtime.Object {
				return typed(fixtures.BreakglassCredential(targetNamespace, targetCluster, name), "BreakglassCredential")
			}},
		{resource: "clusterinspections", namespaced: true, fresh: "fresh-inspection",
			valid: func(name string) runtime.Object {
				return typed(fixtures.ClusterInspection(targetNamespace, targetCluster, name, v1alpha1.InspectionViewHostedCluster), "ClusterInspection")
			}},
		{resource: "managementclusters", fresh: "fresh-mc", existing: targetMC,
			valid: func(name string) runtime.Object { return typed(fixtures.ManagementCluster(name), "ManagementCluster") }},
		{resource: "armsubscriptions", fresh: "0a1b2c3d-0000-4000-8000-000000000002", existing: targetSub,
			valid: func(name string) runtime.Object { return typed(armSubscription(name), "ARMSubscription") }},
		{resource: "armoperations", fresh: "0a1b2c3d-0000-4000-8000-0000000000fe", existing: targetOperation,
			valid: func(name string) runtime.Object { return typed(armOperation(name), "ARMOperation") }},
	}
}

func armSubscription(name string) *v1alpha1.ARMSubscription {
	return &v1alpha1.ARMSubscription{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ARMSubscriptionSpec{State: v1alpha1.ARMSubscriptionRegistered,
			Properties: &v1alpha1.ARMSubscriptionProperties{TenantID: "7d3e9f1a-2b3c-4d5e-9f0a-1b2c3d4e5f6a"}},
	}
}

func armOperation(name string) *v1alpha1.ARMOperation {
	return &v1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ARMOperationSpec{
			Request:        v1alpha1.ARMOperationCreate,
			ResourceID:     "/subscriptions/" + targetSub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1",
			SubscriptionID: targetSub,
			Location:       armLocation,
			Target: v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: targetNamespace, Name: targetCluster,
				UID: "0a1b2c3d-0000-4000-8000-00000000c1c1"},
		},
	}
}

// typed sets the object's apiVersion and kind, which a request body carries.
func typed[T runtime.Object](obj T, kind string) T {
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kind))
	return obj
}

// createAPITargets creates the objects the probes update and patch.
func createAPITargets(t *testing.T, ctx context.Context, c versioned.Interface) {
	t.Helper()
	hcp := c.HcpV1alpha1()
	must := func(what string, err error) {
		if err != nil {
			t.Fatalf("creating %s: %v", what, err)
		}
	}
	_, err := hcp.ManagementClusters().Create(ctx, fixtures.ManagementCluster(targetMC), metav1.CreateOptions{})
	must("the management cluster", err)
	_, err = hcp.HCPClusters(targetNamespace).Create(ctx, fixtures.HCPCluster(targetNamespace, targetCluster), metav1.CreateOptions{})
	must("the cluster", err)
	_, err = hcp.NodePools(targetNamespace).Create(ctx, fixtures.NodePool(targetNamespace, targetCluster, "np1"), metav1.CreateOptions{})
	must("the node pool", err)
	_, err = hcp.ExternalAuths(targetNamespace).Create(ctx, fixtures.ExternalAuth(targetNamespace, targetCluster, "idp"), metav1.CreateOptions{})
	must("the external auth", err)
	_, err = hcp.ARMSubscriptions().Create(ctx, armSubscription(targetSub), metav1.CreateOptions{})
	must("the subscription", err)
	_, err = hcp.ARMOperations().Create(ctx, armOperation(targetOperation), metav1.CreateOptions{})
	must("the operation", err)
}

func collectionPath(k apiKind) string {
	if k.namespaced {
		return "/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + targetNamespace + "/" + k.resource
	}
	return "/apis/hcp.aro.azure.com/v1alpha1/" + k.resource
}

func objectPath(k apiKind, name string) string { return collectionPath(k) + "/" + name }

// jsonMap is obj as a JSON object, to spoil a field of.
func jsonMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// deepJSON is a document nested depth levels, [[[...]]].
func deepJSON(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

// spoiled is a body built from a valid object by one change.
type spoiled struct {
	name   string
	change func(m map[string]any)
	accept func(int) bool
}

func metadata(m map[string]any) map[string]any { return m["metadata"].(map[string]any) }

// spoilings are the ways a valid object's JSON is made wrong; each must be refused with a 4xx.
func spoilings() []spoiled {
	long := strings.Repeat("a", 300)
	return []spoiled{
		{name: "kind of another group", change: func(m map[string]any) { m["kind"] = "Pod" }},
		{name: "apiVersion v1", change: func(m map[string]any) { m["apiVersion"] = "v1" }},
		{name: "apiVersion of no group", change: func(m map[string]any) { m["apiVersion"] = "nothing.example.com/v9" }},
		{name: "name a number", change: func(m map[string]any) { metadata(m)["name"] = 12 }},
		{name: "name of 300 characters", change: func(m map[string]any) { metadata(m)["name"] = long }},
		{name: "name dot dot", change: func(m map[string]any) { metadata(m)["name"] = ".." }},
		{name: "name with percent", change: func(m map[string]any) { metadata(m)["name"] = "a%2fb" }},
		{name: "name with slash", change: func(m map[string]any) { metadata(m)["name"] = "a/b" }},
		{name: "name in capitals", change: func(m map[string]any) { metadata(m)["name"] = "UPPER" }},
		{name: "name not UTF-8 safe", change: func(m map[string]any) { metadata(m)["name"] = "caf\u00e9\u0000" }},
		{name: "resourceVersion set", change: func(m map[string]any) { metadata(m)["resourceVersion"] = "5" }},
		{name: "resourceVersion not a number", change: func(m map[string]any) { metadata(m)["resourceVersion"] = "abc" }},
		{name: "resourceVersion an object", change: func(m map[string]any) { metadata(m)["resourceVersion"] = map[string]any{} }},
		{name: "label key invalid", change: func(m map[string]any) { metadata(m)["labels"] = map[string]any{"a b/c d": "x"} }},
		{name: "label value too long", change: func(m map[string]any) { metadata(m)["labels"] = map[string]any{"a": long} }},
		{name: "annotations over 256 KiB", change: func(m map[string]any) {
			metadata(m)["annotations"] = map[string]any{"a": strings.Repeat("x", 300<<10)}
		}},
		{name: "annotation value an object", change: func(m map[string]any) { metadata(m)["annotations"] = map[string]any{"a": map[string]any{}} }},
		{name: "finalizer invalid", change: func(m map[string]any) { metadata(m)["finalizers"] = []any{"not a finalizer!"} }},
		{name: "owner reference without uid", change: func(m map[string]any) {
			metadata(m)["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "X", "name": "y"}}
		}},
		{name: "managed fields garbage", change: func(m map[string]any) {
			metadata(m)["managedFields"] = []any{map[string]any{"manager": 5, "operation": "Nope", "fieldsV1": "x"}}
		}},
		{name: "generateName invalid", change: func(m map[string]any) { delete(metadata(m), "name"); metadata(m)["generateName"] = "UP_" }},
		{name: "spec a string", change: func(m map[string]any) { m["spec"] = "spec" }},
		{name: "spec an array", change: func(m map[string]any) { m["spec"] = []any{} }},
		{name: "spec null", change: func(m map[string]any) { m["spec"] = nil }},
		{name: "spec field of the wrong type", change: func(m map[string]any) { m["spec"].(map[string]any)["location"] = []any{1} }, accept: notServerError},
		{name: "number too large for any integer", change: func(m map[string]any) { m["spec"].(map[string]any)["replicas"] = json.Number("1e400") }, accept: notServerError},
		{name: "integer as a string", change: func(m map[string]any) { m["spec"].(map[string]any)["capacity"] = "50" }, accept: notServerError},
		{name: "negative integer", change: func(m map[string]any) { m["spec"].(map[string]any)["replicas"] = -1 }, accept: notServerError},
		{name: "integer past int32", change: func(m map[string]any) { m["spec"].(map[string]any)["replicas"] = json.Number("4294967296") }, accept: notServerError},
		{name: "float for an integer", change: func(m map[string]any) { m["spec"].(map[string]any)["replicas"] = json.Number("2.5") }, accept: notServerError},
		{name: "status a string", change: func(m map[string]any) { m["status"] = "Succeeded" }},
		{name: "document nested 9990 levels", change: func(m map[string]any) {
			m["spec"].(map[string]any)["config"] = json.RawMessage(`[{"a":` + deepJSON(9_990) + `}]`)
		}},
		{name: "document nested 150 levels", change: func(m map[string]any) {
			metadata(m)["annotations"] = json.RawMessage(`{"a":` + deepJSON(150) + `}`)
		}},
	}
}

// rawBodies are bodies that are no object at all.
func rawBodies() []struct{ name, contentType, body string } {
	return []struct{ name, contentType, body string }{
		{"empty body", "application/json", ""},
		{"null", "application/json", "null"},
		{"array", "application/json", "[]"},
		{"string", "application/json", `"hcp"`},
		{"number", "application/json", "1e400"},
		{"truncated object", "application/json", `{"apiVersion":"hcp.aro.azure.com/v1alpha1","kind":`},
		{"trailing garbage", "application/json", `{}}}}`},
		{"not UTF-8", "application/json", "{\"metadata\":{\"name\":\"\xff\xfe\"}}"},
		{"nested 10000 levels", "application/json", `{"metadata":{"annotations":` + deepJSON(10_000) + `}}`},
		{"plain text", "text/plain", "hello"},
		{"no content type", "", `{}`},
		{"unknown content type", "application/x-hostile", `{}`},
		{"YAML garbage", "application/yaml", "a: [b: {c"},
		{"YAML nested 5000 levels", "application/yaml", deepJSON(5000)},
		{"protobuf of random bytes", "application/vnd.kubernetes.protobuf", "k8s\x00\xff\xfe\x01\x02garbage"},
		{"protobuf without the magic", "application/vnd.kubernetes.protobuf", "\x0a\x05hello"},
		{"CBOR of random bytes", "application/cbor", "\xd9\xd9\xf7\xff\x00"},
		{"body of 4 MiB", "application/json", `{"metadata":{"annotations":{"a":"` + strings.Repeat("x", 4<<20) + `"}}}`},
	}
}

// protobufBody encodes obj as the API's protobuf.
func protobufBody(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func header(contentType string) http.Header {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return h
}

// apiProbes are the probes of hcp-apiserver, for every kind.
func apiProbes(t *testing.T) []probe {
	var probes []probe
	add := func(p probe) { probes = append(probes, p) }
	for _, k := range apiKinds() {
		coll := collectionPath(k)
		for _, s := range spoilings() {
			m := jsonMap(t, k.valid(k.fresh))
			s.change(m)
			add(probe{name: k.resource + "/create/" + s.name, method: http.MethodPost, path: coll,
				header: header("application/json"), body: mustJSON(t, m), accept: s.accept})
		}
		for _, b := range rawBodies() {
			add(probe{name: k.resource + "/create/" + b.name, method: http.MethodPost, path: coll,
				header: header(b.contentType), body: []byte(b.body)})
		}
		// Creates that a valid request would pass with, but for one thing the query says.
		valid := mustJSON(t, k.valid(k.fresh))
		for _, q := range []string{"dryRun=Bogus", "fieldManager=" + strings.Repeat("m", 200), "fieldValidation=Bogus",
			"fieldValidation=Strict&dryRun=All&x=" + url.QueryEscape(`{"unknown":1}`)} {
			add(probe{name: k.resource + "/create/?" + q, method: http.MethodPost, path: coll + "?" + q,
				header: header("application/json"), body: valid, accept: pick(strings.HasPrefix(q, "fieldValidation=Strict"), notServerError, nil)})
		}
		unknown := jsonMap(t, k.valid(k.fresh))
		unknown["spec"].(map[string]any)["noSuchField"] = 1
		add(probe{name: k.resource + "/create/unknown field, strict", method: http.MethodPost, path: coll + "?fieldValidation=Strict&dryRun=All",
			header: header("application/json"), body: mustJSON(t, unknown)})
		if k.namespaced {
			other := jsonMap(t, k.valid(k.fresh))
			metadata(other)["namespace"] = "another"
			add(probe{name: k.resource + "/create/namespace other than the URL's", method: http.MethodPost, path: coll,
				header: header("application/json"), body: mustJSON(t, other)})
		}

		probes = append(probes, readProbes(k)...)
		if k.existing != "" {
			probes = append(probes, writeProbes(t, k)...)
		}
	}
	probes = append(probes, protobufProbes(t)...)
	return probes
}

func pick(cond bool, a, b func(int) bool) func(int) bool {
	if cond {
		return a
	}
	return b
}

// readProbes are gets, lists and watches with wrong names and query parameters.
func readProbes(k apiKind) []probe {
	var probes []probe
	coll := collectionPath(k)
	for _, name := range []string{"..", "%2E%2E", "%25", "a%2Fb", strings.Repeat("n", 300), "UPPER", "%00", "%E2%80%AE"} {
		probes = append(probes, probe{name: k.resource + "/get/name " + name[:min(len(name), 12)], method: http.MethodGet,
			path: coll + "/" + name, accept: clientError})
	}
	for _, q := range []string{
		"labelSelector=" + url.QueryEscape("a in (b"), "labelSelector=" + url.QueryEscape("!!"),
		"fieldSelector=" + url.QueryEscape("spec.nothing=x"),
		"limit=abc", "limit=99999999999999999999",
		"continue=bogus", "continue=" + url.QueryEscape("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiLi4vIn0="), "limit=1&continue=%00",
		"resourceVersion=abc", "resourceVersion=-1", "resourceVersion=99999999999999999999999",
		"resourceVersionMatch=Bogus", "resourceVersionMatch=Exact",
		"resourceVersion=999999999999&resourceVersionMatch=NotOlderThan",
		"watch=1&resourceVersion=999999999999", "watch=1&resourceVersion=abc", "watch=1&timeoutSeconds=-5&resourceVersion=abc",
		"watch=1&sendInitialEvents=true", "timeoutSeconds=abc",
	} {
		probes = append(probes, probe{name: k.resource + "/list/?" + q[:min(len(q), 60)], method: http.MethodGet, path: coll + "?" + q})
	}
	// Odd but valid: answered as kube-apiserver answers them. A watch ends after a second.
	for _, q := range []string{
		"labelSelector=" + url.QueryEscape(strings.Repeat("a=b,", 2000)+"a=b"), "fieldSelector=" + url.QueryEscape("metadata.name=="),
		"limit=-1", "resourceVersion=1&resourceVersionMatch=Exact", "watch=1&timeoutSeconds=1&allowWatchBookmarks=maybe",
		"watch=1&timeoutSeconds=1&resourceVersion=0",
	} {
		probes = append(probes, probe{name: k.resource + "/list/valid ?" + q[:min(len(q), 60)], method: http.MethodGet,
			path: coll + "?" + q, accept: notServerError})
	}
	probes = append(probes,
		probe{name: k.resource + "/list/Accept unknown", method: http.MethodGet, path: coll,
			header: http.Header{"Accept": {"application/x-hostile"}}},
		probe{name: k.resource + "/list/as a table of no version", method: http.MethodGet, path: coll,
			header: http.Header{"Accept": {"application/json;as=Table;v=v9;g=meta.k8s.io"}}},
		probe{name: k.resource + "/deletecollection/bad selector", method: http.MethodDelete, path: coll + "?labelSelector=" + url.QueryEscape("a in (")},
		probe{name: k.resource + "/delete/bad propagation", method: http.MethodDelete, path: coll + "/" + k.fresh + "?propagationPolicy=Bogus"},
		probe{name: k.resource + "/delete/body not options", method: http.MethodDelete, path: coll + "/" + k.fresh,
			header: header("application/json"), body: []byte(`{"kind":"Pod","apiVersion":"v1"}`)},
		probe{name: k.resource + "/delete/gracePeriod negative", method: http.MethodDelete, path: coll + "/" + k.fresh + "?gracePeriodSeconds=-10",
			accept: notServerError},
		probe{name: k.resource + "/delete/precondition uid garbage", method: http.MethodDelete, path: coll + "/" + k.fresh,
			header: header("application/json"), body: []byte(`{"preconditions":{"uid":5}}`)},
	)
	return probes
}

// writeProbes update and patch an existing object badly.
func writeProbes(t *testing.T, k apiKind) []probe {
	var probes []probe
	path := objectPath(k, k.existing)
	for _, s := range []string{"resourceVersion not a number", "name of 300 characters", "spec a string", "spec null",
		"kind of another group", "number too large for any integer", "document nested 9990 levels", "integer as a string"} {
		for _, sp := range spoilings() {
			if sp.name != s {
				continue
			}
			m := jsonMap(t, k.valid(k.existing))
			sp.change(m)
			probes = append(probes, probe{name: k.resource + "/update/" + s, method: http.MethodPut, path: path,
				header: header("application/json"), body: mustJSON(t, m), accept: sp.accept})
		}
	}
	for _, b := range rawBodies() {
		probes = append(probes, probe{name: k.resource + "/update/" + b.name, method: http.MethodPut, path: path,
			header: header(b.contentType), body: []byte(b.body)})
	}
	// PUT to a name that does not exist, with a resourceVersion: no object to update.
	m := jsonMap(t, k.valid(k.fresh))
	metadata(m)["resourceVersion"] = "5"
	probes = append(probes, probe{name: k.resource + "/update/missing object with resourceVersion", method: http.MethodPut,
		path: objectPath(k, k.fresh), header: header("application/json"), body: mustJSON(t, m)})

	patches := []struct{ name, body string }{
		{"null", "null"}, {"array", "[]"}, {"string", `"x"`}, {"truncated", `{"spec":`},
		{"spec a number", `{"spec":5}`}, {"name changed", `{"metadata":{"name":"other"}}`},
		{"resourceVersion garbage", `{"metadata":{"resourceVersion":"abc"}}`},
		{"nested 10000 levels", `{"metadata":{"annotations":{"a":` + deepJSON(10_000) + `}}}`},
		{"number 1e400", `{"spec":{"replicas":1e400}}`}, {"uid changed", `{"metadata":{"uid":"other"}}`},
		{"kind changed", `{"kind":"Pod"}`},
	}
	for _, ct := range []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml"} {
		short := strings.TrimSuffix(strings.TrimPrefix(ct, "application/"), "+json")
		for _, p := range patches {
			query := ""
			if strings.Contains(ct, "apply") {
				query = "?fieldManager=hostile"
			}
			// Some patch types take these as no change at all, as kube-apiserver does.
			accept := pick(p.name == "null" || p.name == "array" || p.name == "kind changed", notServerError, nil)
			probes = append(probes, probe{name: k.resource + "/patch " + short + "/" + p.name, method: http.MethodPatch,
				path: path + query, header: header(ct), body: []byte(p.body), accept: accept})
		}
	}
	for _, p := range []struct{ name, body string }{
		{"op unknown", `[{"op":"explode","path":"/spec"}]`},
		{"path into nothing", `[{"op":"replace","path":"/spec/a/b/c","value":1}]`},
		{"test fails", `[{"op":"test","path":"/metadata/name","value":"other"}]`},
		{"move from nothing", `[{"op":"move","from":"/nothing","path":"/spec"}]`},
		{"index past the end", `[{"op":"add","path":"/metadata/finalizers/99","value":"x"}]`},
		{"10000 operations", `[` + strings.Repeat(`{"op":"add","path":"/metadata/labels","value":{}},`, 9_999) + `{"op":"add","path":"/metadata/labels","value":{}}]`},
	} {
		probes = append(probes, probe{name: k.resource + "/patch json-patch/" + p.name, method: http.MethodPatch, path: path,
			header: header("application/json-patch+json"), body: []byte(p.body), accept: notServerError})
	}
	probes = append(probes,
		probe{name: k.resource + "/patch/no content type", method: http.MethodPatch, path: path, body: []byte(`{}`)},
		probe{name: k.resource + "/patch apply/no field manager", method: http.MethodPatch, path: path,
			header: header("application/apply-patch+yaml"), body: []byte(`{}`)},
		probe{name: k.resource + "/status/update of garbage", method: http.MethodPut, path: path + "/status",
			header: header("application/json"), body: []byte(`{"status":5}`)},
		probe{name: k.resource + "/subresource that is not", method: http.MethodGet, path: path + "/nothing"},
	)
	return probes
}

// protobufProbes send node pools whose opaque documents are not JSON, which the field manager cannot
// read, in protobuf, where no JSON decoder checks them first.
func protobufProbes(t *testing.T) []probe {
	var probes []probe
	kinds := apiKinds()
	pools := kinds[1]
	for _, doc := range []struct{ name, raw string }{
		{"not JSON", `{not json`}, {"empty", ``}, {"truncated", `{"apiVersion":`},
		{"nested 10000 levels", `{"a":` + deepJSON(10_000) + `}`}, {"binary", "\x00\xff\x01"},
	} {
		for _, field := range []string{"config", "tuningConfig"} {
			np := pools.valid(pools.fresh).(*v1alpha1.NodePool)
			bad := []runtime.RawExtension{{Raw: []byte(doc.raw)}}
			if field == "config" {
				np.Spec.Config = bad
			} else {
				np.Spec.TuningConfig = bad
			}
			body := protobufBody(t, np)
			name := fmt.Sprintf("nodepools/protobuf %s %s", field, doc.name)
			probes = append(probes,
				probe{name: name + "/create", method: http.MethodPost, path: collectionPath(pools),
					header: header("application/vnd.kubernetes.protobuf"), body: body},
				probe{name: name + "/create dry-run", method: http.MethodPost, path: collectionPath(pools) + "?dryRun=All",
					header: header("application/vnd.kubernetes.protobuf"), body: body},
			)
			existing := pools.valid(pools.existing).(*v1alpha1.NodePool)
			existing.Spec.Config, existing.Spec.TuningConfig = np.Spec.Config, np.Spec.TuningConfig
			probes = append(probes, probe{name: name + "/update", method: http.MethodPut, path: objectPath(pools, pools.existing),
				header: header("application/vnd.kubernetes.protobuf"), body: protobufBody(t, existing)})
		}
	}
	// Every kind in protobuf with its resourceVersion set on create.
	for _, k := range kinds {
		obj := k.valid(k.fresh)
		obj.(metav1.Object).SetResourceVersion("7")
		probes = append(probes, probe{name: k.resource + "/protobuf create with resourceVersion", method: http.MethodPost,
			path: collectionPath(k), header: header("application/vnd.kubernetes.protobuf"), body: protobufBody(t, obj)})
	}
	return probes
}
