package frontend

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	hcplisters "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

const (
	testSub      = "0B1E2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D"
	testAPI      = "2026-09-01-preview"
	testRGPath   = "/subscriptions/" + testSub + "/resourceGroups/Dev-RG"
	testCluster  = testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev-Cluster"
	testNodePool = testCluster + "/nodePools/Workers"
	testTenant   = "11111111-2222-3333-4444-555555555555"
	testObjectID = "66666666-7777-8888-9999-000000000000"
	testReferer  = "https://management.azure.com"
)

// minimalClusterBody is enough for the conversion; the values are the API's to validate, which the
// fake clientset does not.
const minimalClusterBody = `{"location": "East US", "properties": {"version": {"id": "4.20"}, "platform": {"subnetId": "s", "networkSecurityGroupId": "n"}}}`

const minimalNodePoolBody = `{"location": "eastus", "properties": {"platform": {"vmSize": "Standard_D8s_v3"}, "replicas": 2}}`

func subscription(state hcpv1alpha1.ARMSubscriptionState) *hcpv1alpha1.ARMSubscription {
	return &hcpv1alpha1.ARMSubscription{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(testSub)},
		Spec:       hcpv1alpha1.ARMSubscriptionSpec{State: state, Properties: &hcpv1alpha1.ARMSubscriptionProperties{TenantID: testTenant}},
	}
}

// newFakeClient is the simple clientset (the field-managed one wants a schema of every type, which the
// tests do not need), recording the ARM operation a create asks for as hcp-apiserver does: taken off the
// object and created beside it, following it (TestAgainstHCPAPIServer has the server's own).
func newFakeClient(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewSimpleClientset(objs...) //nolint:staticcheck
	client.PrependReactor("create", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := meta.Accessor(action.(clienttesting.CreateAction).GetObject())
		if err != nil {
			return false, nil, nil
		}
		value, ok := obj.GetAnnotations()[hcpv1alpha1.ARMOperationAnnotation]
		if !ok {
			return false, nil, nil
		}
		// The server writes the operation in the object's transaction: a name taken fails both.
		if _, err := client.Tracker().Get(action.GetResource(), action.GetNamespace(), obj.GetName()); err == nil {
			return false, nil, nil
		}
		annotations := maps.Clone(obj.GetAnnotations())
		delete(annotations, hcpv1alpha1.ARMOperationAnnotation)
		obj.SetAnnotations(annotations)
		var op hcpv1alpha1.ARMOperation
		if err := json.Unmarshal([]byte(value), &op); err != nil {
			return true, nil, err
		}
		op.Spec.Target = target(action.GetResource().Resource, obj)
		op.Status.State = hcpv1alpha1.ARMOperationAccepted
		return false, nil, client.Tracker().Create(hcpv1alpha1.SchemeGroupVersion.WithResource("armoperations"), &op, "")
	})
	return client
}

