package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// Requests that a careless or hostile client sends: each is the client's mistake, so each gets a 4xx
// Status that says what is wrong, and none costs the server more than reading the body.

// hostileKind is one resource of the API with a valid object of its kind.
type hostileKind struct {
	resource   string
	namespaced bool
	// object returns a valid object of the kind in namespace ns (ignored when cluster-scoped) under a
	// fresh name; node pools and credentials belong to the Succeeded cluster "dev" in ns.
	object func(ns string) runtime.Object
}

var hostileKinds = []hostileKind{
	{resource: "hcpclusters", namespaced: true, object: func(ns string) runtime.Object {
		return withKind(fixtures.HCPCluster(ns, "c-"+shortID()), "HCPCluster")
	}},
	{resource: "nodepools", namespaced: true, object: func(ns string) runtime.Object {
		return withKind(fixtures.NodePool(ns, "dev", "p"+shortID()), "NodePool")
	}},
	{resource: "breakglasscredentials", namespaced: true, object: func(ns string) runtime.Object {
		return withKind(fixtures.BreakglassCredential(ns, "dev", "b-"+shortID()), "BreakglassCredential")
	}},
	{resource: "managementclusters", object: func(string) runtime.Object {
		mc := fixtures.ManagementCluster("hostile-" + shortID())
		// Never a home for the clusters of other tests.
		mc.Spec.Schedulable = ptr.To(false)
		return withKind(mc, "ManagementCluster")
	}},
	{resource: "armsubscriptions", object: func(string) runtime.Object {
		return withKind(&v1alpha1.ARMSubscription{
			ObjectMeta: metav1.ObjectMeta{Name: string(uuid.NewUUID())},
			Spec: v1alpha1.ARMSubscriptionSpec{
				State: v1alpha1.ARMSubscriptionRegistered, RegistrationDate: "Thu, 01 Oct 2026 12:00:00 GMT",
				Properties: &v1alpha1.ARMSubscriptionProperties{TenantID: "00000000-0000-0000-0000-00000000000a"},
			},
		}, "ARMSubscription")
	}},
	{resource: "armoperations", object: func(string) runtime.Object {
		return withKind(&v1alpha1.ARMOperation{
			ObjectMeta: metav1.ObjectMeta{Name: string(uuid.NewUUID())},
			Spec: v1alpha1.ARMOperationSpec{
				Request:        v1alpha1.ARMOperationCreate,
				ResourceID:     "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/Dev-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev",
				SubscriptionID: "00000000-0000-0000-0000-000000000001",
				Location:       "eastus",
				Target:         v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: "arm-dev-rg-0123456789abcdef", Name: "dev", UID: "uid-1", Generation: 1},
			},
		}, "ARMOperation")
	}},
}

func shortID() string { return string(uuid.NewUUID())[:8] }

func withKind(obj runtime.Object, kind string) runtime.Object {
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kind))
	return obj
}

// collection is the path of the kind's objects in ns.
func (k hostileKind) collection(ns string) string {
	if k.namespaced {
		return fmt.Sprintf("/apis/hcp.aro.azure.com/v1alpha1/namespaces/%s/%s", ns, k.resource)
	}
	return "/apis/hcp.aro.azure.com/v1alpha1/" + k.resource
}

// hostileNamespace returns a namespace with the Succeeded cluster "dev" that node pools and credentials
// need.
func hostileNamespace(t *testing.T) string {
	ns := namespace(t)
	createCluster(t, ns, "dev")
	succeeded(t, ns, "dev")
	return ns
}

// createRaw creates obj through JSON and returns its name, deleting it when the test ends.
func createRaw(t *testing.T, k hostileKind, ns string, obj runtime.Object) string {
	t.Helper()
	body, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if resp := send(t, http.MethodPost, k.collection(ns), "application/json", body); resp.code != http.StatusCreated {
		t.Fatalf("creating a %s: %d %q", k.resource, resp.code, resp.status.Message)
	}
	name := obj.(metav1.Object).GetName()
	t.Cleanup(func() {
		send(t, http.MethodDelete, k.collection(ns)+"/"+name, "", nil)
	})
	return name
}

