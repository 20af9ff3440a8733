package frontend

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armoperationstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// target names the object an operation follows, as it is after the shim's write.
func target(resource string, obj metav1.Object) hcpv1alpha1.ARMOperationTarget {
	return hcpv1alpha1.ARMOperationTarget{
		Resource:   resource,
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
		Generation: obj.GetGeneration(),
	}
}

// newOperation is the asynchronous operation request starts on resourceID, following t.
func (f *Frontend) newOperation(req *request, request hcpv1alpha1.ARMOperationRequest, resourceID, subscriptionID string, t hcpv1alpha1.ARMOperationTarget) *hcpv1alpha1.ARMOperation {
	return &hcpv1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: uuid.NewString(), Labels: names.SubscriptionLabels(subscriptionID)},
		Spec: hcpv1alpha1.ARMOperationSpec{
			Request:              request,
			ResourceID:           resourceID,
			SubscriptionID:       strings.ToLower(subscriptionID),
			Location:             f.location,
			Target:               t,
			APIVersion:           req.apiVersion,
			TenantID:             req.tenantID,
			ClientObjectID:       req.r.Header.Get(headerClientObjectID),
			ClientRequestID:      req.r.Header.Get(headerClientRequestID),
			CorrelationRequestID: req.r.Header.Get(headerCorrelationRequestID),
			NotificationURI:      req.r.Header.Get(headerAsyncNotificationURI),
		},
	}
}

// attachOperation has the create of obj record op in the create's own write: the server takes the
// annotation off, completes op's target with the new object and creates it (see
// hcpv1alpha1.ARMOperationAnnotation).
func attachOperation(obj metav1.Object, op *hcpv1alpha1.ARMOperation) error {
	value, err := json.Marshal(struct {
		Metadata metav1.ObjectMeta            `json:"metadata"`
		Spec     hcpv1alpha1.ARMOperationSpec `json:"spec"`
	}{metav1.ObjectMeta{Name: op.Name, Labels: op.Labels}, op.Spec})
	if err != nil {
		return err
	}
	obj.SetAnnotations(labels.Merge(obj.GetAnnotations(), map[string]string{hcpv1alpha1.ARMOperationAnnotation: string(value)}))
	return nil
}

// recordedWith completes op, which the server recorded with the create of obj (attachOperation), as the
// server did.
func recordedWith(req *request, op *hcpv1alpha1.ARMOperation, resource string, obj metav1.Object) {
	op.Spec.Target = target(resource, obj)
	req.logger.V(2).Info("Started ARM operation", "operation", op.Name, "request", op.Spec.Request, "resourceID", op.Spec.ResourceID)
}

// startOperation records an asynchronous operation on resourceID. It comes after the write it
// follows: when it fails the caller gets a 500 and ARM retries the request, which finds the write done.
func (f *Frontend) startOperation(req *request, request hcpv1alpha1.ARMOperationRequest, resourceID, subscriptionID string, t hcpv1alpha1.ARMOperationTarget) (*hcpv1alpha1.ARMOperation, error) {
	op := f.newOperation(req, request, resourceID, subscriptionID, t)
	created, err := f.client.HcpV1alpha1().ARMOperations().Create(req.ctx, op, metav1.CreateOptions{})
	if err != nil {
		req.logger.Error(err, "Recording the ARM operation failed after its write", "resourceID", resourceID, "request", request)
		return nil, internalError()
	}
	req.logger.V(2).Info("Started ARM operation", "operation", created.Name, "request", request, "resourceID", resourceID)
	return created, nil
}

// operationURL is the URL of an operation's status or result endpoint, on the host ARM was called at.
func (f *Frontend) operationURL(req *request, endpoint, subscriptionID, operationID string) string {
	ref := referer(req.r)
	u := url.URL{
		Scheme:   ref.Scheme,
		Host:     ref.Host,
		Path:     "/subscriptions/" + subscriptionID + providerPath + "/locations/" + f.location + "/" + endpoint + "/" + operationID,
		RawQuery: url.Values{"api-version": {req.apiVersion}}.Encode(),
	}
	return u.String()
}

// setAsyncHeaders tells ARM where to poll op: a PUT gets Azure-AsyncOperation only, PATCH, DELETE and
// POST get Location too.
func (f *Frontend) setAsyncHeaders(req *request, op *hcpv1alpha1.ARMOperation, withLocation bool) {
	h := req.w.Header()
	sub := req.vars["sub"]
	h.Set(headerAzureAsyncOperation, f.operationURL(req, "hcpOperationStatuses", sub, op.Name))
	if withLocation {
		h.Set("Location", f.operationURL(req, "hcpOperationResults", sub, op.Name))
	}
	if req.r.Header.Get(headerAsyncNotificationURI) != "" {
		h.Set(headerAsyncNotification, "Enabled")
	}
}