func newTestFrontend(t *testing.T, objs ...runtime.Object) (*Frontend, *fake.Clientset) {
	t.Helper()
	client := newFakeClient(objs...)
	f, err := New(Config{Client: client, Location: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	return f, client
}

// call sends an ARM request as ARM would: with a Referer on management.azure.com, the caller's tenant
// and object ID, and a JSON body.
func call(f *Frontend, method, target, body string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Referer", testReferer+target)
	r.Header.Set(headerHomeTenantID, testTenant)
	r.Header.Set(headerClientObjectID, testObjectID)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			r.Header.Del(headers[i])
		} else {
			r.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, r)
	return rec
}

func cloudError(t *testing.T, rec *httptest.ResponseRecorder) CloudErrBody {
	t.Helper()
	var ce CloudError
	if err := json.Unmarshal(rec.Body.Bytes(), &ce); err != nil {
		t.Fatalf("body %q is not a CloudError: %v", rec.Body, err)
	}
	return ce.Body
}

func TestRouting(t *testing.T) {
	f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	tests := []struct {
		name    string
		method  string
		target  string
		body    string
		headers []string
		status  int
		code    string
		message string
		// errTarget is the error's target, checked when the case names a message.
		errTarget string
	}{
		{name: "operations list, any case, no api-version", method: "GET", target: "/PROVIDERS/microsoft.redhatopenshift/Operations", status: 200},
		{name: "cluster path in upper case and query key in upper case", method: "GET",
			target: strings.ToUpper(testCluster) + "?API-VERSION=" + testAPI, status: 404, code: CodeResourceNotFound,
			message: "The resource 'hcpOpenShiftClusters/DEV-CLUSTER' under resource group 'DEV-RG' was not found.",
			// The names as the caller spelled them, the path's fixed words as the contract spells them.
			errTarget: "/subscriptions/" + testSub + "/resourceGroups/DEV-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/DEV-CLUSTER"},
		{name: "node pool in lower case", method: "GET", target: strings.ToLower(testNodePool) + "?api-version=" + testAPI,
			status: 404, code: CodeResourceNotFound},
		{name: "node pool of a missing cluster", method: "GET", target: testNodePool + "?api-version=" + testAPI, status: 404, code: CodeResourceNotFound,
			message:   "The resource 'hcpOpenShiftClusters/nodePools/Workers' under resource group 'Dev-RG' was not found.",
			errTarget: testNodePool},
		{name: "unrouted", method: "GET", target: "/subscriptions/" + testSub + "/somethingElse?api-version=" + testAPI, status: 404, code: CodeNotFound,
			message: "The requested path could not be found."},
		// The public frontend's catch-all route answers every method: a path served for other methods is not found.
		{name: "method not routed", method: "POST", target: testCluster + "?api-version=" + testAPI, status: 404, code: CodeNotFound,
			message: "The requested path could not be found."},
		{name: "collection PUT", method: "PUT", target: testCluster + "/nodePools?api-version=" + testAPI, body: "{}", status: 404, code: CodeNotFound},
		{name: "external auth of a missing cluster", method: "PUT", target: testAuth + "?api-version=" + testAPI,
			body: minimalExternalAuthBody, status: 404, code: CodeResourceNotFound,
			message:   "The resource 'hcpOpenShiftClusters/Dev-Cluster' under resource group 'Dev-RG' was not found.",
			errTarget: testCluster},
		{name: "external auth list in lower case", method: "GET", target: strings.ToLower(testCluster) + "/externalauths?api-version=" + testAPI,
			status: 404, code: CodeResourceNotFound},
		{name: "external auth name too long", method: "GET", target: testCluster + "/externalAuths/" + strings.Repeat("e", 16) + "?api-version=" + testAPI,
			status: 400, code: CodeInvalidResourceName},
		{name: "missing api-version", method: "GET", target: testCluster, status: 400, code: CodeInvalidParameter},
		{name: "unknown api-version", method: "GET", target: testCluster + "?api-version=2020-01-01", status: 400, code: CodeInvalidResourceType,
			message: "The resource type 'hcpOpenShiftClusters' could not be found API version '2020-01-01'."},
		{name: "subscription lifecycle wants 2.0", method: "GET", target: "/subscriptions/" + testSub + "?api-version=" + testAPI,
			status: 400, code: CodeInvalidResourceType},
		{name: "subscription lifecycle with 2.0", method: "GET", target: "/subscriptions/" + testSub + "?api-version=2.0", status: 200},
		{name: "body that is not JSON", method: "PUT", target: testCluster + "?api-version=" + testAPI, body: "x",
			headers: []string{"Content-Type", "text/plain"}, status: 415, code: CodeUnsupportedMediaType},
		{name: "JSON with a charset", method: "PUT", target: testCluster + "?api-version=" + testAPI, body: minimalClusterBody,
			headers: []string{"Content-Type", "application/json; charset=utf-8"}, status: 201},
		{name: "body over 4 MiB", method: "PUT", target: testCluster + "?api-version=" + testAPI,
			body: `{"tags":{"a":"` + strings.Repeat("x", maxBodyBytes) + `"}}`, status: 400, code: CodeInvalidResource},
		{name: "versions of another region", method: "GET",
			target: "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/westus/hcpOpenShiftVersions?api-version=" + testAPI,
			status: 404, code: CodeNotFound},
		{name: "health", method: "GET", target: "/healthz", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(f, tt.method, tt.target, tt.body, tt.headers...)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.status, rec.Body)
			}
			if _, err := uuid.Parse(rec.Header().Get(headerRequestID)); err != nil {
				t.Errorf("x-ms-request-id %q is not a UUID", rec.Header().Get(headerRequestID))
			}
			if tt.code == "" {
				return
			}
			ce := cloudError(t, rec)
			if ce.Code != tt.code {
				t.Errorf("code = %q, want %q (%s)", ce.Code, tt.code, ce.Message)
			}
			if tt.message != "" && ce.Message != tt.message {
				t.Errorf("message = %q, want %q", ce.Message, tt.message)
			}
			if tt.message != "" && ce.Target != tt.errTarget {
				t.Errorf("target = %q, want %q", ce.Target, tt.errTarget)
			}
		})
	}
}

