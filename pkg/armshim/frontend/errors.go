package frontend

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
)

// CloudError codes, as the ARO HCP frontend spells them.
const (
	CodeInvalidRequestContent    = "InvalidRequestContent"
	CodeMultipleErrorsOccurred   = "MultipleErrorsOccurred"
	CodeResourceNotFound         = "ResourceNotFound"
	CodeNotFound                 = "NotFound"
	CodeConflict                 = "Conflict"
	CodeInvalidSubscriptionState = "InvalidSubscriptionState"
	CodeInvalidParameter         = "InvalidParameter"
	CodeInvalidResourceType      = "InvalidResourceType"
	CodeInvalidResourceName      = "InvalidResourceName"
	CodeInvalidSubscriptionID    = "InvalidSubscriptionID"
	CodeInvalidResourceGroupName = "InvalidResourceGroupName"
	CodeUnsupportedMediaType     = "UnsupportedMediaType"
	CodeInvalidResource          = "InvalidResource"
	CodeMethodNotAllowed         = "MethodNotAllowed"
	CodeForbidden                = "Forbidden"
	CodeInternalServerError      = "InternalServerError"
	CodeServiceUnavailable       = "ServiceUnavailable"
	CodeTooManyRequests          = "TooManyRequests"
	CodeRequestTimeout           = "RequestTimeout"
)

// retryAfterUnavailable is the Retry-After of a 503, in seconds, as the frontend sends it.
const retryAfterUnavailable = "59"

// retryAfterThrottled is the Retry-After of a 429 when the API named none.
const retryAfterThrottled = "1"

// CloudError is ARM's error response.
type CloudError struct {
	StatusCode int          `json:"-"`
	Body       CloudErrBody `json:"error"`
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter string `json:"-"`
}

// CloudErrBody is the error object of a CloudError; details nest the same shape.
type CloudErrBody struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Target  string         `json:"target,omitempty"`
	Details []CloudErrBody `json:"details,omitempty"`
}

func (e *CloudError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.StatusCode, e.Body.Code, e.Body.Message)
}

func newCloudError(status int, code, target, format string, args ...any) *CloudError {
	return &CloudError{StatusCode: status, Body: CloudErrBody{Code: code, Target: target, Message: fmt.Sprintf(format, args...)}}
}

// writeCloudError answers with e, its code also in X-Ms-Error-Code.
func writeCloudError(w http.ResponseWriter, e *CloudError) {
	w.Header().Set("X-Ms-Error-Code", e.Body.Code)
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	} else if e.StatusCode == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterUnavailable)
	}
	writeJSON(w, e.StatusCode, e)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	raw, err := json.Marshal(body)
	if err != nil {
		// Only the shim's own types come here; failing to encode them is a bug.
		panic(fmt.Sprintf("encoding a response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// fieldErrorsToCloudError turns errors with ARM paths into a 400: one error names its field as target,
// several are details of MultipleErrorsOccurred.
func fieldErrorsToCloudError(errs field.ErrorList) *CloudError {
	bodies := make([]CloudErrBody, 0, len(errs))
	for _, e := range errs {
		bodies = append(bodies, CloudErrBody{Code: CodeInvalidRequestContent, Target: e.Field, Message: e.ErrorBody()})
	}
	return multipleOrOne(bodies)
}

func multipleOrOne(bodies []CloudErrBody) *CloudError {
	if len(bodies) == 1 {
		return &CloudError{StatusCode: http.StatusBadRequest, Body: bodies[0]}
	}
	return &CloudError{StatusCode: http.StatusBadRequest, Body: CloudErrBody{
		Code:    CodeMultipleErrorsOccurred,
		Message: fmt.Sprintf("%d errors occurred", len(bodies)),
		Details: bodies,
	}}
}

// apiError maps an error of hcp-apiserver to what ARM's caller should see. resource names the ARM
// resource the request was about, for a 404.
func apiError(logger klog.Logger, err error, resource *armResource) *CloudError {
	var ce *CloudError
	if errors.As(err, &ce) {
		return ce
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		var netErr net.Error
		if errors.As(err, &netErr) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) {
			logger.Error(err, "hcp-apiserver cannot be reached")
			return unavailable()
		}
		logger.Error(err, "Request to hcp-apiserver failed")
		return internalError()
	}
	s := status.Status()
	switch s.Code {
	case http.StatusUnprocessableEntity, http.StatusBadRequest:
		return invalidToCloudError(s, armFieldPath)
	case http.StatusConflict:
		return newCloudError(http.StatusConflict, CodeConflict, "", "%s", s.Message)
	case http.StatusNotFound:
		if resource != nil {
			return resource.notFound()
		}
		return newCloudError(http.StatusNotFound, CodeNotFound, "", "%s", s.Message)
	case http.StatusForbidden:
		// RBAC refusing the shim is the shim's misconfiguration, not the caller's fault; an admission
		// plugin's refusal is a policy the caller has to hear about.
		if strings.Contains(s.Message, `is forbidden: User "`) {
			logger.Error(err, "hcp-apiserver refused the ARM shim: check its ClusterRole")
			return internalError()
		}
		return newCloudError(http.StatusForbidden, CodeForbidden, "", "%s", s.Message)
	case http.StatusRequestEntityTooLarge:
		// The object the request would make is larger than the API stores.
		return newCloudError(http.StatusBadRequest, CodeInvalidResource, "",
			"The resource definition is invalid: the resource is larger than the service can store.")
	case http.StatusGone:
		// A read or write at a resourceVersion the API no longer has: the resource moved on meanwhile.
		return newCloudError(http.StatusConflict, CodeConflict, "", "The resource changed while the request was served; retry the request.")
	case http.StatusMethodNotAllowed:
		return newCloudError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "", "The operation is not allowed on this resource.")
	case http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
		// The shim chose the media types, never the caller; it is answered as the caller would be
		// about its own body, and logged for the service to fix.
		logger.Error(err, "hcp-apiserver refused the media type of the ARM shim's request")
		return newCloudError(int(s.Code), CodeUnsupportedMediaType, "", "The media type of the request is not supported.")
	case http.StatusTooManyRequests:
		e := newCloudError(http.StatusTooManyRequests, CodeTooManyRequests, "", "Too many requests; retry the request later.")
		e.RetryAfter = retryAfterThrottled
		if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
			e.RetryAfter = strconv.Itoa(int(s.Details.RetryAfterSeconds))
		}
		return e
	case http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return unavailable()
	case http.StatusInternalServerError:
		logger.Error(err, "hcp-apiserver failed")
		return internalError()
	default:
		logger.Error(err, "Unexpected answer of hcp-apiserver")
		return internalError()
	}
}

