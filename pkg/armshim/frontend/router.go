package frontend

import (
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
)

// maxBodyBytes is the largest request body the frontend takes. hcp-apiserver refuses requests over
// 3 MiB, and the object the shim writes carries more than the body (status, annotations, its own
// encoding), so the shim stops well under that: a body it takes is one the API takes.
const maxBodyBytes = 2 << 20

// Headers ARM sends and the frontend answers with.
const (
	headerRequestID             = "X-Ms-Request-Id"
	headerClientRequestID       = "X-Ms-Client-Request-Id"
	headerReturnClientRequestID = "X-Ms-Return-Client-Request-Id"
	headerCorrelationRequestID  = "X-Ms-Correlation-Request-Id"
	headerHomeTenantID          = "X-Ms-Home-Tenant-Id"
	headerClientObjectID        = "X-Ms-Client-Object-Id"
	headerSystemData            = "X-Ms-Arm-Resource-System-Data"
	headerIdentityURL           = "X-Ms-Identity-Url"
	headerAsyncNotificationURI  = "Azure-AsyncNotificationUri"
	headerAsyncNotification     = "Azure-AsyncNotification"
	headerAzureAsyncOperation   = "Azure-AsyncOperation"
)

const (
	// subscriptionAPIVersion is the api-version of ARM's subscription lifecycle calls.
	subscriptionAPIVersion = "2.0"
	// providerPath is the provider's part of the URLs the frontend builds, in ARM's spelling.
	providerPath = "/providers/Microsoft.RedHatOpenShift"
)

// versionRule says which api-versions a route takes.
type versionRule int

const (
	// resourceVersions are the four api-versions of the resource provider.
	resourceVersions versionRule = iota
	// subscriptionVersion is ARM's subscription lifecycle api-version, 2.0.
	subscriptionVersion
	// anyVersion skips the check, as the frontend does for its operations list.
	anyVersion
)

// route is one path of the contract. Its pattern's literal segments match without regard to case;
// a {name} segment matches any one segment and keeps it as sent.
type route struct {
	pattern  string
	segments []string
	methods  map[string]handlerFunc
	versions versionRule
	// resourceType names the route's resources in an unknown api-version's message.
	resourceType string
	// gated routes are refused as the subscription's state says.
	gated bool
}

type handlerFunc func(*request) error

// request is one ARM request on its way through the frontend.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context
	logger klog.Logger
	// vars are the route's {name} segments as sent.
	vars       map[string]string
	apiVersion string
	body       []byte
	// subscription is the caller's subscription on a gated route.
	subscription *hcpv1alpha1.ARMSubscription
	// subscriptionFromCache: the subscription was read from the informer's cache (a PUT's, Registered),
	// not from the API (see Frontend.subscription).
	subscriptionFromCache bool
	// tenantID is x-ms-home-tenant-id, or the subscription's tenant when ARM left it out.
	tenantID string
	// freshReads makes a PUT read its object (from etcd) before it writes, once a create without that
	// read found the name taken.
	freshReads bool
	// resource is the path's resource once parseResource parsed it: the path's check and the handler
	// both need it, and parsing an ARM ID is a good part of what the shim does for a request.
	resource *armResource
	// systemData is the system data header once systemDataHeader read it (systemDataRead).
	systemData     string
	systemDataRead bool
}

func (r *request) resourceAPIVersion() conversion.APIVersion {
	return conversion.APIVersion(r.apiVersion)
}

func newRoute(pattern string, versions versionRule, resourceType string, gated bool, methods map[string]handlerFunc) *route {
	return &route{
		pattern:      pattern,
		segments:     strings.Split(strings.Trim(pattern, "/"), "/"),
		methods:      methods,
		versions:     versions,
		resourceType: resourceType,
		gated:        gated,
	}
}

// match returns the {name} values of path, or false.
func (rt *route) match(path string) (map[string]string, bool) {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	if len(segments) != len(rt.segments) {
		return nil, false
	}
	vars := map[string]string{}
	for i, want := range rt.segments {
		got := segments[i]
		if strings.HasPrefix(want, "{") {
			if got == "" {
				return nil, false
			}
			vars[strings.Trim(want, "{}")] = got
			continue
		}
		if !strings.EqualFold(want, got) {
			return nil, false
		}
	}
	return vars, true
}