// visibleOperation reads the operation the path names, if the caller may see it: only the tenant and
// client that started it, in its subscription. Anyone else learns nothing, not even that it exists.
func (f *Frontend) visibleOperation(req *request) (*hcpv1alpha1.ARMOperation, error) {
	id := req.vars["operation"]
	missing := operationNotFound(id)
	op, err := f.client.HcpV1alpha1().ARMOperations().Get(req.ctx, strings.ToLower(id), metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return nil, missing
	}
	if err != nil {
		return nil, apiError(req.logger, err, nil)
	}
	if !strings.EqualFold(op.Spec.SubscriptionID, req.vars["sub"]) ||
		!sameCaller(op.Spec.TenantID, req.tenantID) ||
		!sameCaller(op.Spec.ClientObjectID, req.r.Header.Get(headerClientObjectID)) {
		return nil, missing
	}
	return op, nil
}

// sameCaller compares a tenant or object ID recorded with an operation with the caller's. They are
// GUIDs, in any case; an operation that recorded none (ARM sent no header) is its subscription's, as the
// public frontend has it.
func sameCaller(recorded, caller string) bool {
	return recorded == "" || strings.EqualFold(recorded, caller)
}

func operationNotFound(id string) *CloudError {
	return newCloudError(http.StatusNotFound, CodeNotFound, "", "The operation '%s' could not be found.", id)
}

func (f *Frontend) getOperationStatus(req *request) error {
	op, err := f.visibleOperation(req)
	if err != nil {
		return err
	}
	body := armoperationstatus.Of(op, req.vars["sub"], req.vars["location"])
	writeJSON(req.w, http.StatusOK, body)
	return nil
}

// getOperationResult answers as the frontend's result endpoint: 202 while the operation runs, 500 when
// it failed or was canceled, and when it succeeded what the request would have answered synchronously.
func (f *Frontend) getOperationResult(req *request) error {
	op, err := f.visibleOperation(req)
	if err != nil {
		return err
	}
	switch op.Status.State {
	case hcpv1alpha1.ARMOperationSucceeded:
	case hcpv1alpha1.ARMOperationFailed, hcpv1alpha1.ARMOperationCanceled:
		body := CloudErrBody{Code: CodeInternalServerError, Message: "The operation " + strings.ToLower(string(op.Status.State)) + "."}
		if e := op.Status.Error; e != nil {
			body = CloudErrBody{Code: e.Code, Message: e.Message, Target: e.Target}
		}
		return &CloudError{StatusCode: http.StatusInternalServerError, Body: body}
	default:
		req.w.Header().Set("Location", f.operationURL(req, "hcpOperationResults", req.vars["sub"], op.Name))
		req.w.WriteHeader(http.StatusAccepted)
		return nil
	}

	t := op.Spec.Target
	switch op.Spec.Request {
	case hcpv1alpha1.ARMOperationDelete, hcpv1alpha1.ARMOperationRevokeCredentials:
		req.w.WriteHeader(http.StatusNoContent)
		return nil
	case hcpv1alpha1.ARMOperationRequestCredential:
		return f.writeCredential(req, t.Namespace, t.Name)
	case hcpv1alpha1.ARMOperationCreate, hcpv1alpha1.ARMOperationUpdate:
		status := http.StatusOK
		if op.Spec.Request == hcpv1alpha1.ARMOperationCreate {
			status = http.StatusCreated
		}
		body, err := f.targetBody(req, t)
		if err != nil {
			return err
		}
		writeJSON(req.w, status, body)
		return nil
	default:
		req.logger.Error(nil, "ARM operation of an unknown request", "operation", op.Name, "request", op.Spec.Request)
		return internalError()
	}
}

// targetBody is the ARM body of the cluster, node pool or external auth an operation created or
// updated, as it is now; one that is gone, or was replaced by another of the same name, is not found.
func (f *Frontend) targetBody(req *request, t hcpv1alpha1.ARMOperationTarget) (any, error) {
	missing := newCloudError(http.StatusNotFound, CodeNotFound, "", "The resource of the operation no longer exists.")
	var (
		body any
		uid  types.UID
		err  error
	)
	v := req.resourceAPIVersion()
	switch t.Resource {
	case "hcpclusters":
		c, getErr := f.client.HcpV1alpha1().HCPClusters(t.Namespace).Get(req.ctx, t.Name, metav1.GetOptions{})
		if err = getErr; err == nil {
			uid = c.UID
			body, err = f.clusters.toARM(v, c, f.location)
		}
	case "nodepools":
		np, getErr := f.client.HcpV1alpha1().NodePools(t.Namespace).Get(req.ctx, t.Name, metav1.GetOptions{})
		if err = getErr; err == nil {
			uid = np.UID
			body, err = f.nodePools.toARM(v, np, f.location)
		}
	case "externalauths":
		ea, getErr := f.client.HcpV1alpha1().ExternalAuths(t.Namespace).Get(req.ctx, t.Name, metav1.GetOptions{})
		if err = getErr; err == nil {
			uid = ea.UID
			body, err = f.auths.toARM(v, ea, f.location)
		}
	default:
		return nil, internalError()
	}
	if apierrors.IsNotFound(err) || (err == nil && uid != t.UID) {
		return nil, missing
	}
	if err != nil {
		return nil, apiError(req.logger, err, nil)
	}
	return body, nil
}
