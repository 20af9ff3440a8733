package frontend

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// The handlers of one resource, the same for clusters and node pools.

func getResource[T any](f *Frontend, k *kind[T], req *request) error {
	res, err := parseResource(req)
	if err != nil {
		return err
	}
	obj, found, err := k.getResource(req, res)
	if err != nil {
		return err
	}
	if !found {
		return res.notFound()
	}
	body, err := k.toARM(req.resourceAPIVersion(), obj, f.location)
	if err != nil {
		return apiError(req.logger, err, res)
	}
	writeJSON(req.w, http.StatusOK, body)
	return nil
}

// putResource creates (201) or replaces (200) a resource, then records the operation that follows it.
func putResource[T any](f *Frontend, k *kind[T], req *request) error {
	return retryStale(func() error { return putOnce(f, k, req) })
}

// maxStaleWrites bounds how often a write is redone because the object changed since it was read
// (controllers write status all the time, and each status write is a new resourceVersion).
const maxStaleWrites = 5

// errStale says an update lost a race with another write of the object: it is done again from a
// fresh read, which the caller never sees.
var errStale = errors.New("the object changed since it was read")

// isStaleWrite tells a lost race on resourceVersion from the 409 of an admission plugin, whose
// message the caller must see.
func isStaleWrite(err error) bool {
	return apierrors.IsConflict(err) && strings.Contains(err.Error(), "the object has been modified")
}

func retryStale(write func() error) error {
	for attempt := 1; ; attempt++ {
		err := write()
		if !errors.Is(err, errStale) {
			return err
		}
		if attempt == maxStaleWrites {
			return conflict("The resource is changing too often to be written; retry the request.")
		}
	}
}

func putOnce[T any](f *Frontend, k *kind[T], req *request) error {
	res, err := parseResource(req)
	if err != nil {
		return err
	}
	// Most PUTs create: the create is tried first, with no read before it; a create that the API refuses
	// is done again from a fresh read when the name turns out to be taken (see replacesRefusedCreate).
	var existing T
	found := false
	if req.freshReads {
		// What follows may replace the resource, a write the server does not check the subscription for.
		if err := f.confirmSubscription(req); err != nil {
			return err
		}
		if existing, found, err = k.getResource(req, res); err != nil {
			return err
		}
	}
	if found {
		if err := allowReplace(f, k, req, res, existing); err != nil {
			return err
		}
	}
	if k.parentAllows != nil {
		verb := "create"
		if found {
			verb = "update"
		}
		if err := k.parentAllows(req, res, verb); err != nil {
			var busy *CloudError
			if errors.As(err, &busy) && busy.StatusCode == http.StatusConflict && !req.freshReads {
				// Whether this PUT creates or replaces is what the refusal says: read, then refuse.
				req.freshReads = true
				return errStale
			}
			return err
		}
	}
	if err := checkBodyName(req, res); err != nil {
		return err
	}
	return writeResource(f, k, req, res, req.body, existing, found, false)
}

// allowReplace refuses a PUT on a busy resource, unless the resource is busy with a write whose
// operation was never recorded: that is ARM retrying a PUT the shim answered with a 500.
func allowReplace[T any](f *Frontend, k *kind[T], req *request, res *armResource, existing T) error {
	meta := k.meta(existing)
	busy := provisioningConflict(res, actionUpdate, k.state(existing), meta.GetDeletionTimestamp() != nil)
	if busy == nil || meta.GetDeletionTimestamp() != nil {
		return busy
	}
	recorded, err := f.operationRecorded(req, meta, hcpv1alpha1.ARMOperationCreate, hcpv1alpha1.ARMOperationUpdate)
	if err != nil {
		return err
	}
	if recorded {
		return busy
	}
	return nil
}

// operationRecorded tells whether an operation of one of the requests follows obj at its current generation.
func (f *Frontend) operationRecorded(req *request, obj metav1.Object, requests ...hcpv1alpha1.ARMOperationRequest) (bool, error) {
	opts := metav1.ListOptions{LabelSelector: names.SubscriptionSelector(req.vars["sub"]), Limit: 500}
	for {
		ops, err := f.client.HcpV1alpha1().ARMOperations().List(req.ctx, opts)
		if err != nil {
			return false, apiError(req.logger, err, nil)
		}
		for _, op := range ops.Items {
			if op.Spec.Target.UID == obj.GetUID() && op.Spec.Target.Generation == obj.GetGeneration() && slices.Contains(requests, op.Spec.Request) {
				return true, nil
			}
		}
		if ops.Continue == "" {
			return false, nil
		}
		opts.Continue = ops.Continue
	}
}

// patchResource merges a JSON merge patch onto the resource as the request's api-version shows it,
// and writes the result as a PUT would.
func patchResource[T any](f *Frontend, k *kind[T], req *request) error {
	return retryStale(func() error { return patchOnce(f, k, req) })
}