// ServeHTTP runs what the frontend's middleware runs for every request (correlation headers, routing
// without regard to case, api-version, body checks, subscription state), then the route's handler.
func (f *Frontend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := uuid.NewString()
	w.Header().Set(headerRequestID, requestID)
	if strings.EqualFold(r.Header.Get(headerReturnClientRequestID), "true") {
		if id := r.Header.Get(headerClientRequestID); id != "" {
			w.Header().Set(headerClientRequestID, id)
		}
	}
	logger := klog.FromContext(r.Context()).WithValues("requestID", requestID, "method", r.Method, "path", r.URL.Path)
	ctx := klog.NewContext(r.Context(), logger)
	sw := &statusWriter{ResponseWriter: w}
	w = sw
	start := time.Now()
	defer func() {
		logger.V(2).Info("ARM request", "status", sw.status, "duration", time.Since(start),
			"correlationRequestID", r.Header.Get(headerCorrelationRequestID), "clientRequestID", r.Header.Get(headerClientRequestID))
	}()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			logger.Error(nil, "Panic serving an ARM request", "panic", p, "stack", string(debug.Stack()))
			writeCloudError(w, internalError())
		}
	}()

	req := &request{w: w, r: r, ctx: ctx, logger: logger}
	rt, err := f.route(req)
	if err == nil {
		err = f.admit(req, rt)
	}
	if err == nil {
		err = rt.methods[r.Method](req)
	}
	if err != nil {
		ce := apiError(logger, err, nil)
		f.inARMTerms(req, ce)
		writeCloudError(w, ce)
	}
}

// statusWriter remembers the status of a response, for the request's log line.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// route finds the request's route. A path served for other methods only is not found either, as the
// public frontend answers it: ARM's callers meet one 404 for whatever the provider does not serve.
func (f *Frontend) route(req *request) (*route, error) {
	for _, rt := range f.routes {
		// The method first: a map lookup, where matching the path splits it and allocates its variables.
		if _, ok := rt.methods[req.r.Method]; !ok {
			continue
		}
		if vars, ok := rt.match(req.r.URL.Path); ok {
			req.vars = vars
			return rt, nil
		}
	}
	return nil, newCloudError(http.StatusNotFound, CodeNotFound, "", "The requested path could not be found.")
}

// admit checks the path's names, the api-version, the body and the subscription's state.
func (f *Frontend) admit(req *request, rt *route) error {
	if err := checkPath(req); err != nil {
		return err
	}
	if err := checkAPIVersion(req, rt); err != nil {
		return err
	}
	if err := readBody(req); err != nil {
		return err
	}
	if err := checkNotificationURI(req.r.Header.Get(headerAsyncNotificationURI)); err != nil {
		return err
	}
	req.tenantID = req.r.Header.Get(headerHomeTenantID)
	if rt.gated {
		return f.checkSubscription(req)
	}
	return nil
}

// checkPath applies ARM's rules to the names in the path before anything uses them: the API takes
// fewer characters than a path can carry ('.', '..', '%', '/' sent encoded), and a name it or its
// client refuses must be the caller's 400 or 404, not the shim's 500.
func checkPath(req *request) error {
	path := req.r.URL.Path
	if sub, ok := req.vars["sub"]; ok && !names.IsGUID(sub) {
		return newCloudError(http.StatusBadRequest, CodeInvalidSubscriptionID, path,
			"The provided subscription identifier '%s' is malformed or invalid.", sub)
	}
	if rg, ok := req.vars["rg"]; ok && !names.ValidResourceGroup(rg) {
		return newCloudError(http.StatusBadRequest, CodeInvalidResourceGroupName, path,
			"Resource group '%s' is invalid: it must be 1 to 90 letters, digits, '_', '(', ')', '-' or '.', and not end with '.'.", rg)
	}
	if _, ok := req.vars["cluster"]; ok {
		if _, err := parseResource(req); err != nil {
			return err
		}
	}
	if d, ok := req.vars["deployment"]; ok && !names.ValidDeploymentName(d) {
		return newCloudError(http.StatusBadRequest, CodeInvalidResourceName, path,
			"The deployment name '%s' is invalid: it must be 1 to 64 letters, digits, '_', '(', ')', '-' or '.'.", d)
	}
	// Operation IDs are the GUIDs the shim issues; anything else is an operation that does not exist.
	if op, ok := req.vars["operation"]; ok && !names.IsGUID(op) {
		return operationNotFound(op)
	}
	return nil
}