func TestClientRequestIDEcho(t *testing.T) {
	f, _ := newTestFrontend(t)
	target := "/providers/Microsoft.RedHatOpenShift/operations"
	if got := call(f, "GET", target, "", headerClientRequestID, "abc").Header().Get(headerClientRequestID); got != "" {
		t.Errorf("x-ms-client-request-id echoed without being asked: %q", got)
	}
	got := call(f, "GET", target, "", headerClientRequestID, "abc", headerReturnClientRequestID, "True").Header().Get(headerClientRequestID)
	if got != "abc" {
		t.Errorf("x-ms-client-request-id = %q, want it echoed", got)
	}
}

func TestSubscriptionGating(t *testing.T) {
	type want struct {
		status int
		gated  bool // refused with InvalidSubscriptionState (or 500 for an unknown state)
	}
	// What an empty store answers once a request is let through.
	allowed := map[string]int{"GET": 404, "PUT": 201, "PATCH": 404, "DELETE": 204, "POST": 404}
	methods := []string{"GET", "PUT", "PATCH", "DELETE", "POST"}
	refuse := func(status int) map[string]want {
		m := map[string]want{}
		for _, method := range methods {
			m[method] = want{status: status, gated: true}
		}
		return m
	}
	readAndDelete := map[string]want{
		"GET": {status: allowed["GET"]}, "DELETE": {status: allowed["DELETE"]},
		"PUT": {status: 409, gated: true}, "PATCH": {status: 409, gated: true}, "POST": {status: 409, gated: true},
	}
	open := map[string]want{}
	for _, method := range methods {
		open[method] = want{status: allowed[method]}
	}
	tests := []struct {
		state hcpv1alpha1.ARMSubscriptionState // "" is no subscription at all
		want  map[string]want
	}{
		{state: hcpv1alpha1.ARMSubscriptionRegistered, want: open},
		{state: "", want: refuse(400)},
		{state: hcpv1alpha1.ARMSubscriptionUnregistered, want: refuse(400)},
		{state: hcpv1alpha1.ARMSubscriptionWarned, want: readAndDelete},
		{state: hcpv1alpha1.ARMSubscriptionSuspended, want: readAndDelete},
		{state: hcpv1alpha1.ARMSubscriptionDeleted, want: refuse(400)},
		{state: "Bogus", want: refuse(500)},
	}
	for _, tt := range tests {
		for _, method := range methods {
			name := string(tt.state)
			if name == "" {
				name = "NoSubscription"
			}
			t.Run(name+"/"+method, func(t *testing.T) {
				var objs []runtime.Object
				if tt.state != "" {
					objs = append(objs, subscription(tt.state))
				}
				f, _ := newTestFrontend(t, objs...)
				target, body := testCluster, ""
				switch method {
				case "PUT":
					body = minimalClusterBody
				case "PATCH":
					body = `{"tags":{"a":"b"}}`
				case "POST":
					target += "/requestadmincredential"
					body = `{}`
				}
				rec := call(f, method, target+"?api-version="+testAPI, body)
				w := tt.want[method]
				if rec.Code != w.status {
					t.Fatalf("status = %d, want %d; body %s", rec.Code, w.status, rec.Body)
				}
				if w.gated {
					code := cloudError(t, rec).Code
					if w.status == 500 && code != CodeInternalServerError || w.status != 500 && code != CodeInvalidSubscriptionState {
						t.Errorf("code = %q", code)
					}
				}
			})
		}
	}
	t.Run("preflight is gated", func(t *testing.T) {
		f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionSuspended))
		rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d/preflight?api-version="+testAPI, `{"resources":[]}`)
		if rec.Code != 409 || cloudError(t, rec).Code != CodeInvalidSubscriptionState {
			t.Errorf("preflight in a suspended subscription: %d %s", rec.Code, rec.Body)
		}
	})
}

