package frontend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/aro-hcp/hcp-apiserver/test/armschema"
)

const testAuth = testCluster + "/externalAuths/Entra"

// minimalExternalAuthBody is an external auth the API accepts: a confidential and a public client,
// each an audience of the issuer.
const minimalExternalAuthBody = `{"properties": {
  "issuer": {"url": "https://login.microsoftonline.com/11111111-2222-3333-4444-555555555555/v2.0", "audiences": ["console-app", "cli-app"]},
  "clients": [
    {"component": {"name": "console", "authClientNamespace": "openshift-console"}, "clientId": "console-app", "type": "Confidential"},
    {"component": {"name": "cli", "authClientNamespace": "openshift-console"}, "clientId": "cli-app", "type": "Public"}
  ],
  "claim": {"mappings": {"username": {"claim": "email"}, "groups": {"claim": "groups"}}}
}}`

// validatingAPI makes the fake clientset default and refuse external auths as hcp-apiserver does:
// with its own validation, and with its 409 for a second external auth of a cluster.
func validatingAPI(t *testing.T, client *fake.Clientset) {
	t.Helper()
	check := func(action k8stesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := action.(type) {
		case k8stesting.CreateAction:
			obj = a.GetObject()
		case k8stesting.UpdateAction:
			if a.GetSubresource() != "" {
				return false, nil, nil
			}
			obj = a.GetObject()
		}
		in := obj.(*hcpv1alpha1.ExternalAuth)
		hcpv1alpha1.SetObjectDefaults_ExternalAuth(in) // as the server decodes it
		var internal hcp.ExternalAuth
		if err := hcpv1alpha1.Convert_v1alpha1_ExternalAuth_To_hcp_ExternalAuth(in, &internal, nil); err != nil {
			t.Fatal(err)
		}
		if errs := validation.ValidateExternalAuth(&internal); len(errs) > 0 {
			return true, nil, apierrors.NewInvalid(hcp.Kind("ExternalAuth"), in.Name, errs)
		}
		if action.GetVerb() == "create" {
			list, err := client.Tracker().List(hcpv1alpha1.SchemeGroupVersion.WithResource("externalauths"),
				hcpv1alpha1.SchemeGroupVersion.WithKind("ExternalAuth"), in.Namespace)
			if err != nil {
				t.Fatal(err)
			}
			for _, other := range list.(*hcpv1alpha1.ExternalAuthList).Items {
				if other.Spec.ClusterName == in.Spec.ClusterName && other.Name != in.Name {
					return true, nil, apierrors.NewConflict(hcp.Resource("externalauths"), in.Name,
						fmt.Errorf("spec.clusterName is already used by ExternalAuth %s/%s; a cluster can have one external auth only", other.Namespace, other.Name))
				}
			}
		}
		return false, nil, nil
	}
	client.PrependReactor("create", "externalauths", check)
	client.PrependReactor("update", "externalauths", check)
}