func checkAPIVersion(req *request, rt *route) error {
	if rt.versions == anyVersion {
		return nil
	}
	v, ok := queryValue(req.r.URL, "api-version")
	if !ok || v == "" {
		return newCloudError(http.StatusBadRequest, CodeInvalidParameter, "", "The request is missing required parameter 'api-version'.")
	}
	known := v == subscriptionAPIVersion
	if rt.versions == resourceVersions {
		_, err := conversion.ParseAPIVersion(v)
		known = err == nil
	}
	if !known {
		return newCloudError(http.StatusBadRequest, CodeInvalidResourceType, "",
			"The resource type '%s' could not be found API version '%s'.", rt.resourceType, v)
	}
	req.apiVersion = v
	return nil
}

// readBody reads a body of at most maxBodyBytes, which must be JSON nesting no deeper than
// jsonlimit.MaxDepth: a deeper one is refused as it is read, before anything decodes it.
func readBody(req *request) error {
	switch req.r.Method {
	case http.MethodPut, http.MethodPatch, http.MethodPost:
	default:
		return nil
	}
	if req.r.ContentLength > maxBodyBytes {
		return tooLarge()
	}
	body, err := io.ReadAll(jsonlimit.NewReader(io.LimitReader(req.r.Body, maxBodyBytes+1), jsonlimit.MaxDepth))
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return tooLarge()
		}
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			// The server's read timeout ended a body sent too slowly; the connection closes after this.
			return newCloudError(http.StatusRequestTimeout, CodeRequestTimeout, "", "The request body was not received in time.")
		}
		var deep *jsonlimit.TooDeepError
		if errors.As(err, &deep) {
			return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "",
				"The request content was invalid and could not be deserialized: %v.", deep)
		}
		return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "", "The request body could not be read: %v", err)
	}
	if len(body) > maxBodyBytes {
		return tooLarge()
	}
	if len(body) > 0 {
		mediaType, _, err := mime.ParseMediaType(req.r.Header.Get("Content-Type"))
		if err != nil || !strings.EqualFold(mediaType, "application/json") {
			return newCloudError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "",
				"The content media type '%s' is not supported. Only 'application/json' is supported.", req.r.Header.Get("Content-Type"))
		}
	}
	req.body = body
	return nil
}

func tooLarge() *CloudError {
	return newCloudError(http.StatusBadRequest, CodeInvalidResource, "",
		"The resource definition is invalid: the request body is larger than %d MiB.", maxBodyBytes>>20)
}

// queryValue reads a query parameter whose key is given in any case, as ARM's are.
func queryValue(u *url.URL, key string) (string, bool) {
	for k, vs := range u.Query() {
		if strings.EqualFold(k, key) && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

// referer is the URL ARM was called at, which the frontend builds the links it returns from. A
// request that did not come through ARM has none, and gets its own URL.
func referer(r *http.Request) *url.URL {
	if ref, err := url.Parse(r.Header.Get("Referer")); err == nil && ref.Scheme != "" && ref.Host != "" {
		return ref
	}
	scheme := "https"
	if r.TLS == nil {
		scheme = "http"
	}
	return &url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
}

// checkNotificationURI refuses, by the API's rule, an Azure-AsyncNotificationUri the service could not
// POST to, before anything is written: the operation that keeps it is made after the resource's write.
func checkNotificationURI(uri string) error {
	if uri == "" || len(validation.ValidateNotificationURI(field.NewPath("spec", "notificationURI"), uri)) == 0 {
		return nil
	}
	return newCloudError(http.StatusBadRequest, CodeInvalidParameter, headerAsyncNotificationURI,
		"The %s header must be an absolute https URL of at most %d characters.", headerAsyncNotificationURI, validation.MaxURLLength)
}