type response struct {
	code    int
	status  metav1.Status
	elapsed time.Duration
	// err is the transport's error: a handler that panicked resets the stream.
	err error
}

// send is rawRequest that reports a broken connection instead of failing, and gives up after 10 s.
func send(t *testing.T, method, path, contentType string, body []byte) response {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, server.Config.Host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return response{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	// A watch that was accepted streams: its first bytes are enough.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	out := response{code: resp.StatusCode, elapsed: time.Since(start)}
	if err != nil && resp.StatusCode != http.StatusOK {
		out.err = err
	}
	_ = json.Unmarshal(data, &out.status)
	return out
}

func (r response) String() string {
	if r.err != nil {
		return fmt.Sprintf("no response: %v", r.err)
	}
	return fmt.Sprintf("%d %s %q", r.code, r.status.Reason, r.status.Message)
}

// nested returns a JSON value nested depth levels deep: {"a":{"a":...}}.
func nested(depth int) []byte {
	return []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
}

// protobufClient speaks protobuf, whose node pool documents are bytes the JSON decoder never checked.
func protobufClient(t *testing.T) versioned.Interface {
	cfg := rest.CopyConfig(server.Config)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeProtobuf, runtime.ContentTypeProtobuf
	c, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNodePoolDocumentsAreCheckedOnEveryWireFormat(t *testing.T) {
	ctx, ns := context.Background(), hostileNamespace(t)
	pb, js := protobufClient(t).HcpV1alpha1().NodePools(ns), client().HcpV1alpha1().NodePools(ns)
	machineConfig := []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"ssh"}}`)
	large := []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"large"},"spec":{"padding":"` +
		strings.Repeat("x", validation.MaxConfigDocumentBytes) + `"}}`)
	existing, err := js.Create(ctx, fixtures.NodePool(ns, "dev", "existing"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		// protobuf sends the pool over protobuf, JSON otherwise.
		protobuf bool
		config   []runtime.RawExtension
		tuning   []runtime.RawExtension
		want     string
		// invalid says the refusal is validation's 422, not the decoder's 400.
		invalid bool
	}{
		{"protobuf, config not JSON", true, []runtime.RawExtension{{Raw: machineConfig}, {Raw: []byte(`{"kind":`)}}, nil,
			"spec.config[1]: Invalid value: must be a JSON object", false},
		{"protobuf, tuningConfig not JSON", true, nil, []runtime.RawExtension{{Raw: []byte("\x00\x01binary")}},
			"spec.tuningConfig[0]: Invalid value: must be a JSON object", false},
		{"protobuf, config of empty bytes", true, []runtime.RawExtension{{Raw: []byte{}}}, nil,
			"spec.config[0]: Invalid value: must be a JSON object", false},
		{"protobuf, config 9,985 levels deep", true, []runtime.RawExtension{{Raw: nested(9985)}}, nil,
			"spec.config[0]: Invalid value: must nest objects and arrays at most 100 levels deep", true},
		{"protobuf, config over 256 KiB", true, []runtime.RawExtension{{Raw: large}}, nil,
			"spec.config[0]: Invalid value: must be at most 262144 bytes", true},
		{"JSON, config over 256 KiB", false, []runtime.RawExtension{{Raw: machineConfig}, {Raw: large}}, nil,
			"spec.config[1]: Invalid value: must be at most 262144 bytes", true},
		{"JSON, config 9,985 levels deep", false, []runtime.RawExtension{{Raw: nested(9985)}}, nil,
			"the request body nests JSON objects and arrays deeper than 100 levels", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := js
			if tc.protobuf {
				c = pb
			}
			pool := fixtures.NodePool(ns, "dev", "bad")
			pool.Spec.Config, pool.Spec.TuningConfig = tc.config, tc.tuning
			want := wantBadRequest
			if tc.invalid {
				want = wantInvalid
			}
			_, err := c.Create(ctx, pool, metav1.CreateOptions{})
			want(t, "create", err, tc.want)
			_, err = c.Create(ctx, pool, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			want(t, "dry-run create", err, tc.want)

			// The newest version, which controllers write too, so that only the documents are wrong.
			update, err := js.Get(ctx, existing.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			update.Spec.Config, update.Spec.TuningConfig = tc.config, tc.tuning
			_, err = c.Update(ctx, update, metav1.UpdateOptions{})
			want(t, "update", err, tc.want)
		})
	}

	// The documents that a pool had stay as they were.
	got, err := js.Get(ctx, existing.Name, metav1.GetOptions{})
	if err != nil || len(got.Spec.Config) != 0 {
		t.Errorf("after refused updates the pool has config %v (err %v)", got.Spec.Config, err)
	}
	if _, err := js.Get(ctx, "dev.bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused pool: get answered %v, want 404", err)
	}
	// What validation says of a document that is JSON still holds over protobuf.
	pool := fixtures.NodePool(ns, "dev", "array")
	pool.Spec.Config = []runtime.RawExtension{{Raw: []byte(`["MachineConfig"]`)}}
	if _, err := pb.Create(ctx, pool, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.config[0]") {
		t.Errorf("a config document that is a JSON array: %v, want 422 at spec.config[0]", err)
	}
}