// checkBodyName refuses a body whose name is not the one its path gives, as the public frontend does
// once it knows the resource may be written (to the letter: a name in another case is another name, and
// only the key "name" is the name). The body's id and type are read-only and ignored; a body that is not
// JSON is refused by its conversion.
func checkBodyName(req *request, res *armResource) error {
	var body map[string]json.RawMessage
	var name string
	if json.Unmarshal(req.body, &body) != nil || json.Unmarshal(body["name"], &name) != nil || name == "" {
		return nil
	}
	if name != res.obj.ID.Name {
		return fieldErrorsToCloudError(field.ErrorList{
			field.Invalid(field.NewPath("name"), name, "name must match resourceID path: "+res.id)})
	}
	return nil
}

func patchOnce[T any](f *Frontend, k *kind[T], req *request) error {
	res, err := parseResource(req)
	if err != nil {
		return err
	}
	existing, found, err := k.getResource(req, res)
	if err != nil {
		return err
	}
	if !found {
		return res.notFound()
	}
	meta := k.meta(existing)
	if err := provisioningConflict(res, actionUpdate, k.state(existing), meta.GetDeletionTimestamp() != nil); err != nil {
		return err
	}
	if k.parentAllows != nil {
		if err := k.parentAllows(req, res, "update"); err != nil {
			return err
		}
	}
	// The name the caller sent: the merged document has the resource's own.
	if err := checkBodyName(req, res); err != nil {
		return err
	}
	current, err := k.toARM(req.resourceAPIVersion(), existing, f.location)
	if err != nil {
		return apiError(req.logger, err, res)
	}
	currentJSON, err := json.Marshal(current)
	if err != nil {
		return apiError(req.logger, err, res)
	}
	doc, patch, err := decodeForMerge(currentJSON, req.body)
	if err != nil {
		return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "", "The request content was invalid and could not be deserialized: %v", err)
	}
	if docMap, ok := doc.(map[string]any); ok {
		if patchMap, ok := patch.(map[string]any); ok {
			if errs := conversion.CheckRemovals(req.resourceAPIVersion(), res.obj.Kind, docMap, patchMap); len(errs) > 0 {
				return fieldErrorsToCloudError(errs)
			}
		}
	}
	mergedDoc := mergeValue(doc, patch)
	// The conversion reads a PUT's absent tags as "keep them"; a patch that removed them ({"tags": null})
	// means none.
	if before, ok := doc.(map[string]any); ok {
		if after, ok := mergedDoc.(map[string]any); ok && before["tags"] != nil && after["tags"] == nil {
			after["tags"] = map[string]any{}
		}
	}
	merged, err := json.Marshal(mergedDoc)
	if err != nil {
		return apiError(req.logger, err, res)
	}
	return writeResource(f, k, req, res, merged, existing, true, true)
}

// systemDataHeader is ARM's x-ms-arm-resource-system-data header, or "" when it is absent or not a
// systemData object: as the public frontend, the shim logs a malformed one and goes on without it,
// for it says who made the request, not what the request asks for.
func systemDataHeader(req *request) string {
	if req.systemDataRead {
		return req.systemData
	}
	req.systemData, req.systemDataRead = req.r.Header.Get(headerSystemData), true
	if _, err := conversion.ParseSystemData(req.systemData); err != nil {
		req.logger.Error(err, "Ignoring the system data header")
		req.systemData = ""
	}
	return req.systemData
}

// writeResource converts body, writes the object and records its operation.
func writeResource[T any](f *Frontend, k *kind[T], req *request, res *armResource, body []byte, existing T, found, patch bool) error {
	if err := f.checkLocation(body); err != nil {
		return err
	}
	systemData := systemDataHeader(req)
	if systemData == "" && !found {
		systemData = defaultSystemData(time.Now())
	}
	creq := conversion.Request{APIVersion: req.resourceAPIVersion(), ResourceID: res.id, Body: body, SystemData: systemData,
		IdentityURL: req.r.Header.Get(headerIdentityURL)}
	var prior T
	if found {
		prior = existing
	}
	obj, errs := k.fromARM(creq, prior)
	if len(errs) > 0 {
		return fieldErrorsToCloudError(errs)
	}
	var written T
	var err error
	var op *hcpv1alpha1.ARMOperation
	request := hcpv1alpha1.ARMOperationUpdate
	if found {
		written, err = k.update(req.ctx, obj, metav1.UpdateOptions{})
		if isStaleWrite(err) {
			return errStale
		}
	} else {
		request = hcpv1alpha1.ARMOperationCreate
		meta := k.meta(obj)
		meta.SetLabels(labels.Merge(meta.GetLabels(), names.SubscriptionLabels(res.subscription())))
		// The server writes the operation with the object: one write, and no object without its operation.
		op = f.newOperation(req, request, res.id, res.subscription(), hcpv1alpha1.ARMOperationTarget{})
		if err := attachOperation(meta, op); err != nil {
			return apiError(req.logger, err, res)
		}
		requireSubscription(req, meta)
		written, err = k.create(req.ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) && !req.freshReads {
			req.freshReads = true // the name is taken: this is a replace
			return errStale
		}
		if isMissingNamespace(err) {
			// Behind kube-apiserver, NamespaceLifecycle refuses objects of a namespace it does not
			// have: the first resource of a resource group makes the group's namespace.
			if err := f.ensureNamespace(req, res); err != nil {
				return err
			}
			written, err = k.create(req.ctx, obj, metav1.CreateOptions{})
		}
		if subscriptionChanged(err) {
			// ARM changed the subscription since the cache read it: refused as it is now, or created again.
			if err := f.confirmSubscription(req); err != nil {
				return err
			}
			return errStale
		}
		if apierrors.IsNotFound(err) {
			// The resource's namespace is the service's to provide, not the caller's fault.
			req.logger.Error(err, "Creating in the namespace of the resource group failed", "namespace", res.obj.Namespace)
			return internalError()
		}
		if err != nil && replacesRefusedCreate(k, req, res, err) {
			return errStale
		}
	}
	if err != nil {
		return apiError(req.logger, err, res)
	}
	if op == nil {
		if op, err = f.startOperation(req, request, res.id, res.subscription(), target(k.resource, k.meta(written))); err != nil {
			return err
		}
	} else {
		recordedWith(req, op, k.resource, k.meta(written))
	}
	out, err := k.toARM(req.resourceAPIVersion(), written, f.location)
	if err != nil {
		return apiError(req.logger, err, res)
	}
	status := http.StatusOK
	switch {
	case patch:
		status = http.StatusAccepted
	case !found:
		status = http.StatusCreated
	}
	f.setAsyncHeaders(req, op, patch)
	writeJSON(req.w, status, out)
	return nil
}