// TestExternalAuthLifecycle runs an external auth through every route in each api-version: PUT
// creates (201, Azure-AsyncOperation only) and replaces (200), GET and the list answer it, PATCH
// merges (202, with Location), the operation's result is the resource, DELETE answers 202 and then
// 204; each body is what that version's OpenAPI document describes.
func TestExternalAuthLifecycle(t *testing.T) {
	for _, v := range conversion.APIVersions {
		t.Run(string(v), func(t *testing.T) {
			f, client := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			validatingAPI(t, client)
			q := "?api-version=" + string(v)
			valid := func(definition string, body []byte) {
				t.Helper()
				if _, err := armschema.Find(); err != nil {
					return
				}
				if err := armschema.Validate(t, string(v), definition, body); err != nil {
					t.Errorf("not a %s: %v\n%s", definition, err, body)
				}
			}

			rec := call(f, "PUT", testAuth+q, minimalExternalAuthBody)
			if rec.Code != 201 || rec.Header().Get(headerAzureAsyncOperation) == "" || rec.Header().Get("Location") != "" {
				t.Fatalf("create: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
			valid("ExternalAuth", rec.Body.Bytes())
			op := operationOf(t, client, rec.Header().Get(headerAzureAsyncOperation))
			ns := names.Namespace(testSub, "Dev-RG")
			if op.Spec.Request != hcpv1alpha1.ARMOperationCreate || op.Spec.ResourceID != testAuth ||
				op.Spec.Target.Resource != "externalauths" || op.Spec.Target.Namespace != ns || op.Spec.Target.Name != "dev-cluster.entra" {
				t.Errorf("operation %+v", op.Spec)
			}
			stored, err := client.HcpV1alpha1().ExternalAuths(ns).Get(t.Context(), "dev-cluster.entra", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if stored.Spec.ClusterName != "dev-cluster" || stored.Labels[names.LabelSubscription] != strings.ToLower(testSub) || len(stored.Spec.Clients) != 2 {
				t.Errorf("stored %+v", stored)
			}

			// The status reports the console's secret missing; the operation has ended.
			stored.Status = hcpv1alpha1.ExternalAuthStatus{ProvisioningState: hcpv1alpha1.ProvisioningStateAwaitingSecret, Conditions: []metav1.Condition{
				{Type: hcpv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "AwaitingSecret", LastTransitionTime: metav1.Now(),
					Message: "create the secret entra-console in openshift-config"},
			}}
			if _, err := client.HcpV1alpha1().ExternalAuths(ns).UpdateStatus(t.Context(), stored, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			setOperationState(t, client, op, hcpv1alpha1.ARMOperationSucceeded, nil)
			result := strings.Replace(strings.TrimPrefix(rec.Header().Get(headerAzureAsyncOperation), testReferer), "hcpOperationStatuses", "hcpOperationResults", 1)
			if rec := call(f, "GET", result, ""); rec.Code != 201 || !strings.Contains(rec.Body.String(), `"name":"Entra"`) {
				t.Errorf("result of the create: %d %s", rec.Code, rec.Body)
			}

			rec = call(f, "GET", strings.ToLower(testAuth)+q, "")
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"provisioningState":"AwaitingSecret"`) ||
				!strings.Contains(rec.Body.String(), "entra-console") {
				t.Errorf("GET: %d %s", rec.Code, rec.Body)
			}
			valid("ExternalAuth", rec.Body.Bytes())
			wantCondition := `"condition":{"type":"Available"`
			if v >= conversion.V20260630Preview {
				wantCondition = `"status":{"conditions":[{"type":"Available"`
			}
			if !strings.Contains(rec.Body.String(), wantCondition) {
				t.Errorf("GET in %s: want %s in %s", v, wantCondition, rec.Body)
			}

			rec = call(f, "GET", testCluster+"/externalAuths"+q, "")
			var list struct{ Value []map[string]any }
			if err := json.Unmarshal(rec.Body.Bytes(), &list); rec.Code != 200 || err != nil || len(list.Value) != 1 {
				t.Errorf("list: %d %s", rec.Code, rec.Body)
			}
			valid("ExternalAuthListResult", rec.Body.Bytes())

			// A provider waiting for its secret can be corrected.
			rec = call(f, "PATCH", testAuth+q, `{"properties": {"claim": {"mappings": {"groups": null, "username": {"claim": "preferred_username"}}}}}`)
			if rec.Code != 202 || rec.Header().Get("Location") == "" || rec.Header().Get(headerAzureAsyncOperation) == "" {
				t.Fatalf("PATCH: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
			valid("ExternalAuth", rec.Body.Bytes())
			patched, _ := client.HcpV1alpha1().ExternalAuths(ns).Get(t.Context(), "dev-cluster.entra", metav1.GetOptions{})
			if patched.Spec.Claim.Mappings.Groups != nil || patched.Spec.Claim.Mappings.Username.Claim != "preferred_username" || len(patched.Spec.Clients) != 2 {
				t.Errorf("after the PATCH: %+v", patched.Spec)
			}

			rec = call(f, "PUT", testAuth+q, minimalExternalAuthBody)
			if rec.Code != 200 || rec.Header().Get("Location") != "" {
				t.Errorf("replace: %d %s", rec.Code, rec.Body)
			}

			if rec := call(f, "DELETE", testAuth+q, ""); rec.Code != 202 || rec.Header().Get("Location") == "" {
				t.Errorf("DELETE: %d %v", rec.Code, rec.Header())
			}
			if rec := call(f, "DELETE", testAuth+q, ""); rec.Code != 204 {
				t.Errorf("DELETE of a deleted external auth: %d", rec.Code)
			}
			if rec := call(f, "PATCH", testAuth+q, `{}`); rec.Code != 404 || cloudError(t, rec).Code != CodeResourceNotFound ||
				!strings.Contains(cloudError(t, rec).Message, "hcpOpenShiftClusters/externalAuths/Entra") {
				t.Errorf("PATCH of a missing external auth: %d %s", rec.Code, rec.Body)
			}
		})
	}
}

// TestExternalAuthInvalidBodies: every mistake of a body is one detail of one CloudError, at its ARM
// path in the request's api-version, in the API's words.
func TestExternalAuthInvalidBodies(t *testing.T) {
	f, client := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	validatingAPI(t, client)
	body := `{"properties": {
	  "issuer": {"url": "http://issuer.example.com", "audiences": []},
	  "clients": [
	    {"component": {"name": "console", "authClientNamespace": "openshift-console"}, "clientId": "console-app", "type": "Confidential"},
	    {"component": {"name": "console", "authClientNamespace": "openshift-console"}, "clientId": "cli-app", "type": "Public"}
	  ],
	  "claim": {"mappings": {"username": {"claim": "email", "prefix": "entra:"}}}
	}}`
	for _, v := range conversion.APIVersions {
		rec := call(f, "PUT", testAuth+"?api-version="+string(v), body)
		if rec.Code != 400 {
			t.Fatalf("%s: %d %s", v, rec.Code, rec.Body)
		}
		ce := cloudError(t, rec)
		if ce.Code != CodeMultipleErrorsOccurred {
			t.Fatalf("%s: code %s: %s", v, ce.Code, rec.Body)
		}
		var targets []string
		for _, d := range ce.Details {
			targets = append(targets, d.Target)
			if d.Code != CodeInvalidRequestContent || strings.Contains(d.Message, "spec.") {
				t.Errorf("%s: detail %+v", v, d)
			}
		}
		for _, want := range []string{
			"properties.issuer.url",
			"properties.issuer.audiences",
			"properties.clients[1].component",
			"properties.clients[0].clientId",
			"properties.clients[1].clientId",
			"properties.claim.mappings.username.prefix",
		} {
			if !slices.Contains(targets, want) {
				t.Errorf("%s: no detail at %s among %v", v, want, targets)
			}
		}
	}
	if list, _ := client.HcpV1alpha1().ExternalAuths("").List(t.Context(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("an invalid external auth was stored")
	}
}

// TestSecondExternalAuth: the API's 409 reaches ARM's caller with its reason, naming the other
// external auth by its ARM ID.
func TestSecondExternalAuth(t *testing.T) {
	f, client := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	validatingAPI(t, client)
	q := "?api-version=" + testAPI
	if rec := call(f, "PUT", testAuth+q, minimalExternalAuthBody); rec.Code != 201 {
		t.Fatalf("first: %d %s", rec.Code, rec.Body)
	}
	rec := call(f, "PUT", testCluster+"/externalAuths/Other"+q, minimalExternalAuthBody)
	if rec.Code != http.StatusConflict {
		t.Fatalf("second: %d %s", rec.Code, rec.Body)
	}
	ce := cloudError(t, rec)
	want := "the external auth's cluster is already used by external auth '" + testAuth + "'; a cluster can have one external auth only"
	if ce.Code != CodeConflict || ce.Message != want {
		t.Errorf("409 %+v, want %q in its message", ce, want)
	}
}

// TestExternalAuthConflicts: an external auth changes only while its cluster is neither provisioning
// nor being deleted, and not while its own operation runs; waiting for its secret is not running.
func TestExternalAuthConflicts(t *testing.T) {
	q := "?api-version=" + testAPI
	auth := func(state hcpv1alpha1.ProvisioningState) *hcpv1alpha1.ExternalAuth {
		obj, _ := names.Parse(testAuth)
		ea := &hcpv1alpha1.ExternalAuth{
			ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Name, UID: "uid-2", Generation: 1,
				Annotations: names.ObjectAnnotations(obj), Labels: names.SubscriptionLabels(testSub)},
			Status: hcpv1alpha1.ExternalAuthStatus{ProvisioningState: state},
		}
		ea.Spec.ClusterName = obj.ClusterName
		ea.Spec.Issuer = hcpv1alpha1.TokenIssuer{URL: "https://issuer.example.com", Audiences: []string{"a"}}
		ea.Spec.Claim.Mappings.Username.Claim = "sub"
		return ea
	}
	op := recordedOperation("Update", 1)
	op.Spec.Target.UID = "uid-2"
	tests := []struct {
		name    string
		objs    []runtime.Object
		method  string
		body    string
		status  int
		message string
	}{
		{"create in a provisioning cluster", []runtime.Object{storedCluster("Provisioning", false)}, "PUT", minimalExternalAuthBody, 409,
			"Cannot create resource while parent resource is provisioning"},
		{"create in a cluster being deleted", []runtime.Object{storedCluster("Deleting", true)}, "PUT", minimalExternalAuthBody, 409,
			"parent resource is deleting"},
		{"delete in a cluster being deleted", []runtime.Object{storedCluster("Deleting", true), auth("Succeeded")}, "DELETE", "", 409,
			"Cannot delete resource while parent resource is deleting"},
		{"patch while updating", []runtime.Object{storedCluster("Succeeded", false), auth("Updating"), op}, "PATCH", `{}`, 409,
			`Cannot update resource while resource is "updating"`},
		{"patch while awaiting the secret", []runtime.Object{storedCluster("Succeeded", false), auth("AwaitingSecret")}, "PATCH", `{}`, 202, ""},
		{"replace while awaiting the secret", []runtime.Object{storedCluster("Succeeded", false), auth("AwaitingSecret")}, "PUT",
			minimalExternalAuthBody, 200, ""},
		{"delete while awaiting the secret", []runtime.Object{storedCluster("Succeeded", false), auth("AwaitingSecret")}, "DELETE", "", 202, ""},
		{"patch of a failed one", []runtime.Object{storedCluster("Succeeded", false), auth("Failed")}, "PATCH", `{}`, 202, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, append(tt.objs, subscription(hcpv1alpha1.ARMSubscriptionRegistered))...)
			rec := call(f, tt.method, testAuth+q, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.message != "" && !strings.Contains(cloudError(t, rec).Message, tt.message) {
				t.Errorf("message %q, want %q in it", cloudError(t, rec).Message, tt.message)
			}
		})
	}
}

// TestExternalAuthRemovals: a PATCH cannot remove what every external auth has.
func TestExternalAuthRemovals(t *testing.T) {
	f, _ := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	q := "?api-version=" + testAPI
	if rec := call(f, "PUT", testAuth+q, minimalExternalAuthBody); rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	for patch, target := range map[string]string{
		`{"properties": {"issuer": null}}`:                                       "properties.issuer",
		`{"properties": {"issuer": {"url": null}}}`:                              "properties.issuer.url",
		`{"properties": {"claim": {"mappings": {"username": {"claim": null}}}}}`: "properties.claim.mappings.username.claim",
	} {
		rec := call(f, "PATCH", testAuth+q, patch)
		if rec.Code != 400 || cloudError(t, rec).Target != target {
			t.Errorf("%s: %d %s, want 400 at %s", patch, rec.Code, rec.Body, target)
		}
	}
}