func wantInvalid(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want 422 Invalid saying %q", what, err, want)
	}
}

func wantBadRequest(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want 400 Bad Request saying %q", what, err, want)
	}
}

func TestCreateWithResourceVersionIsBadRequest(t *testing.T) {
	ns := hostileNamespace(t)
	const want = `metadata.resourceVersion: Invalid value: "12345": must be empty when creating`
	for _, k := range hostileKinds {
		t.Run(k.resource, func(t *testing.T) {
			obj := k.object(ns)
			obj.(metav1.Object).SetResourceVersion("12345")
			body, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{k.collection(ns), k.collection(ns) + "?dryRun=All"} {
				resp := send(t, http.MethodPost, path, "application/json", body)
				if resp.code != http.StatusBadRequest || !strings.Contains(resp.status.Message, want) {
					t.Errorf("POST %s: %s, want 400 saying %q", path, resp, want)
				}
			}
			// None of the kinds creates on PUT: a PUT to a missing name is 404, whatever it carries.
			name := obj.(metav1.Object).GetName()
			if resp := send(t, http.MethodPut, k.collection(ns)+"/"+name, "application/json", body); resp.code != http.StatusNotFound {
				t.Errorf("PUT to a missing %s: %s, want 404", k.resource, resp)
			}
			// A server-side apply that creates ignores the resourceVersion, as kube-apiserver does.
			path := k.collection(ns) + "/" + name + "?fieldManager=m"
			if resp := send(t, http.MethodPatch, path, "application/apply-patch+yaml", body); resp.err != nil || resp.code >= 500 {
				t.Errorf("apply to a missing %s: %s, want no 5xx", k.resource, resp)
			}
		})
	}
}