// replacesRefusedCreate tells whether a create that the API refused, with no read before it, was a PUT
// on a resource that exists, to be done again as a replace. The API checks a create in full before it
// finds the name taken, so a replace can be refused for what only a new object is refused for, such as
// a version the catalog no longer offers to new clusters. Only the API's refusals (4xx) are read for: a
// create that failed otherwise may have been written, and goes back to ARM, which retries it.
func replacesRefusedCreate[T any](k *kind[T], req *request, res *armResource, err error) bool {
	if req.freshReads {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	if code < 400 || code >= 500 || code == http.StatusTooManyRequests {
		return false
	}
	if _, found, rerr := k.getResource(req, res); rerr != nil || !found {
		return false
	}
	req.freshReads = true
	return true
}

// deleteResource deletes a resource (202), or answers 204 when there is none.
func deleteResource[T any](f *Frontend, k *kind[T], req *request) error {
	res, err := parseResource(req)
	if err != nil {
		return err
	}
	existing, found, err := k.getResource(req, res)
	if err != nil {
		return err
	}
	if !found {
		req.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	meta := k.meta(existing)
	uid := meta.GetUID()
	// The resource's own state first, then its parent's, as the public frontend checks them.
	busy := provisioningConflict(res, actionDelete, k.state(existing), meta.GetDeletionTimestamp() != nil)
	if busy != nil {
		// Already being deleted: by an earlier DELETE, unless that one's operation was never recorded
		// and this is ARM retrying it.
		recorded, err := f.operationRecorded(req, meta, hcpv1alpha1.ARMOperationDelete)
		if err != nil {
			return err
		}
		if recorded {
			return busy
		}
	}
	if k.parentAllows != nil {
		if err := k.parentAllows(req, res, "delete"); err != nil {
			return err
		}
	}
	if busy == nil {
		err = k.delete(req.ctx, res.obj.Namespace, res.obj.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil {
			return apiError(req.logger, err, res)
		}
	}
	// The object stays while its finalizers run, with the generation its deletion gave it.
	t := target(k.resource, meta)
	if after, found, err := k.getResource(req, res); err == nil && found && k.meta(after).GetUID() == uid {
		t = target(k.resource, k.meta(after))
	}
	op, err := f.startOperation(req, hcpv1alpha1.ARMOperationDelete, res.id, res.subscription(), t)
	if err != nil {
		return err
	}
	f.setAsyncHeaders(req, op, true)
	req.w.WriteHeader(http.StatusAccepted)
	return nil
}

// decodeForMerge decodes a document and an RFC 7386 JSON merge patch of it. Numbers stay as they
// were written (json.Number), so the merged document gives the conversion "10.0" or "1e1" where the
// patch did, and a PATCH refuses a number in an integer field exactly as a PUT does.
func decodeForMerge(doc, patch []byte) (any, any, error) {
	var d, p any
	if err := decodeNumbers(doc, &d); err != nil {
		return nil, nil, err
	}
	if err := decodeNumbers(patch, &p); err != nil {
		return nil, nil, err
	}
	return d, p, nil
}

func decodeNumbers(data []byte, into *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return err
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		return errors.New("the document goes on after its top-level value")
	}
	return nil
}

// mergePatch applies an RFC 7386 JSON merge patch to a JSON document.
func mergePatch(doc, patch []byte) ([]byte, error) {
	d, p, err := decodeForMerge(doc, patch)
	if err != nil {
		return nil, err
	}
	return json.Marshal(mergeValue(d, p))
}

func mergeValue(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	} else {
		d = maps.Clone(d)
	}
	for k, v := range p {
		if v == nil {
			delete(d, k)
			continue
		}
		d[k] = mergeValue(d[k], v)
	}
	return d
}
