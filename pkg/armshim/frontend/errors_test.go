package frontend

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

func TestAPIError(t *testing.T) {
	clusters := schema.GroupResource{Group: "hcp.aro.azure.com", Resource: "hcpclusters"}
	clusterKind := schema.GroupKind{Group: "hcp.aro.azure.com", Kind: "HCPCluster"}
	const clusterID = "/subscriptions/sub/resourceGroups/My-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev"
	obj, err := names.Parse(clusterID)
	if err != nil {
		t.Fatal(err)
	}
	res := &armResource{obj: obj, id: clusterID}

	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		target     string
		message    string
		details    []string // targets of the details
		retryAfter string
	}{
		{
			name: "one invalid field names its ARM path",
			err: apierrors.NewInvalid(clusterKind, "dev", field.ErrorList{
				field.Invalid(field.NewPath("spec", "network", "podCIDR"), "10.0.0.0/33", "must be a valid IPv4 CIDR"),
			}),
			status: 400, code: CodeInvalidRequestContent, target: "properties.network.podCidr", message: "must be a valid IPv4 CIDR",
		},
		{
			name: "several invalid fields are details",
			err: apierrors.NewInvalid(clusterKind, "dev", field.ErrorList{
				field.Required(field.NewPath("spec", "platform", "subnetID"), ""),
				field.Invalid(field.NewPath("spec", "api", "authorizedCIDRs").Index(0), "x", "not a CIDR"),
				field.Invalid(field.NewPath("spec", "location"), "x", "bad"),
			}),
			status: 400, code: CodeMultipleErrorsOccurred, message: "3 errors occurred",
			details: []string{"properties.platform.subnetId", "properties.api.authorizedCidrs[0]", "location"},
		},
		{
			name: "a field without ARM counterpart keeps its message",
			err: apierrors.NewInvalid(clusterKind, "dev", field.ErrorList{
				field.Invalid(field.NewPath("metadata", "name"), "x", "too long"),
			}),
			status: 400, code: CodeInvalidRequestContent, target: "", message: "metadata.name: ",
		},
		{
			name:   "conflict",
			err:    apierrors.NewConflict(clusters, "dev", errors.New("clusterreference: HCPCluster dev is being deleted")),
			status: 409, code: CodeConflict, message: "is being deleted",
		},
		{
			name:   "an admission plugin's refusal keeps its message",
			err:    apierrors.NewForbidden(clusters, "dev", errors.New("versionpolicy: 4.21 is not offered")),
			status: 403, code: CodeForbidden, message: "versionpolicy: 4.21 is not offered",
		},
		{
			name:   "RBAC refusing the shim is the service's fault",
			err:    apierrors.NewForbidden(clusters, "dev", errors.New(`User "system:serviceaccount:x:arm-shim" cannot create resource "hcpclusters"`)),
			status: 500, code: CodeInternalServerError, message: "Internal server error.",
		},
		{
			name:   "not found is the ARM resource's",
			err:    apierrors.NewNotFound(clusters, "dev"),
			status: 404, code: CodeResourceNotFound, target: clusterID,
			message: "The resource 'hcpOpenShiftClusters/Dev' under resource group 'My-RG' was not found.",
		},
		{
			name:   "throttled by the API: 429 with its Retry-After",
			err:    apierrors.NewTooManyRequests("slow down", 7),
			status: 429, code: CodeTooManyRequests, retryAfter: "7",
		},
		{
			name:   "throttled without a Retry-After",
			err:    apierrors.NewTooManyRequests("slow down", 0),
			status: 429, code: CodeTooManyRequests, retryAfter: "1",
		},
		{
			name:   "timed out in the API",
			err:    apierrors.NewTimeoutError("too large resource version", 1),
			status: 503, code: CodeServiceUnavailable, retryAfter: "59",
		},
		{
			name:   "an object the API will not store is the caller's 400, as the shim's own limit says",
			err:    apierrors.NewRequestEntityTooLargeError("limit is 3145728"),
			status: 400, code: CodeInvalidResource, message: "The resource definition is invalid",
		},
		{
			name:   "a resourceVersion gone meanwhile",
			err:    apierrors.NewResourceExpired("too old resource version"),
			status: 409, code: CodeConflict, message: "retry",
		},
		{
			name:   "a method the API does not serve",
			err:    apierrors.NewMethodNotSupported(clusters, "patch"),
			status: 405, code: CodeMethodNotAllowed,
		},
		{
			name:   "a media type the API does not take",
			err:    apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "create", clusters, "dev", "", 0, false),
			status: 415, code: CodeUnsupportedMediaType,
		},
		{
			name:   "a media type the API cannot answer in",
			err:    apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", clusters, "dev", "", 0, false),
			status: 406, code: CodeUnsupportedMediaType,
		},
		{
			name:   "an object of the same name created meanwhile",
			err:    apierrors.NewAlreadyExists(clusters, "dev"),
			status: 409, code: CodeConflict,
		},
		{
			name: "annotations too large are the tags",
			err: apierrors.NewInvalid(clusterKind, "dev", field.ErrorList{
				field.TooLong(field.NewPath("metadata", "annotations"), "", 262144),
			}),
			status: 400, code: CodeInvalidRequestContent, target: "tags", message: "262144",
		},
		{
			name:   "unreachable API server",
			err:    syscall.ECONNREFUSED,
			status: 503, code: CodeServiceUnavailable, retryAfter: "59",
		},
		{
			name:   "anything else",
			err:    errors.New("boom"),
			status: 500, code: CodeInternalServerError,
		},
		{
			name:   "a CloudError passes as it is",
			err:    newCloudError(409, CodeConflict, "", "busy"),
			status: 409, code: CodeConflict, message: "busy",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeCloudError(rec, apiError(klog.Background(), tt.err, res))
			if rec.Code != tt.status {
				t.Errorf("status = %d, want %d", rec.Code, tt.status)
			}
			var got CloudError
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if got.Body.Code != tt.code || rec.Header().Get("X-Ms-Error-Code") != tt.code {
				t.Errorf("code = %q, X-Ms-Error-Code = %q, want %q", got.Body.Code, rec.Header().Get("X-Ms-Error-Code"), tt.code)
			}
			if got.Body.Target != tt.target {
				t.Errorf("target = %q, want %q", got.Body.Target, tt.target)
			}
			if !strings.Contains(got.Body.Message, tt.message) {
				t.Errorf("message = %q, want it to contain %q", got.Body.Message, tt.message)
			}
			var targets []string
			for _, d := range got.Body.Details {
				targets = append(targets, d.Target)
			}
			if strings.Join(targets, ",") != strings.Join(tt.details, ",") {
				t.Errorf("detail targets = %v, want %v", targets, tt.details)
			}
			if ra := rec.Header().Get("Retry-After"); ra != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", ra, tt.retryAfter)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func TestFieldErrorsToCloudError(t *testing.T) {
	one := fieldErrorsToCloudError(field.ErrorList{field.Required(field.NewPath("properties", "platform"), "a cluster needs a platform")})
	if one.StatusCode != http.StatusBadRequest || one.Body.Code != CodeInvalidRequestContent || one.Body.Target != "properties.platform" {
		t.Errorf("one error = %+v", one)
	}
	two := fieldErrorsToCloudError(field.ErrorList{
		field.Required(field.NewPath("location"), ""),
		field.Forbidden(field.NewPath("properties", "network", "podCidr"), "cannot be changed"),
	})
	if two.Body.Code != CodeMultipleErrorsOccurred || two.Body.Message != "2 errors occurred" || len(two.Body.Details) != 2 ||
		two.Body.Details[1].Target != "properties.network.podCidr" {
		t.Errorf("two errors = %+v", two)
	}
}