func TestDeepBodiesAreRefusedAtOnce(t *testing.T) {
	ns := hostileNamespace(t)
	clusters := hostileKinds[0].collection(ns)
	// Just under encoding/json's own limit of 10,000 levels, which refuses deeper bodies but only once it
	// parsed them.
	const depth = 9990
	deepObject := []byte(`{"apiVersion":"hcp.aro.azure.com/v1alpha1","kind":"HCPCluster","metadata":{"name":"deep"},"spec":` + string(nested(depth)) + `}`)
	deepPatch := []byte(`{"metadata":{"labels":` + string(nested(depth)) + `}}`)
	deepJSONPatch := []byte(`[{"op":"add","path":"/metadata/labels","value":` + string(nested(depth)) + `}]`)
	const want = "the request body nests JSON objects and arrays deeper than 100 levels"
	for _, tc := range []struct {
		name, method, path, contentType string
		body                            []byte
	}{
		{"create", http.MethodPost, clusters, "application/json", deepObject},
		{"create, charset given", http.MethodPost, clusters, "application/json; charset=utf-8", deepObject},
		{"update", http.MethodPut, clusters + "/dev", "application/json", deepObject},
		{"merge patch", http.MethodPatch, clusters + "/dev", "application/merge-patch+json", deepPatch},
		{"strategic merge patch", http.MethodPatch, clusters + "/dev", "application/strategic-merge-patch+json", deepPatch},
		{"JSON patch", http.MethodPatch, clusters + "/dev", "application/json-patch+json", deepJSONPatch},
		{"status merge patch", http.MethodPatch, clusters + "/dev/status", "application/merge-patch+json", deepPatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, tc.method, tc.path, tc.contentType, tc.body)
			if resp.code != http.StatusBadRequest || !strings.Contains(resp.status.Message, want) {
				t.Errorf("%s: %s, want 400 saying %q", tc.name, resp, want)
			}
			if resp.elapsed > time.Second {
				t.Errorf("%s took %v, want it refused in under a second", tc.name, resp.elapsed)
			}
		})
	}
	// A body as deep as the limit is read as usual.
	atLimit := []byte(`{"metadata":{"annotations":{"deep":"` + strings.Repeat("[", 200) + `"}}}`)
	if resp := send(t, http.MethodPatch, clusters+"/dev", "application/merge-patch+json", atLimit); resp.code != http.StatusOK {
		t.Errorf("a merge patch with brackets inside a string: %s, want 200", resp)
	}
}

func TestReadsAtAFutureResourceVersionAreBadRequest(t *testing.T) {
	ns := hostileNamespace(t)
	const want = `resourceVersion: Invalid value: "999999999999": must not be newer than the newest resourceVersion`
	for _, k := range hostileKinds {
		t.Run(k.resource, func(t *testing.T) {
			name := createRaw(t, k, ns, k.object(ns))
			for _, path := range []string{
				k.collection(ns) + "?watch=1&resourceVersion=999999999999",
				k.collection(ns) + "?watch=1&resourceVersion=999999999999&allowWatchBookmarks=true",
				k.collection(ns) + "?resourceVersion=999999999999",
				k.collection(ns) + "?resourceVersion=999999999999&resourceVersionMatch=NotOlderThan",
				k.collection(ns) + "?resourceVersion=999999999999&resourceVersionMatch=Exact",
				k.collection(ns) + "/" + name + "?resourceVersion=999999999999",
			} {
				resp := send(t, http.MethodGet, path, "", nil)
				if resp.code != http.StatusBadRequest || !strings.Contains(resp.status.Message, want) {
					t.Errorf("GET %s: %s, want 400 saying %q", path, resp, want)
				}
				if resp.elapsed > 2*time.Second {
					t.Errorf("GET %s took %v", path, resp.elapsed)
				}
			}
		})
	}

	// The newest resourceVersion itself is no mistake.
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	list, err := clusters.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := clusters.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("a watch at the list's resourceVersion %s: %v", list.ResourceVersion, err)
	}
	w.Stop()
}

