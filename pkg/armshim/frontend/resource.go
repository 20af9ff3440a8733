package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// armResource is the cluster, node pool or external auth a request's path names.
type armResource struct {
	obj names.Object
	// id is the resource ID, with the names as the caller spelled them.
	id string
}

// notFound is the 404 of a missing ARM resource in the public frontend's words: the type without its
// provider namespace, and the resource ID, as the caller spelled it, as target.
func (a *armResource) notFound() *CloudError {
	return newCloudError(http.StatusNotFound, CodeResourceNotFound, a.id,
		"The resource '%s/%s' under resource group '%s' was not found.", a.obj.ID.ResourceType.Type, a.obj.ID.Name, a.obj.ID.ResourceGroupName)
}

func (a *armResource) subscription() string { return a.obj.ID.SubscriptionID }

// clusterID is the resource ID of the cluster a path names.
func clusterID(vars map[string]string) string {
	return "/subscriptions/" + vars["sub"] + "/resourceGroups/" + vars["rg"] + providerPath + "/hcpOpenShiftClusters/" + vars["cluster"]
}

// parseResource parses the resource ID of the request's path: the cluster's, or its node pool's or
// external auth's. The request keeps it, so a request parses its path once.
func parseResource(req *request) (*armResource, error) {
	if req.resource != nil {
		return req.resource, nil
	}
	id := clusterID(req.vars)
	if np, ok := req.vars["nodepool"]; ok {
		id += "/nodePools/" + np
	}
	if auth, ok := req.vars["auth"]; ok {
		id += "/externalAuths/" + auth
	}
	obj, err := names.Parse(id)
	if err != nil {
		return nil, newCloudError(http.StatusBadRequest, CodeInvalidResourceName, "", "%v", err)
	}
	req.resource = &armResource{obj: obj, id: id}
	return req.resource, nil
}

// clusterOf is the resource of the cluster a node pool or external auth belongs to.
func (a *armResource) clusterOf() *armResource {
	if a.obj.Kind == names.KindCluster {
		return a
	}
	id := a.obj.ID.Parent.String()
	obj, _ := names.Parse(id)
	return &armResource{obj: obj, id: id}
}

// kind is how one kind of object is read, written and converted; the handlers of clusters, node
// pools and external auths are the same code over three kinds.
type kind[T any] struct {
	// resource is the API's plural, for an ARMOperation's target.
	resource string
	get      func(ctx context.Context, ns, name string, opts metav1.GetOptions) (T, error)
	create   func(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	update   func(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	delete   func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error
	// list lists a page of a namespace's objects and gives the continue token of the next; only the
	// kinds of a cluster's lists (node pools, external auths) have it.
	list    func(ctx context.Context, ns string, opts metav1.ListOptions) ([]T, string, error)
	fromARM func(req conversion.Request, existing T) (T, field.ErrorList)
	// toARM gives the ARM body of obj, in location.
	toARM func(v conversion.APIVersion, obj T, location string) (any, error)
	meta  func(T) metav1.Object
	state func(T) hcpv1alpha1.ProvisioningState
	// parentAllows refuses a write while the parent cluster cannot take it.
	// verb is what the request does to the resource, for the refusal: create, update or delete.
	parentAllows func(req *request, res *armResource, verb string) error
}

// isTerminal tells whether nothing is in progress on a resource in state s. An empty state is a
// resource no controller reported on yet, which blocks nothing. An external auth AwaitingSecret is
// delivered and its operation over: what is left is the customer's (the client secret), so it takes
// updates and deletes, or a wrong client could never be corrected without first making its secret.
func isTerminal(s hcpv1alpha1.ProvisioningState) bool {
	switch s {
	case hcpv1alpha1.ProvisioningStateSucceeded, hcpv1alpha1.ProvisioningStateFailed, hcpv1alpha1.ProvisioningStateCanceled,
		hcpv1alpha1.ProvisioningStateAwaitingSecret, "":
		return true
	}
	return false
}

func conflict(format string, args ...any) *CloudError {
	return newCloudError(http.StatusConflict, CodeConflict, "", format, args...)
}

// resourceConflict is the frontend's 409 about a resource, which names the resource as its target.
func resourceConflict(res *armResource, format string, args ...any) *CloudError {
	return newCloudError(http.StatusConflict, CodeConflict, res.id, format, args...)
}

// The actions a busy resource refuses, worded as the frontend's 409s word them.
const (
	actionUpdate            = "update resource"
	actionDelete            = "delete resource"
	actionRequestCredential = "request credential"
	actionRevokeCredentials = "revoke credentials"
)

// provisioningConflict is the frontend's 409 for an action on a resource that is busy: a delete only
// while it is already being deleted, anything else while any operation runs.
func provisioningConflict(res *armResource, action string, state hcpv1alpha1.ProvisioningState, deleting bool) error {
	if deleting {
		state = hcpv1alpha1.ProvisioningStateDeleting
	}
	if action == actionDelete {
		if state == hcpv1alpha1.ProvisioningStateDeleting {
			return resourceConflict(res, "Resource is already deleting")
		}
		return nil
	}
	if deleting || !isTerminal(state) {
		return resourceConflict(res, "Cannot %s while resource is %q", action, strings.ToLower(string(state)))
	}
	return nil
}

func (k *kind[T]) getResource(req *request, res *armResource) (T, bool, error) {
	return k.read(req, res, metav1.GetOptions{})
}

// cachedResource reads the resource from the API's watch cache, which may lag a write by moments:
// for answers that are advice, such as preflight's.
func (k *kind[T]) cachedResource(req *request, res *armResource) (T, bool, error) {
	return k.read(req, res, metav1.GetOptions{ResourceVersion: "0"})
}

func (k *kind[T]) read(req *request, res *armResource, opts metav1.GetOptions) (T, bool, error) {
	obj, err := k.get(req.ctx, res.obj.Namespace, res.obj.Name, opts)
	if apierrors.IsNotFound(err) {
		var zero T
		return zero, false, nil
	}
	if err != nil {
		var zero T
		return zero, false, apiError(req.logger, err, res)
	}
	// An object in the namespace that ARM did not create is not an ARM resource.
	if _, err := names.FromAnnotations(k.meta(obj).GetAnnotations()); err != nil {
		var zero T
		return zero, false, nil
	}
	return obj, true, nil
}

// checkLocation reads the location of a request body, to refuse one for another region.
func (f *Frontend) checkLocation(body []byte) error {
	var envelope struct {
		Location *string `json:"location"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil || envelope.Location == nil {
		// A malformed body is the conversion's to report.
		return nil
	}
	if normalizeLocation(*envelope.Location) != f.location {
		return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "location",
			"The location '%s' is not this resource provider's location '%s'.", *envelope.Location, f.location)
	}
	return nil
}

// normalizeLocation compares locations as ARM does: "East US" is "eastus".
func normalizeLocation(l string) string {
	return strings.ToLower(strings.ReplaceAll(l, " ", ""))
}

// defaultSystemData is what the frontend records as creator when ARM sent no system data.
func defaultSystemData(now time.Time) string {
	ts := now.UTC().Format(time.RFC3339)
	return fmt.Sprintf(`{"createdBy":"Unknown-ARO-HCP-frontend","createdByType":"Application","createdAt":%q,`+
		`"lastModifiedBy":"Unknown-ARO-HCP-frontend","lastModifiedByType":"Application","lastModifiedAt":%q}`, ts, ts)
}

// itemPointers points at the items of a list, as the kinds' functions take them.
func itemPointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
