package hcp

import (
	"context"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
)

// The generic store answers a few requests that are the client's mistake with 500 Internal Error: a
// resourceVersion that is not one (in a get, a watch, or the body of an update) and a server-side apply
// with a field the schema does not have. These are 400 Bad Request here, naming what is wrong.

// Get implements rest.Getter, refusing a resourceVersion that is not one with 400.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := ValidateGetOptions(options); err != nil {
		return nil, err
	}
	return r.Store.Get(ctx, name, options)
}

// Watch implements rest.Watcher, refusing a resourceVersion that is not one with 400.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options != nil {
		if err := ValidateResourceVersion(options.ResourceVersion, resourceVersionParam); err != nil {
			return nil, err
		}
	}
	return r.Store.Watch(ctx, options)
}

// Update implements rest.Updater; see ClearBadRequests.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var dryRun []string
	if options != nil {
		dryRun = options.DryRun
	}
	createValidation, finish := r.beginCreateAfter(createValidation, dryRun)
	obj, created, err := r.Store.Update(ctx, name, ClearBadRequests(objInfo), createValidation, updateValidation, forceAllowCreate, options)
	finish(ctx, err == nil)
	return obj, created, err
}

// resourceVersionParam is the resourceVersion parameter of a get, list or watch.
var resourceVersionParam = field.NewPath("resourceVersion")

// ValidateGetOptions refuses a get whose resourceVersion is not one with 400 Bad Request.
func ValidateGetOptions(options *metav1.GetOptions) error {
	return ValidateResourceVersion(options.ResourceVersion, resourceVersionParam)
}

// ValidateResourceVersion returns 400 Bad Request unless rv is empty or a resourceVersion as the server
// hands them out.
func ValidateResourceVersion(rv string, fldPath *field.Path) error {
	if rv == "" {
		return nil
	}
	if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
		return apierrors.NewBadRequest(field.Invalid(fldPath, rv,
			"must be empty or a resourceVersion the server handed out, an unsigned integer").Error())
	}
	return nil
}

// ClearBadRequests wraps the update of a request so that what the generic store would answer with 500
// is 400: an updated object whose metadata.resourceVersion is not one, and a server-side apply whose
// object the schema does not fit.
func ClearBadRequests(objInfo rest.UpdatedObjectInfo) rest.UpdatedObjectInfo {
	return clearBadRequests{objInfo}
}

type clearBadRequests struct {
	rest.UpdatedObjectInfo
}

func (i clearBadRequests) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj, err := i.UpdatedObjectInfo.UpdatedObject(ctx, oldObj)
	// apimachinery's field manager reports an applied object that does not fit the schema, such as one
	// with an unknown field, as a plain error: the object is the client's.
	if _, isStatus := err.(apierrors.APIStatus); err != nil && !isStatus && strings.HasPrefix(err.Error(), "failed to create typed patch object") {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err != nil {
		return nil, err
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if err := ValidateResourceVersion(accessor.GetResourceVersion(), field.NewPath("metadata", "resourceVersion")); err != nil {
		return nil, err
	}
	return obj, nil
}