func TestSubscriptionLifecycle(t *testing.T) {
	f, client := newTestFrontend(t)
	target := "/subscriptions/" + testSub + "?api-version=2.0"
	body := `{"state":"Registered","registrationDate":"2026-12-01T00:00:00Z","properties":{"tenantId":"` + testTenant + `",
		"registeredFeatures":[{"name":"Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures","state":"Registered"}]}}`
	if rec := call(f, "PUT", target, body); rec.Code != 200 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	s, err := client.HcpV1alpha1().ARMSubscriptions().Get(t.Context(), strings.ToLower(testSub), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.State != hcpv1alpha1.ARMSubscriptionRegistered || s.Spec.Properties.TenantID != testTenant || len(s.Spec.Properties.RegisteredFeatures) != 1 {
		t.Errorf("stored %+v", s.Spec)
	}
	if rec := call(f, "PUT", target, `{"state":"Suspended","registrationDate":"Tue, 01 Dec 2026 00:00:00 GMT"}`); rec.Code != 200 {
		t.Fatalf("second PUT: %d %s", rec.Code, rec.Body)
	}
	// ARM always sends the registration date; the frontend requires it, with its path.
	if rec := call(f, "PUT", target, `{"state":"Suspended"}`); rec.Code != 400 || cloudError(t, rec).Target != "registrationDate" ||
		cloudError(t, rec).Message != "Required value" {
		t.Errorf("PUT without registrationDate: %d %s, want 400 Required value at registrationDate", rec.Code, rec.Body)
	}
	rec := call(f, "GET", target, "")
	var got subscriptionDocument
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || got.State != hcpv1alpha1.ARMSubscriptionSuspended {
		t.Errorf("GET: %d %s", rec.Code, rec.Body)
	}
	// ARM's spelling, not the API's.
	if rec := call(f, "PUT", target, body); !strings.Contains(rec.Body.String(), `"tenantId":"`+testTenant+`"`) ||
		!strings.Contains(rec.Body.String(), `"registeredFeatures":[{"name":"Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures","state":"Registered"}]`) {
		t.Errorf("PUT answered %s", rec.Body)
	}
	// The properties are ARM's, stored as they come, as the frontend stores them: a tenant ID that is not a
	// GUID included.
	liberal := `{"state":"Registered","registrationDate":"2026-12-01T00:00:00Z","properties":{"tenantId":"not-a-guid",
		"managedByTenants":[{"tenantId":"also-not-a-guid"}],"registeredFeatures":[{"state":"Registered"}]}}`
	if rec := call(f, "PUT", target, liberal); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"tenantId":"not-a-guid"`) {
		t.Errorf("PUT of ARM's notification with a tenant ID that is not a GUID: %d %s, want 200 and it stored", rec.Code, rec.Body)
	}
	if rec := call(f, "GET", "/subscriptions/"+uuid.NewString()+"?api-version=2.0", ""); rec.Code != 404 {
		t.Errorf("GET of an unknown subscription: %d", rec.Code)
	}
}

func TestProviderOperations(t *testing.T) {
	f, _ := newTestFrontend(t)
	rec := call(f, "GET", "/providers/Microsoft.RedHatOpenShift/operations?api-version="+testAPI, "")
	var p struct {
		Value []providerOperation `json:"value"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	found := false
	for _, op := range p.Value {
		found = found || op.Name == "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/requestadmincredential/action"
	}
	if !found {
		t.Errorf("the list lacks requestadmincredential/action: %s", rec.Body)
	}
}

// A write right after ARM changed the subscription's state sees the new state, even while the
// informer's cache still holds the old one; a read may be answered from the cache.
func TestWritesSeeTheSubscriptionStateJustStored(t *testing.T) {
	cached := subscription(hcpv1alpha1.ARMSubscriptionRegistered)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(cached); err != nil {
		t.Fatal(err)
	}
	client := newFakeClient(subscription(hcpv1alpha1.ARMSubscriptionSuspended), storedCluster("Succeeded", false))
	f, err := New(Config{Client: client, Location: "eastus", Subscriptions: hcplisters.NewARMSubscriptionLister(indexer)})
	if err != nil {
		t.Fatal(err)
	}
	q := "?api-version=" + testAPI
	for _, write := range []struct{ method, target, body string }{
		{"PUT", testCluster + q, minimalClusterBody},
		{"PATCH", testCluster + q, `{"tags":{"a":"b"}}`},
		{"PUT", testNodePool + q, minimalNodePoolBody},
		{"POST", testCluster + "/revokecredentials" + q, ""},
	} {
		rec := call(f, write.method, write.target, write.body)
		if rec.Code != http.StatusConflict || cloudError(t, rec).Code != CodeInvalidSubscriptionState {
			t.Errorf("%s %s on a subscription just Suspended: %d %s, want 409 %s", write.method, write.target, rec.Code, rec.Body, CodeInvalidSubscriptionState)
		}
	}
	if rec := call(f, "GET", testCluster+q, ""); rec.Code != http.StatusOK {
		t.Errorf("GET on a Suspended subscription: %d %s, want 200", rec.Code, rec.Body)
	}
}

// An Azure-AsyncNotificationUri the service could not POST to is refused by the API's rule before
// anything is written.
func TestUnusableNotificationURIIsRefusedBeforeTheWrite(t *testing.T) {
	for _, uri := range []string{"ftp://arm.example/notify", "/notify", "https://", "https://arm.example/" + strings.Repeat("x", 2048)} {
		f, client := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
		rec := call(f, "PUT", testCluster+"?api-version="+testAPI, minimalClusterBody, headerAsyncNotificationURI, uri)
		if e := cloudError(t, rec); rec.Code != http.StatusBadRequest || e.Code != CodeInvalidParameter || e.Target != headerAsyncNotificationURI {
			t.Errorf("notification URI %.40q: %d %s, want 400 %s at %s", uri, rec.Code, rec.Body, CodeInvalidParameter, headerAsyncNotificationURI)
		}
		if clusters, err := client.HcpV1alpha1().HCPClusters("").List(t.Context(), metav1.ListOptions{}); err != nil || len(clusters.Items) != 0 {
			t.Errorf("notification URI %.40q: clusters %v (%v) written, want none", uri, clusters, err)
		}
	}
	f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	if rec := call(f, "PUT", testCluster+"?api-version="+testAPI, minimalClusterBody, headerAsyncNotificationURI, "https://arm.example/notify"); rec.Code != http.StatusCreated {
		t.Errorf("an https notification URI: %d %s, want 201", rec.Code, rec.Body)
	}
}
