package azure

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// CloudError is Azure Resource Manager's error body, kept whole so that a controller can write a
// condition that says what Azure said, not only a status code.
type CloudError struct {
	StatusCode int
	Code       string
	Message    string
	Target     string
	Details    []CloudErrorBody
	// RequestID is what Azure support asks for.
	RequestID string

	// cause is the SDK's *azcore.ResponseError, kept for errors.As.
	cause error
}

// CloudErrorBody is one entry of an error's details.
type CloudErrorBody struct {
	Code    string           `json:"code,omitempty"`
	Message string           `json:"message,omitempty"`
	Target  string           `json:"target,omitempty"`
	Details []CloudErrorBody `json:"details,omitempty"`
}

func (e *CloudError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Azure answered %d", e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Target != "" {
		fmt.Fprintf(&b, " (target %s)", e.Target)
	}
	for _, d := range e.Details {
		fmt.Fprintf(&b, "; %s: %s", d.Code, d.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

func (e *CloudError) Unwrap() error { return e.cause }

// IsNotFound reports whether Azure answered 404.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsPreconditionFailed reports whether an If-Match or If-None-Match did not hold: someone else
// changed or created the resource since it was read.
func IsPreconditionFailed(err error) bool { return hasStatus(err, http.StatusPreconditionFailed) }

// IsRefusal reports whether Azure refused the request for good: a 4xx other than a timeout or
// throttling, which asking again at once would get again (a policy, a missing permission, a bad request).
func IsRefusal(err error) bool {
	var ce *CloudError
	if !errors.As(err, &ce) {
		return false
	}
	return ce.StatusCode >= 400 && ce.StatusCode < 500 &&
		ce.StatusCode != http.StatusRequestTimeout && ce.StatusCode != http.StatusTooManyRequests
}

func hasStatus(err error, status int) bool {
	var ce *CloudError
	if errors.As(err, &ce) {
		return ce.StatusCode == status
	}
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// cloudError turns the SDK's *azcore.ResponseError into a *CloudError that wraps it; other errors
// (transport, credential, context) pass through unchanged.
func cloudError(err error) error {
	var ce *CloudError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	out := &CloudError{StatusCode: re.StatusCode, Code: re.ErrorCode, cause: err}
	if re.RawResponse != nil {
		out.RequestID = re.RawResponse.Header.Get("x-ms-request-id")
		// The SDK has already read the body and kept it, so it can be read again here.
		if body, readErr := runtime.Payload(re.RawResponse); readErr == nil {
			var parsed struct {
				Error *CloudErrorBody `json:"error"`
			}
			if json.Unmarshal(body, &parsed) == nil && parsed.Error != nil {
				if parsed.Error.Code != "" {
					out.Code = parsed.Error.Code
				}
				out.Message = parsed.Error.Message
				out.Target = parsed.Error.Target
				out.Details = parsed.Error.Details
			}
		}
	}
	return out
}

// NotOursError says that a resource the service would create already exists and does not carry
// the service's ownership tag for this cluster; adopting it could hand a customer's resources to
// a cluster, or delete them with it.
type NotOursError struct {
	// ResourceID names the resource.
	ResourceID string
	// Tags are the resource's tags as found.
	Tags map[string]string
}

func (e *NotOursError) Error() string {
	keys := make([]string, 0, len(e.Tags))
	for k := range e.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tags := make([]string, 0, len(keys))
	for _, k := range keys {
		tags = append(tags, k+"="+e.Tags[k])
	}
	return fmt.Sprintf("%s already exists and is not this cluster's (its %s tag does not name the cluster; tags: {%s}): remove it or choose another name",
		e.ResourceID, OwnershipTag, strings.Join(tags, ", "))
}
