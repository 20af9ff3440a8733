package frontend

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// checkSubscription lets a request through as the subscription's state allows: Registered for
// everything, Warned and Suspended for reads and deletes only, nothing else.
func (f *Frontend) checkSubscription(req *request) error {
	name := strings.ToLower(req.vars["sub"])
	s, err := f.subscription(req, name)
	return admitSubscription(req, s, err)
}

// admitSubscription lets the request through as the subscription s, as read, allows.
func admitSubscription(req *request, s *hcpv1alpha1.ARMSubscription, err error) error {
	sub := req.vars["sub"]
	if apierrors.IsNotFound(err) {
		return unregistered(sub)
	}
	if err != nil {
		return apiError(req.logger, err, nil)
	}
	if err := subscriptionAllows(s.Spec.State, sub, req.r.Method); err != nil {
		return err
	}
	req.subscription = s
	if req.tenantID == "" && s.Spec.Properties != nil {
		req.tenantID = s.Spec.Properties.TenantID
	}
	return nil
}

// subscription reads a subscription from the informer's cache when there is one and the request only
// reads: every request checks its subscription, and states change seldom. A request that writes must see
// every subscription state ARM was told was stored, through whichever replica of the shim stored it, so
// it reads the subscription from the API, a quorum read of etcd; except a PUT, which tries a create first,
// when the cache has the subscription Registered: the create carries the version it was read at, and the
// server writes it only while the subscription is still at that version (requireSubscription); any other
// write of the request reads the subscription from the API first (confirmSubscription). A miss of the
// cache asks the API too, for a subscription registered a moment ago.
func (f *Frontend) subscription(req *request, name string) (*hcpv1alpha1.ARMSubscription, error) {
	if f.subs != nil {
		if s, err := f.subs.Get(name); err == nil {
			switch {
			case req.r.Method == http.MethodGet:
				return s, nil
			case req.r.Method == http.MethodPut && s.Spec.State == hcpv1alpha1.ARMSubscriptionRegistered && s.ResourceVersion != "":
				req.subscriptionFromCache = true
				return s, nil
			}
		}
	}
	return f.client.HcpV1alpha1().ARMSubscriptions().Get(req.ctx, name, metav1.GetOptions{})
}

// confirmSubscription reads the subscription from the API, and checks its state again, when the request
// read it from the cache: before a write that does not require it unchanged, or once a create that did
// found it changed.
func (f *Frontend) confirmSubscription(req *request) error {
	if !req.subscriptionFromCache {
		return nil
	}
	req.subscriptionFromCache = false
	s, err := f.client.HcpV1alpha1().ARMSubscriptions().Get(req.ctx, strings.ToLower(req.vars["sub"]), metav1.GetOptions{})
	return admitSubscription(req, s, err)
}

// requireSubscription has the create of obj written only while the subscription is at the version the
// request read it at from the cache (hcp.aro.azure.com/arm-subscription-version, beside the operation).
func requireSubscription(req *request, obj metav1.Object) {
	if req.subscriptionFromCache {
		obj.SetAnnotations(labels.Merge(obj.GetAnnotations(),
			map[string]string{hcpv1alpha1.ARMSubscriptionVersionAnnotation: req.subscription.ResourceVersion}))
	}
}

// subscriptionChanged tells the server's refusal of a create that required the subscription unchanged.
func subscriptionChanged(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Reason == metav1.StatusReasonConflict && s.Details != nil &&
		s.Details.Group == hcpv1alpha1.SchemeGroupVersion.Group && s.Details.Kind == "armsubscriptions"
}

// subscriptionAllows is the frontend's table of subscription states.
func subscriptionAllows(state hcpv1alpha1.ARMSubscriptionState, sub, method string) error {
	switch state {
	case hcpv1alpha1.ARMSubscriptionRegistered:
		return nil
	case hcpv1alpha1.ARMSubscriptionUnregistered:
		return unregistered(sub)
	case hcpv1alpha1.ARMSubscriptionWarned, hcpv1alpha1.ARMSubscriptionSuspended:
		if method == http.MethodGet || method == http.MethodDelete {
			return nil
		}
		return newCloudError(http.StatusConflict, CodeInvalidSubscriptionState, "",
			"Request is not allowed in subscription in state '%s'.", state)
	case hcpv1alpha1.ARMSubscriptionDeleted:
		return newCloudError(http.StatusBadRequest, CodeInvalidSubscriptionState, "",
			"Request is not allowed in subscription in state '%s'.", state)
	default:
		return newCloudError(http.StatusInternalServerError, CodeInternalServerError, "",
			"Subscription '%s' is in an unknown state '%s'.", sub, state)
	}
}

func unregistered(sub string) *CloudError {
	return newCloudError(http.StatusBadRequest, CodeInvalidSubscriptionState, "",
		"Request is not allowed in unregistered subscription '%s'.", sub)
}

// putSubscription stores ARM's subscription document as the ARMSubscription named after the
// lowercased subscription ID, and answers with what was stored. As the frontend, it requires what
// ARM always sends (a state it knows and the registration date) and stores the properties as they
// come: they are ARM's own, not a customer's input.
func (f *Frontend) putSubscription(req *request) error {
	var doc subscriptionDocument
	if err := json.Unmarshal(req.body, &doc); err != nil {
		return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "", "The request content was invalid and could not be deserialized: %v", err)
	}
	if doc.RegistrationDate == "" {
		return fieldErrorsToCloudError(field.ErrorList{field.Required(field.NewPath("registrationDate"), "")})
	}
	body := doc.toSpec()
	var stored *hcpv1alpha1.ARMSubscription
	// The subscription's controller writes its status: a write that lost the race with it, or with
	// another notification, is done again from a fresh read, as ARM expects its PUT to be answered 200.
	err := retryStale(func() error {
		var err error
		stored, err = f.storeSubscription(req, strings.ToLower(req.vars["sub"]), body)
		if isStaleWrite(err) || apierrors.IsAlreadyExists(err) {
			return errStale
		}
		return err
	})
	var status apierrors.APIStatus
	if apierrors.IsInvalid(err) && errors.As(err, &status) {
		return invalidToCloudError(status.Status(), subscriptionFieldPath)
	}
	if err != nil {
		// A conflicting write of the same subscription: ARM retries.
		return apiError(req.logger, err, nil)
	}
	writeJSON(req.w, http.StatusOK, subscriptionDocumentOf(stored.Spec))
	return nil
}

func (f *Frontend) getSubscription(req *request) error {
	sub := req.vars["sub"]
	s, err := f.subscription(req, strings.ToLower(sub))
	if apierrors.IsNotFound(err) {
		return newCloudError(http.StatusNotFound, "SubscriptionNotFound", "", "The subscription '%s' could not be found.", sub)
	}
	if err != nil {
		return apiError(req.logger, err, nil)
	}
	writeJSON(req.w, http.StatusOK, subscriptionDocumentOf(s.Spec))
	return nil
}

// storeSubscription creates or replaces the spec of the subscription name.
func (f *Frontend) storeSubscription(req *request, name string, spec hcpv1alpha1.ARMSubscriptionSpec) (*hcpv1alpha1.ARMSubscription, error) {
	subs := f.client.HcpV1alpha1().ARMSubscriptions()
	existing, err := subs.Get(req.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return subs.Create(req.ctx, &hcpv1alpha1.ARMSubscription{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, err
	}
	existing.Spec = spec
	return subs.Update(req.ctx, existing, metav1.UpdateOptions{})
}