func unavailable() *CloudError {
	return newCloudError(http.StatusServiceUnavailable, CodeServiceUnavailable, "", "The service is unavailable; retry the request later.")
}

func internalError() *CloudError {
	return newCloudError(http.StatusInternalServerError, CodeInternalServerError, "", "Internal server error.")
}

// invalidToCloudError maps a 422's causes to ARM's field paths; a cause whose field has no ARM
// counterpart keeps its message and names no target.
func invalidToCloudError(s metav1.Status, armPath func(string) (string, bool)) *CloudError {
	var causes []metav1.StatusCause
	if s.Details != nil {
		causes = s.Details.Causes
	}
	if len(causes) == 0 {
		return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "", "%s", s.Message)
	}
	bodies := make([]CloudErrBody, 0, len(causes))
	for _, c := range causes {
		target, ok := armPath(c.Field)
		// Which of the API's admission plugins refused is the service's business, not ARM's caller's.
		message := admissionPluginSuffix.ReplaceAllString(c.Message, "")
		if ok && c.Field != target {
			// The API's message may quote its own path; the caller knows only ARM's.
			message = strings.ReplaceAll(message, c.Field, target)
		}
		if !ok && c.Field != "" {
			// Said again in ARM's terms on the way out (inARMTerms).
			message = c.Field + ": " + message
		}
		bodies = append(bodies, CloudErrBody{Code: CodeInvalidRequestContent, Target: target, Message: message})
	}
	return multipleOrOne(bodies)
}

// admissionPluginSuffix is how the API's admission plugins sign their refusals.
var admissionPluginSuffix = regexp.MustCompile(` \(admission plugin [A-Za-z]+\)$`)

// armFieldPath maps a field path of an HCPCluster or NodePool (spec.network.podCIDR) to the ARM JSON
// path of the same field (properties.network.podCidr). Only spec maps, and the annotations, which
// hold the tags and are too large only when the tags are: the rest of metadata and status have no
// counterpart in a request.
func armFieldPath(apiPath string) (string, bool) {
	switch {
	case apiPath == "metadata.annotations" || strings.HasPrefix(apiPath, "metadata.annotations["):
		return "tags", true
	case apiPath == "spec.location":
		return "location", true
	case apiPath == "spec.identity" || strings.HasPrefix(apiPath, "spec.identity."):
		return strings.TrimPrefix(apiPath, "spec."), true
	case apiPath == "spec.clusterName" || apiPath == "spec.azure" || strings.HasPrefix(apiPath, "spec.azure."):
		return "", false
	case strings.HasPrefix(apiPath, "spec."):
		parts := strings.Split(strings.TrimPrefix(apiPath, "spec."), ".")
		for i, p := range parts {
			parts[i] = armSpelling(p)
		}
		return "properties." + strings.Join(parts, "."), true
	}
	return "", false
}

// subscriptionFieldPath maps a field path of an ARMSubscription to ARM's subscription document,
// which is its spec.
func subscriptionFieldPath(apiPath string) (string, bool) {
	if !strings.HasPrefix(apiPath, "spec.") {
		return "", false
	}
	parts := strings.Split(strings.TrimPrefix(apiPath, "spec."), ".")
	for i, p := range parts {
		parts[i] = armSpelling(p)
	}
	return strings.Join(parts, "."), true
}

// armSpelling spells an initialism at the end of a field name as ARM's JSON does (podCIDR ->
// podCidr, subnetID -> subnetId, issuerURL -> issuerUrl), keeping an index or key suffix.
func armSpelling(segment string) string {
	name, suffix := segment, ""
	if i := strings.IndexByte(segment, '['); i >= 0 {
		name, suffix = segment[:i], segment[i:]
	}
	for _, initialism := range []string{"CIDRs", "CIDR", "ID", "URL"} {
		if strings.HasSuffix(name, initialism) && len(name) > len(initialism) {
			spelled := initialism[:1] + strings.ToLower(initialism[1:])
			name = strings.TrimSuffix(name, initialism) + spelled
			break
		}
	}
	return name + suffix
}