func TestARMFieldPath(t *testing.T) {
	tests := []struct {
		api, arm string
		ok       bool
	}{
		{"spec.network.podCIDR", "properties.network.podCidr", true},
		{"spec.network.serviceCIDR", "properties.network.serviceCidr", true},
		{"spec.api.authorizedCIDRs[3]", "properties.api.authorizedCidrs[3]", true},
		{"spec.platform.networkSecurityGroupID", "properties.platform.networkSecurityGroupId", true},
		{"spec.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators[ingress]",
			"properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators[ingress]", true},
		{"spec.platform.osDisk.encryptionSetID", "properties.platform.osDisk.encryptionSetId", true},
		{"spec.version.id", "properties.version.id", true},
		{"spec.location", "location", true},
		{"spec.identity.userAssignedIdentities", "identity.userAssignedIdentities", true},
		{"spec.clusterName", "", false},
		{"metadata.name", "", false},
		{"metadata.annotations", "tags", true},
		{"status.provisioningState", "", false},
	}
	if got, ok := subscriptionFieldPath("spec.properties.tenantID"); got != "properties.tenantId" || !ok {
		t.Errorf("subscriptionFieldPath(spec.properties.tenantID) = %q, %v", got, ok)
	}
	for _, tt := range tests {
		got, ok := armFieldPath(tt.api)
		if got != tt.arm || ok != tt.ok {
			t.Errorf("armFieldPath(%q) = %q, %v; want %q, %v", tt.api, got, ok, tt.arm, tt.ok)
		}
	}
}