// TestMalformedRequestsGet4xx sends every kind what a broken client might, and wants a 4xx Status for
// each: never a 5xx, never a broken connection. (What kube-apiserver accepts by design is not here: no
// Content-Type is JSON, garbage managedFields are reset, ?watch=perhaps lists, a fieldManager is any
// string.)
func TestMalformedRequestsGet4xx(t *testing.T) {
	ns := hostileNamespace(t)
	for _, k := range hostileKinds {
		t.Run(k.resource, func(t *testing.T) {
			valid := k.object(ns)
			name := createRaw(t, k, ns, valid)
			fresh, err := json.Marshal(k.object(ns))
			if err != nil {
				t.Fatal(err)
			}
			// edit returns a fresh object's JSON with the top-level fields given replaced.
			edit := func(fields map[string]string) []byte {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(fresh, &m); err != nil {
					t.Fatal(err)
				}
				for f, v := range fields {
					m[f] = json.RawMessage(v)
				}
				out, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			metadata := func(s string) []byte { return edit(map[string]string{"metadata": s}) }
			collection, object := k.collection(ns), k.collection(ns)+"/"+name
			const js, merge = "application/json", "application/merge-patch+json"
			for _, tc := range []struct {
				name, method, path, contentType string
				body                            []byte
			}{
				{"spec a string", http.MethodPost, collection, js, edit(map[string]string{"spec": `"big"`})},
				{"spec an array", http.MethodPost, collection, js, edit(map[string]string{"spec": `[1,2]`})},
				{"metadata a number", http.MethodPost, collection, js, edit(map[string]string{"metadata": `5`})},
				{"name a number", http.MethodPost, collection, js, metadata(`{"name":5}`)},
				{"labels a string", http.MethodPost, collection, js, metadata(`{"name":"x","labels":"a=b"}`)},
				{"generation a string", http.MethodPost, collection, js, metadata(`{"name":"x","generation":"3"}`)},
				{"generation 1e400", http.MethodPost, collection, js, metadata(`{"name":"x","generation":1e400}`)},
				{"generation 1e20", http.MethodPost, collection, js, metadata(`{"name":"x","generation":1e20}`)},
				{"generation 1.5", http.MethodPost, collection, js, metadata(`{"name":"x","generation":1.5}`)},
				{"creationTimestamp not a time", http.MethodPost, collection, js, metadata(`{"name":"x","creationTimestamp":"yesterday"}`)},
				{"ownerReferences without uid", http.MethodPost, collection, js, metadata(`{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"y"}]}`)},
				{"finalizer invalid", http.MethodPost, collection, js, metadata(`{"name":"x","finalizers":["../.."]}`)},
				{"name of 300 characters", http.MethodPost, collection, js, metadata(`{"name":"` + strings.Repeat("a", 300) + `"}`)},
				{"name ..", http.MethodPost, collection, js, metadata(`{"name":".."}`)},
				{"name with %", http.MethodPost, collection, js, metadata(`{"name":"a%2fb"}`)},
				{"name with /", http.MethodPost, collection, js, metadata(`{"name":"a/b"}`)},
				{"name invalid UTF-8", http.MethodPost, collection, js, metadata("{\"name\":\"a\xff\xfeb\"}")},
				{"label invalid UTF-8", http.MethodPost, collection, js, metadata("{\"name\":\"x\",\"labels\":{\"a\":\"\xff\"}}")},
				{"annotation key empty", http.MethodPost, collection, js, metadata(`{"name":"x","annotations":{"":"v"}}`)},
				{"body null", http.MethodPost, collection, js, []byte(`null`)},
				{"body empty", http.MethodPost, collection, js, nil},
				{"body an array", http.MethodPost, collection, js, []byte(`[]`)},
				{"body a string", http.MethodPost, collection, js, []byte(`"HCPCluster"`)},
				{"body a number", http.MethodPost, collection, js, []byte(`1e400`)},
				{"body invalid UTF-8", http.MethodPost, collection, js, []byte("\xff\xfe{}")},
				{"body YAML nested 10,000 deep", http.MethodPost, collection, "application/yaml", []byte("spec: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000))},
				{"body protobuf of random bytes", http.MethodPost, collection, runtime.ContentTypeProtobuf, []byte("\x93\x01\xfe\x00garbage\xff")},
				{"body protobuf, magic then random bytes", http.MethodPost, collection, runtime.ContentTypeProtobuf, []byte("k8s\x00\x0a\xff\xff\xff\xff\x0f\x12garbage")},
				{"body protobuf, magic only", http.MethodPost, collection, runtime.ContentTypeProtobuf, []byte("k8s\x00")},
				{"body CBOR of random bytes", http.MethodPost, collection, "application/cbor", []byte("\xd9\xd9\xf7\xff\x00")},
				{"unknown content type", http.MethodPost, collection, "application/x-unknown", fresh},
				{"content type malformed", http.MethodPost, collection, "application/json; ;;=", fresh},
				{"kind of another group", http.MethodPost, collection, js, edit(map[string]string{"apiVersion": `"v1"`, "kind": `"Pod"`})},
				{"apiVersion malformed", http.MethodPost, collection, js, edit(map[string]string{"apiVersion": `"a/b/c"`})},
				{"dryRun invalid", http.MethodPost, collection + "?dryRun=Maybe", js, fresh},
				{"fieldValidation invalid", http.MethodPost, collection + "?fieldValidation=Loose", js, fresh},
				{"fieldManager too long", http.MethodPost, collection + "?fieldManager=" + strings.Repeat("m", 300), js, fresh},
				{"parameter twice", http.MethodPost, collection + "?dryRun=All&dryRun=All&dryRun=Maybe", js, fresh},

				{"put body null", http.MethodPut, object, js, []byte(`null`)},
				{"put body empty", http.MethodPut, object, js, nil},
				{"put another name", http.MethodPut, object, js, fresh},
				{"put spec a number", http.MethodPut, object, js, edit(map[string]string{"metadata": `{"name":"` + name + `"}`, "spec": `1e400`})},
				{"put protobuf of random bytes", http.MethodPut, object, runtime.ContentTypeProtobuf, []byte("k8s\x00\x0a\x05hello")},

				{"merge patch null", http.MethodPatch, object, merge, []byte(`null`)},
				{"merge patch empty", http.MethodPatch, object, merge, nil},
				{"merge patch an array", http.MethodPatch, object, merge, []byte(`[1]`)},
				{"merge patch spec a string", http.MethodPatch, object, merge, []byte(`{"spec":"x"}`)},
				{"merge patch spec 1e400", http.MethodPatch, object, merge, []byte(`{"spec":1e400}`)},
				{"merge patch name", http.MethodPatch, object, merge, []byte(`{"metadata":{"name":"other"}}`)},
				{"merge patch uid", http.MethodPatch, object, merge, []byte(`{"metadata":{"uid":"other"}}`)},
				{"merge patch invalid UTF-8", http.MethodPatch, object, merge, []byte("{\"metadata\":{\"labels\":{\"a\":\"\xff\"}}}")},
				{"merge patch status a number", http.MethodPatch, object + "/status", merge, []byte(`{"status":1}`)},
				{"strategic merge patch with a directive", http.MethodPatch, object, "application/strategic-merge-patch+json", []byte(`{"spec":{"$patch":"replace"}}`)},
				{"JSON patch not a list", http.MethodPatch, object, "application/json-patch+json", []byte(`{"op":"add"}`)},
				{"JSON patch unknown op", http.MethodPatch, object, "application/json-patch+json", []byte(`[{"op":"explode","path":"/spec"}]`)},
				{"JSON patch bad path", http.MethodPatch, object, "application/json-patch+json", []byte(`[{"op":"replace","path":"/spec/~9/x","value":1}]`)},
				{"JSON patch index out of range", http.MethodPatch, object, "application/json-patch+json", []byte(`[{"op":"add","path":"/metadata/finalizers/99999999999","value":"x"}]`)},
				{"JSON patch test fails", http.MethodPatch, object, "application/json-patch+json", []byte(`[{"op":"test","path":"/metadata/name","value":"other"}]`)},
				{"JSON patch copy of the whole object into itself", http.MethodPatch, object, "application/json-patch+json", []byte(`[{"op":"copy","from":"","path":"/spec/x"}]`)},
				{"JSON patch replace the root", http.MethodPatch, object, "application/json-patch+json", []byte(`[{"op":"replace","path":"","value":null}]`)},
				{"apply without fieldManager", http.MethodPatch, object, "application/apply-patch+yaml", []byte(`{}`)},
				{"apply of a list", http.MethodPatch, object + "?fieldManager=m", "application/apply-patch+yaml", []byte(`[1]`)},
				{"apply of null", http.MethodPatch, object + "?fieldManager=m", "application/apply-patch+yaml", []byte(`null`)},
				{"apply of another kind", http.MethodPatch, object + "?fieldManager=m", "application/apply-patch+yaml", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"}}`)},
				{"apply, spec a string", http.MethodPatch, object + "?fieldManager=m", "application/apply-patch+yaml", []byte(`{"apiVersion":"hcp.aro.azure.com/v1alpha1","kind":"` + valid.GetObjectKind().GroupVersionKind().Kind + `","metadata":{"name":"` + name + `"},"spec":"x"}`)},
				{"apply with force invalid", http.MethodPatch, object + "?fieldManager=m&force=maybe", "application/apply-patch+yaml", []byte(`{}`)},
				{"patch of an unknown type", http.MethodPatch, object, "application/x-patch", []byte(`{}`)},

				{"label selector malformed", http.MethodGet, collection + "?labelSelector=a%20in%20(", "", nil},
				{"label selector invalid value", http.MethodGet, collection + "?labelSelector=a=" + strings.Repeat("v", 100), "", nil},
				{"field selector unknown field", http.MethodGet, collection + "?fieldSelector=spec.colour=blue", "", nil},
				{"field selector malformed", http.MethodGet, collection + "?fieldSelector=%3D%3D%3D", "", nil},
				{"watch with malformed label selector", http.MethodGet, collection + "?watch=1&labelSelector=!!", "", nil},
				{"continue token garbage", http.MethodGet, collection + "?limit=1&continue=garbage", "", nil},
				{"continue token base64 garbage", http.MethodGet, collection + "?limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTUsInN0YXJ0IjoiLi4vLi4vIn0", "", nil},
				{"continue token with resourceVersion", http.MethodGet, collection + "?limit=1&continue=x&resourceVersion=1", "", nil},
				{"limit negative", http.MethodGet, collection + "?limit=-1&resourceVersion=0&resourceVersionMatch=Exact", "", nil},
				{"limit huge", http.MethodGet, collection + "?limit=99999999999999999999", "", nil},
				{"resourceVersion negative", http.MethodGet, collection + "?resourceVersion=-1", "", nil},
				{"resourceVersionMatch without resourceVersion", http.MethodGet, collection + "?resourceVersionMatch=Exact", "", nil},
				{"resourceVersionMatch unknown", http.MethodGet, collection + "?resourceVersion=1&resourceVersionMatch=Newest", "", nil},
				{"timeoutSeconds a word", http.MethodGet, collection + "?watch=1&timeoutSeconds=soon", "", nil},
				{"sendInitialEvents without watch", http.MethodGet, collection + "?sendInitialEvents=true", "", nil},
				{"get with a 300-character name", http.MethodGet, collection + "/" + strings.Repeat("a", 300), "", nil},
				{"get with %2e%2e", http.MethodGet, collection + "/%2e%2e", "", nil},
				{"get with %25", http.MethodGet, collection + "/a%25b", "", nil},
				{"get with %2f", http.MethodGet, collection + "/a%2fb", "", nil},
				{"get with invalid UTF-8", http.MethodGet, collection + "/a%ff", "", nil},
				{"get of an unknown subresource", http.MethodGet, object + "/explode", "", nil},
				{"delete with propagationPolicy unknown", http.MethodDelete, object + "?propagationPolicy=Sideways", "", nil},
				{"delete with gracePeriodSeconds a word", http.MethodDelete, object + "?gracePeriodSeconds=soon", "", nil},
				{"delete with a body of the wrong kind", http.MethodDelete, object, js, fresh},
				{"delete with preconditions of another uid", http.MethodDelete, object, js, []byte(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"other"}}`)},
				{"delete collection with malformed selector", http.MethodDelete, collection + "?labelSelector=a%20in%20(", "", nil},
			} {
				resp := send(t, tc.method, tc.path, tc.contentType, tc.body)
				if resp.err != nil || resp.code < 400 || resp.code >= 500 {
					t.Errorf("%s: %s, want a 4xx Status", tc.name, resp)
				}
			}
		})
	}
}
