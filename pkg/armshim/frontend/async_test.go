package frontend

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armoperationstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/pkg/breakglass"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
)

// operationOf reads the operation an async header points at.
func operationOf(t *testing.T, client *fake.Clientset, header string) *hcpv1alpha1.ARMOperation {
	t.Helper()
	u, err := url.Parse(header)
	if err != nil {
		t.Fatal(err)
	}
	id := u.Path[strings.LastIndex(u.Path, "/")+1:]
	op, err := client.HcpV1alpha1().ARMOperations().Get(t.Context(), id, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("operation %s of %s: %v", id, header, err)
	}
	return op
}

func setOperationState(t *testing.T, client *fake.Clientset, op *hcpv1alpha1.ARMOperation, state hcpv1alpha1.ARMOperationState, e *hcpv1alpha1.ARMOperationError) {
	t.Helper()
	op = op.DeepCopy()
	op.Status.State = state
	op.Status.Error = e
	now := metav1.Now()
	op.Status.EndTime = &now
	if _, err := client.HcpV1alpha1().ARMOperations().UpdateStatus(t.Context(), op, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestAsyncContract(t *testing.T) {
	f, client := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	q := "?api-version=" + testAPI
	statusPrefix := testReferer + "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/"
	resultPrefix := testReferer + "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationResults/"

	// PUT create: 201, Azure-AsyncOperation only.
	rec := call(f, "PUT", testCluster+q, minimalClusterBody,
		headerAsyncNotificationURI, "https://arm.example/notify", headerClientRequestID, "client-1", headerCorrelationRequestID, "corr-1")
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	asyncOp := rec.Header().Get(headerAzureAsyncOperation)
	if !strings.HasPrefix(asyncOp, statusPrefix) || !strings.HasSuffix(asyncOp, q) {
		t.Errorf("Azure-AsyncOperation = %q, want %s<id>%s", asyncOp, statusPrefix, q)
	}
	if loc := rec.Header().Get("Location"); loc != "" {
		t.Errorf("a PUT answered with Location %q", loc)
	}
	if rec.Header().Get(headerAsyncNotification) != "Enabled" {
		t.Errorf("Azure-AsyncNotification = %q with a notification URI sent", rec.Header().Get(headerAsyncNotification))
	}
	var body struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Location string `json:"location"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.ID != testCluster || body.Name != "Dev-Cluster" || body.Location != "eastus" {
		t.Errorf("create body %s", rec.Body)
	}
	op := operationOf(t, client, asyncOp)
	wantSpec := hcpv1alpha1.ARMOperationSpec{
		Request: hcpv1alpha1.ARMOperationCreate, ResourceID: testCluster, SubscriptionID: strings.ToLower(testSub), Location: "eastus",
		APIVersion: testAPI, TenantID: testTenant, ClientObjectID: testObjectID, ClientRequestID: "client-1", CorrelationRequestID: "corr-1",
		NotificationURI: "https://arm.example/notify",
		Target:          hcpv1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: names.Namespace(testSub, "Dev-RG"), Name: "dev-cluster"},
	}
	if op.Spec != wantSpec {
		t.Errorf("operation spec\n got %+v\nwant %+v", op.Spec, wantSpec)
	}
	if op.Labels[names.LabelSubscription] != strings.ToLower(testSub) {
		t.Errorf("operation labels %v", op.Labels)
	}
	cluster, err := client.HcpV1alpha1().HCPClusters(wantSpec.Target.Namespace).Get(t.Context(), "dev-cluster", metav1.GetOptions{})
	if err != nil || cluster.Labels[names.LabelSubscription] != strings.ToLower(testSub) {
		t.Errorf("cluster labels: %v %v", cluster.Labels, err)
	}

	// The status endpoint shows the operation to its caller only.
	statusPath := strings.TrimPrefix(asyncOp, testReferer)
	rec = call(f, "GET", statusPath, "")
	var status armoperationstatus.Document
	if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || rec.Code != 200 || status.Status != "Accepted" || status.Name != op.Name {
		t.Errorf("status: %d %s", rec.Code, rec.Body)
	}
	if rec := call(f, "GET", statusPath, "", headerClientObjectID, "someone-else"); rec.Code != 404 {
		t.Errorf("status for another client: %d", rec.Code)
	}
	if rec := call(f, "GET", statusPath, "", headerHomeTenantID, "other-tenant"); rec.Code != 404 {
		t.Errorf("status for another tenant: %d", rec.Code)
	}
	// Tenant and object IDs are GUIDs, the same in any case.
	if rec := call(f, "GET", statusPath, "", headerHomeTenantID, strings.ToUpper(testTenant), headerClientObjectID, strings.ToUpper(testObjectID)); rec.Code != 200 {
		t.Errorf("status for its caller's IDs in upper case: %d %s", rec.Code, rec.Body)
	}
	// Without x-ms-home-tenant-id the subscription's tenant stands in.
	if rec := call(f, "GET", statusPath, "", headerHomeTenantID, ""); rec.Code != 200 {
		t.Errorf("status without a tenant header: %d", rec.Code)
	}
	resultPath := strings.Replace(statusPath, "hcpOperationStatuses", "hcpOperationResults", 1)
	if rec := call(f, "GET", resultPath, ""); rec.Code != 202 || !strings.HasPrefix(rec.Header().Get("Location"), resultPrefix) {
		t.Errorf("result while accepted: %d Location %q", rec.Code, rec.Header().Get("Location"))
	}
	setOperationState(t, client, op, hcpv1alpha1.ARMOperationSucceeded, nil)
	if rec := call(f, "GET", resultPath, ""); rec.Code != 201 || !strings.Contains(rec.Body.String(), `"name":"Dev-Cluster"`) {
		t.Errorf("result of a create: %d %s", rec.Code, rec.Body)
	}
	rec = call(f, "GET", statusPath, "")
	if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || status.Status != "Succeeded" || status.EndTime == "" {
		t.Errorf("status once succeeded: %s", rec.Body)
	}

	// PUT replace: 200, Azure-AsyncOperation only, no notification header when none was asked for.
	rec = call(f, "PUT", testCluster+q, minimalClusterBody)
	if rec.Code != 200 || rec.Header().Get(headerAzureAsyncOperation) == "" || rec.Header().Get("Location") != "" ||
		rec.Header().Get(headerAsyncNotification) != "" {
		t.Errorf("replace: %d %v", rec.Code, rec.Header())
	}
	if op := operationOf(t, client, rec.Header().Get(headerAzureAsyncOperation)); op.Spec.Request != hcpv1alpha1.ARMOperationUpdate {
		t.Errorf("replace recorded %s", op.Spec.Request)
	}

	// PATCH: 202 with the body and both headers.
	rec = call(f, "PATCH", testCluster+q, `{"tags":{"team":"aro"}}`)
	if rec.Code != 202 || !strings.HasPrefix(rec.Header().Get("Location"), resultPrefix) || !strings.HasPrefix(rec.Header().Get(headerAzureAsyncOperation), statusPrefix) {
		t.Errorf("patch: %d %v", rec.Code, rec.Header())
	}
	if !strings.Contains(rec.Body.String(), `"team":"aro"`) || !strings.Contains(rec.Body.String(), `"subnetId":"s"`) {
		t.Errorf("patch body lost the tags or the rest: %s", rec.Body)
	}
	patchOp := operationOf(t, client, rec.Header().Get(headerAzureAsyncOperation))
	setOperationState(t, client, patchOp, hcpv1alpha1.ARMOperationFailed, &hcpv1alpha1.ARMOperationError{Code: "InternalServerError", Message: "it broke"})
	rec = call(f, "GET", strings.TrimPrefix(rec.Header().Get("Location"), testReferer), "")
	if rec.Code != 500 || cloudError(t, rec).Message != "it broke" {
		t.Errorf("result of a failed operation: %d %s", rec.Code, rec.Body)
	}

	// A PUT in another region is refused.
	rec = call(f, "PUT", testCluster+q, strings.Replace(minimalClusterBody, "East US", "westus", 1))
	if rec.Code != 400 || cloudError(t, rec).Target != "location" {
		t.Errorf("PUT in westus: %d %s", rec.Code, rec.Body)
	}

	// DELETE: 202 with both headers and no body; the result is 204 once done.
	rec = call(f, "DELETE", testCluster+q, "")
	if rec.Code != 202 || rec.Header().Get("Location") == "" || rec.Header().Get(headerAzureAsyncOperation) == "" || rec.Body.Len() != 0 {
		t.Errorf("delete: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	delOp := operationOf(t, client, rec.Header().Get(headerAzureAsyncOperation))
	if delOp.Spec.Request != hcpv1alpha1.ARMOperationDelete {
		t.Errorf("delete recorded %s", delOp.Spec.Request)
	}
	rec2 := call(f, "GET", strings.Replace(strings.TrimPrefix(rec.Header().Get(headerAzureAsyncOperation), testReferer), "hcpOperationStatuses", "hcpOperationStatuses", 1), "")
	if err := json.Unmarshal(rec2.Body.Bytes(), &status); err != nil || status.Status != "Deleting" {
		t.Errorf("a delete's first status: %s", rec2.Body)
	}
	setOperationState(t, client, delOp, hcpv1alpha1.ARMOperationSucceeded, nil)
	if rec := call(f, "GET", strings.TrimPrefix(rec.Header().Get("Location"), testReferer), ""); rec.Code != 204 {
		t.Errorf("result of a delete: %d", rec.Code)
	}
	// The fake store deletes at once: a second DELETE finds nothing.
	if rec := call(f, "DELETE", testCluster+q, ""); rec.Code != 204 {
		t.Errorf("delete of a missing cluster: %d", rec.Code)
	}
	if rec := call(f, "PATCH", testCluster+q, `{}`); rec.Code != 404 || cloudError(t, rec).Code != CodeResourceNotFound {
		t.Errorf("patch of a missing cluster: %d %s", rec.Code, rec.Body)
	}
}

// storedCluster is an ARM cluster as the API keeps it, in a state.
func storedCluster(state hcpv1alpha1.ProvisioningState, deleting bool) *hcpv1alpha1.HCPCluster {
	obj, _ := names.Parse(testCluster)
	c := &hcpv1alpha1.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Name, UID: "uid-1", Generation: 3,
			Annotations: names.ObjectAnnotations(obj), Labels: names.SubscriptionLabels(testSub)},
		Spec:   hcpv1alpha1.HCPClusterSpec{Location: "eastus"},
		Status: hcpv1alpha1.HCPClusterStatus{ProvisioningState: state},
	}
	c.Spec.Version.ID = "4.20"
	c.Spec.Platform.SubnetID, c.Spec.Platform.NetworkSecurityGroupID = "s", "n"
	if deleting {
		now := metav1.Now()
		c.DeletionTimestamp = &now
		c.Finalizers = []string{"hcp.aro.azure.com/cleanup"}
	}
	return c
}

// storedNodePool is the node pool of testNodePool, done with its last change.
func storedNodePool() *hcpv1alpha1.NodePool {
	obj, _ := names.Parse(testNodePool)
	np := &hcpv1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Name, UID: "uid-2", Generation: 1,
			Annotations: names.ObjectAnnotations(obj), Labels: names.SubscriptionLabels(testSub)},
		Status: hcpv1alpha1.NodePoolStatus{ProvisioningState: hcpv1alpha1.ProvisioningStateSucceeded},
	}
	np.Spec.ClusterName = obj.ClusterName
	return np
}

// deletingNodePool is storedNodePool being deleted.
func deletingNodePool() *hcpv1alpha1.NodePool {
	np := storedNodePool()
	now := metav1.Now()
	np.DeletionTimestamp, np.Finalizers = &now, []string{hcpv1alpha1.DeliveryFinalizer}
	np.Status.ProvisioningState = hcpv1alpha1.ProvisioningStateDeleting
	return np
}

func recordedOperation(request hcpv1alpha1.ARMOperationRequest, generation int64) *hcpv1alpha1.ARMOperation {
	return &hcpv1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: "op-" + strings.ToLower(string(request)), Labels: names.SubscriptionLabels(testSub)},
		Spec: hcpv1alpha1.ARMOperationSpec{Request: request, SubscriptionID: strings.ToLower(testSub),
			Target: hcpv1alpha1.ARMOperationTarget{Resource: "hcpclusters", UID: "uid-1", Generation: generation}},
	}
}

// TestOperationRecordedWithoutItsCaller: an operation whose request carried no object ID (ARM sent none)
// is visible to whoever may read its subscription, as the public frontend shows it.
func TestOperationRecordedWithoutItsCaller(t *testing.T) {
	f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	rec := call(f, "PUT", testCluster+"?api-version="+testAPI, minimalClusterBody, headerClientObjectID, "")
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	statusPath := strings.TrimPrefix(rec.Header().Get(headerAzureAsyncOperation), testReferer)
	if rec := call(f, "GET", statusPath, ""); rec.Code != 200 {
		t.Errorf("status for a client of the subscription: %d %s", rec.Code, rec.Body)
	}
}

func TestProvisioningStateConflicts(t *testing.T) {
	q := "?api-version=" + testAPI
	tests := []struct {
		name    string
		objs    []runtime.Object
		method  string
		target  string
		body    string
		status  int
		message string
	}{
		{name: "replace while provisioning", objs: []runtime.Object{storedCluster("Provisioning", false), recordedOperation("Create", 3)},
			method: "PUT", target: testCluster, body: minimalClusterBody, status: 409, message: `Cannot update resource while resource is "provisioning"`},
		{name: "replace after a create whose operation was lost is ARM's retry", objs: []runtime.Object{storedCluster("Accepted", false)},
			method: "PUT", target: testCluster, body: minimalClusterBody, status: 200},
		{name: "patch while updating", objs: []runtime.Object{storedCluster("Updating", false)},
			method: "PATCH", target: testCluster, body: `{}`, status: 409, message: `Cannot update resource while resource is "updating"`},
		{name: "patch once succeeded", objs: []runtime.Object{storedCluster("Succeeded", false)},
			method: "PATCH", target: testCluster, body: `{}`, status: 202},
		{name: "delete while deleting", objs: []runtime.Object{storedCluster("Deleting", true), recordedOperation("Delete", 3)},
			method: "DELETE", target: testCluster, status: 409, message: "Resource is already deleting"},
		{name: "delete again after a delete whose operation was lost", objs: []runtime.Object{storedCluster("Deleting", true)},
			method: "DELETE", target: testCluster, status: 202},
		{name: "delete while provisioning", objs: []runtime.Object{storedCluster("Provisioning", false)},
			method: "DELETE", target: testCluster, status: 202},
		{name: "node pool of a provisioning cluster", objs: []runtime.Object{storedCluster("Provisioning", false)},
			method: "PUT", target: testNodePool, body: minimalNodePoolBody, status: 409, message: "Cannot create resource while parent resource is provisioning"},
		{name: "node pool of a cluster being deleted", objs: []runtime.Object{storedCluster("Deleting", true)},
			method: "PUT", target: testNodePool, body: minimalNodePoolBody, status: 409, message: "parent resource is deleting"},
		// A PUT of a node pool that exists replaces it: the refusal says so, as the public frontend's does.
		{name: "replacing a node pool of a provisioning cluster", objs: []runtime.Object{storedCluster("Provisioning", false), storedNodePool()},
			method: "PUT", target: testNodePool, body: minimalNodePoolBody, status: 409, message: "Cannot update resource while parent resource is provisioning"},
		{name: "patching a node pool of a cluster being deleted", objs: []runtime.Object{storedCluster("Deleting", true), storedNodePool()},
			method: "PATCH", target: testNodePool, body: `{}`, status: 409, message: "Cannot update resource while parent resource is deleting"},
		{name: "deleting a node pool of a provisioning cluster", objs: []runtime.Object{storedCluster("Provisioning", false), storedNodePool()},
			method: "DELETE", target: testNodePool, status: 409, message: "Cannot delete resource while parent resource is provisioning"},
		// The resource's own state is checked before its parent's.
		{name: "deleting a node pool being deleted, of a cluster being deleted", objs: []runtime.Object{storedCluster("Deleting", true), deletingNodePool(),
			&hcpv1alpha1.ARMOperation{ObjectMeta: metav1.ObjectMeta{Name: "op-pool-delete", Labels: names.SubscriptionLabels(testSub)},
				Spec: hcpv1alpha1.ARMOperationSpec{Request: hcpv1alpha1.ARMOperationDelete, SubscriptionID: strings.ToLower(testSub),
					Target: hcpv1alpha1.ARMOperationTarget{Resource: "nodepools", UID: "uid-2", Generation: 1}}}},
			method: "DELETE", target: testNodePool, status: 409, message: "Resource is already deleting"},
		{name: "node pool of a missing cluster", method: "PUT", target: testNodePool, body: minimalNodePoolBody, status: 404,
			message: "hcpOpenShiftClusters/Dev-Cluster"},
		{name: "node pool of an accepted cluster", objs: []runtime.Object{storedCluster("Accepted", false)},
			method: "PUT", target: testNodePool, body: minimalNodePoolBody, status: 201},
		{name: "credential while provisioning", objs: []runtime.Object{storedCluster("Provisioning", false)},
			method: "POST", target: testCluster + "/requestadmincredential", body: `{}`, status: 409,
			message: `Cannot request credential while resource is "provisioning"`},
		{name: "revoke while updating", objs: []runtime.Object{storedCluster("Updating", false)},
			method: "POST", target: testCluster + "/revokecredentials", status: 409},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, append(tt.objs, subscription(hcpv1alpha1.ARMSubscriptionRegistered))...)
			rec := call(f, tt.method, tt.target+q, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.message != "" && !strings.Contains(cloudError(t, rec).Message, tt.message) {
				t.Errorf("message %q, want %q in it", cloudError(t, rec).Message, tt.message)
			}
			// The frontend's 409s name the resource the request is about.
			if tt.status != http.StatusConflict {
				return
			}
			if target := cloudError(t, rec).Target; !strings.EqualFold(target, strings.TrimSuffix(tt.target, "/requestadmincredential")) &&
				!strings.EqualFold(target, strings.TrimSuffix(tt.target, "/revokecredentials")) {
				t.Errorf("target %q, want the resource %s", target, tt.target)
			}
		})
	}
}

func TestRevokingCredentialsConflict(t *testing.T) {
	c := storedCluster("Succeeded", false)
	c.Status.Conditions = []metav1.Condition{{Type: hcpv1alpha1.ConditionRevokingCredentials, Status: metav1.ConditionTrue, Reason: "Revoking"}}
	f, _ := newTestFrontend(t, c, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	for _, action := range []string{"requestadmincredential", "revokecredentials"} {
		rec := call(f, "POST", testCluster+"/"+action+"?api-version=2025-12-23-preview", "")
		if rec.Code != 409 || rec.Header().Get("Retry-After") != "10" {
			t.Errorf("%s while revoking: %d Retry-After %q", action, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
}

func csrPEM(t *testing.T, subject pkix.Name) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func TestCertificateSigningRequest(t *testing.T) {
	_, good, err := breakglass.NewKeyAndCSR("system-admin")
	if err != nil {
		t.Fatal(err)
	}
	body := func(csr string) []byte {
		raw, _ := json.Marshal(adminCredentialRequest{CertificateSigningRequest: csr})
		return raw
	}
	tests := []struct {
		name    string
		body    []byte
		wantErr string
	}{
		{name: "valid", body: body(string(good))},
		{name: "no body", body: nil, wantErr: "Missing required field"},
		{name: "empty CSR", body: body(""), wantErr: "Missing required field"},
		{name: "not PEM", body: body("hello"), wantErr: "one PEM block"},
		{name: "a certificate, not a request", body: body("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), wantErr: "one PEM block"},
		{name: "two requests", body: body(string(good) + string(good)), wantErr: "one PEM block"},
		{name: "garbage DER", body: body("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"), wantErr: "could not be parsed"},
		{name: "other user", body: body(csrPEM(t, pkix.Name{CommonName: breakglass.UserPrefix + "alice", Organization: []string{"system:masters"}})),
			wantErr: "common name must be 'system:customer-break-glass:system-admin'"},
		{name: "no group", body: body(csrPEM(t, pkix.Name{CommonName: breakGlassUser})), wantErr: "organization must be exactly"},
		{name: "extra group", body: body(csrPEM(t, pkix.Name{CommonName: breakGlassUser, Organization: []string{"system:masters", "x"}})),
			wantErr: "organization must be exactly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := certificateSigningRequest(tt.body)
			if tt.wantErr == "" {
				if err != nil || got != string(good) {
					t.Errorf("err = %v", err)
				}
				return
			}
			ce, ok := err.(*CloudError)
			if !ok || ce.StatusCode != 400 || ce.Body.Target != "certificateSigningRequest" || !strings.Contains(ce.Body.Message, tt.wantErr) {
				t.Errorf("err = %v, want a 400 on certificateSigningRequest saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestRequestAdminCredentialByVersion(t *testing.T) {
	f, client := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	// 2026-09-01-preview wants the caller's CSR.
	if rec := call(f, "POST", testCluster+"/requestadmincredential?api-version="+testAPI, `{}`); rec.Code != 400 {
		t.Errorf("without a CSR in %s: %d %s", testAPI, rec.Code, rec.Body)
	}
	// Before it the server makes the key.
	rec := call(f, "POST", testCluster+"/requestadmincredential?api-version=2026-06-30-preview", "")
	if rec.Code != 202 || rec.Header().Get("Location") == "" || rec.Header().Get(headerAzureAsyncOperation) == "" {
		t.Fatalf("legacy request: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	op := operationOf(t, client, rec.Header().Get(headerAzureAsyncOperation))
	if op.Spec.Request != hcpv1alpha1.ARMOperationRequestCredential || op.Spec.Target.Resource != "breakglasscredentials" {
		t.Errorf("operation %+v", op.Spec)
	}
	creds, err := client.HcpV1alpha1().BreakglassCredentials(op.Spec.Target.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(creds.Items) != 1 || creds.Items[0].Spec.ClusterName != "dev-cluster" || creds.Items[0].Spec.CertificateSigningRequest != "" {
		t.Errorf("credentials %+v %v", creds, err)
	}
}

func TestPaging(t *testing.T) {
	tests := []struct {
		name     string
		target   string
		referer  string
		host     string
		wantTop  int64
		wantSkip string
		wantNext string
	}{
		{name: "defaults", target: "/x?api-version=1", referer: "https://management.azure.com/x?api-version=1", wantTop: 20,
			wantNext: "https://management.azure.com/x?%24skipToken=TOKEN&api-version=1"},
		{name: "$top alone is not honoured: the first page has the default size", target: "/x?$top=5", wantTop: 20},
		{name: "$top beside $skipToken", target: "/x?$top=5&$skipToken=abc", wantTop: 5, wantSkip: "abc"},
		{name: "$top beside an empty $skipToken: the first page in pages of $top", target: "/x?$skipToken=&$top=3", wantTop: 3},
		{name: "a larger $top", target: "/x?$top=500&$skipToken=abc", wantTop: 500, wantSkip: "abc"},
		{name: "more than a page holds is capped", target: "/x?$top=50000&$skipToken=abc", wantTop: maxPageSize, wantSkip: "abc"},
		{name: "query keys in any case", target: "/x?$TOP=3&$SKIPTOKEN=abc", wantTop: 3, wantSkip: "abc",
			referer: "https://arm.example/x?api-version=1&$SKIPTOKEN=abc", wantNext: "https://arm.example/x?%24skipToken=TOKEN&api-version=1"},
		{name: "a $top that is not a number is ignored", target: "/x?$top=many&$skipToken=abc", wantTop: 20, wantSkip: "abc"},
		{name: "a $top of zero is ignored", target: "/x?$top=0&$skipToken=abc", wantTop: 20, wantSkip: "abc"},
		{name: "no Referer: the request's own URL", target: "/x?api-version=1", host: "shim.local:8443", wantTop: 20,
			wantNext: "http://shim.local:8443/x?%24skipToken=TOKEN&api-version=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.target, nil)
			if tt.referer != "" {
				r.Header.Set("Referer", tt.referer)
			}
			if tt.host != "" {
				r.Host = tt.host
			}
			req := &request{r: r}
			opts := listOptions(req)
			if opts.Limit != tt.wantTop || opts.Continue != tt.wantSkip {
				t.Errorf("limit %d continue %q, want %d %q", opts.Limit, opts.Continue, tt.wantTop, tt.wantSkip)
			}
			if tt.wantNext != "" {
				if got := nextLink(req, "TOKEN"); got != tt.wantNext {
					t.Errorf("nextLink = %q, want %q", got, tt.wantNext)
				}
			}
			if got := nextLink(req, ""); got != "" {
				t.Errorf("nextLink of the last page = %q", got)
			}
		})
	}
}

func TestListClusters(t *testing.T) {
	other := storedCluster("Succeeded", false)
	other.Name, other.Labels = "not-arm", nil
	f, _ := newTestFrontend(t, storedCluster("Succeeded", false), other, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	for _, target := range []string{
		"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
		testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
	} {
		rec := call(f, "GET", target+"?api-version="+testAPI, "")
		var p struct {
			Value []map[string]any `json:"value"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != 200 || len(p.Value) != 1 || p.Value[0]["id"] != testCluster {
			t.Errorf("GET %s: %d %s", target, rec.Code, rec.Body)
		}
	}
	rec := call(f, "GET", "/subscriptions/"+testSub+"/resourceGroups/empty/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters?api-version="+testAPI, "")
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"value":[]}` {
		t.Errorf("empty resource group: %d %s", rec.Code, rec.Body)
	}
}

func TestMergePatch(t *testing.T) {
	tests := []struct{ doc, patch, want string }{
		{`{"a":1,"b":{"c":2,"d":3}}`, `{"b":{"c":null,"e":4}}`, `{"a":1,"b":{"d":3,"e":4}}`},
		{`{"tags":{"x":"1"}}`, `{"tags":{"y":"2"}}`, `{"tags":{"x":"1","y":"2"}}`},
		{`{"list":[1,2]}`, `{"list":[3]}`, `{"list":[3]}`},
		{`{"a":1}`, `{"a":{"b":null}}`, `{"a":{}}`},
	}
	for _, tt := range tests {
		got, err := mergePatch([]byte(tt.doc), []byte(tt.patch))
		if err != nil || string(got) != tt.want {
			t.Errorf("mergePatch(%s, %s) = %s, %v; want %s", tt.doc, tt.patch, got, err, tt.want)
		}
	}
}

func TestStaleUpdateIsRetried(t *testing.T) {
	f, client := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	clusters := schema.GroupResource{Group: "hcp.aro.azure.com", Resource: "hcpclusters"}
	stale := 2
	client.PrependReactor("update", "hcpclusters", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if stale == 0 {
			return false, nil, nil
		}
		stale--
		return true, nil, apierrors.NewConflict(clusters, "dev-cluster",
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	})
	if rec := call(f, "PATCH", testCluster+"?api-version="+testAPI, `{"tags":{"a":"b"}}`); rec.Code != 202 || stale != 0 {
		t.Errorf("PATCH racing two status writes: %d %s", rec.Code, rec.Body)
	}

	// An admission plugin's 409 is not a race: it reaches the caller at once, with its message.
	client.PrependReactor("update", "hcpclusters", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(clusters, "dev-cluster", errors.New("clusterreference: the cluster is being deleted"))
	})
	rec := call(f, "PUT", testCluster+"?api-version="+testAPI, minimalClusterBody)
	if rec.Code != 409 || !strings.Contains(cloudError(t, rec).Message, "clusterreference") {
		t.Errorf("PUT refused by admission: %d %s", rec.Code, rec.Body)
	}
}

// A PUT tries the create first, with no read before it. On a cluster that exists, the PUT is the replace
// it is (200, an Update operation), never a 409, whether the API refused the create for its name or for
// a check that only a new cluster must pass (here a version no longer offered, as versionpolicy refuses
// it); on a name that is free, the API's refusal is the answer.
func TestPutOfAnExistingCluster(t *testing.T) {
	for _, refusal := range []string{"name taken", "create-only check"} {
		t.Run(refusal, func(t *testing.T) {
			f, client := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			if refusal == "create-only check" {
				client.PrependReactor("create", "hcpclusters", func(action k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewInvalid(hcpv1alpha1.SchemeGroupVersion.WithKind("HCPCluster").GroupKind(), "dev-cluster", field.ErrorList{
						field.Invalid(field.NewPath("spec", "version", "id"), "4.19", "must be one of 4.20 in channel group stable")})
				})
			}
			rec := call(f, "PUT", testCluster+"?api-version="+testAPI, minimalClusterBody)
			if rec.Code != 200 {
				t.Fatalf("PUT of an existing cluster: %d %s, want 200", rec.Code, rec.Body)
			}
			if op := operationOf(t, client, rec.Header().Get(headerAzureAsyncOperation)); op.Spec.Request != hcpv1alpha1.ARMOperationUpdate {
				t.Errorf("the PUT recorded %s, want Update", op.Spec.Request)
			}
			creates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "hcpclusters" {
					creates++
				}
			}
			if creates != 1 {
				t.Errorf("%d creates of the cluster, want the one refused", creates)
			}
			if ops, err := client.HcpV1alpha1().ARMOperations().List(t.Context(), metav1.ListOptions{}); err != nil || len(ops.Items) != 1 {
				t.Errorf("operations after the PUT: %v %v, want the Update alone", ops, err)
			}

			other := strings.Replace(testCluster, "Dev-Cluster", "Other-Cluster", 1)
			rec = call(f, "PUT", other+"?api-version="+testAPI, minimalClusterBody)
			switch refusal {
			case "name taken":
				if rec.Code != 201 {
					t.Errorf("PUT of a new cluster: %d %s, want 201", rec.Code, rec.Body)
				}
			default:
				if rec.Code != 400 || !strings.Contains(rec.Body.String(), "must be one of 4.20") {
					t.Errorf("PUT of a new cluster the API refuses: %d %s, want its 400", rec.Code, rec.Body)
				}
			}
		})
	}
}

// A PATCH merges tags key by key, and {"tags": null} removes them all, while a PUT that leaves tags out
// keeps them (the conversion's rule for a replace).
func TestPatchRemovesTags(t *testing.T) {
	f, _ := newTestFrontend(t, storedCluster("Succeeded", false), subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	q := "?api-version=" + testAPI
	tagsOf := func(body []byte) map[string]string {
		t.Helper()
		var got struct {
			Tags map[string]string `json:"tags"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		return got.Tags
	}
	for _, step := range []struct {
		patch string
		want  map[string]string
	}{
		{`{"tags":{"a":"1","b":"2"}}`, map[string]string{"a": "1", "b": "2"}},
		{`{"tags":{"a":null}}`, map[string]string{"b": "2"}},
		{`{"tags":null}`, nil},
	} {
		rec := call(f, "PATCH", testCluster+q, step.patch)
		if rec.Code != 202 {
			t.Fatalf("PATCH %s: %d %s", step.patch, rec.Code, rec.Body)
		}
		if got := tagsOf(rec.Body.Bytes()); !maps.Equal(got, step.want) {
			t.Errorf("after PATCH %s the tags are %v, want %v", step.patch, got, step.want)
		}
	}
}
