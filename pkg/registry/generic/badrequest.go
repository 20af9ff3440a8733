package generic

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
)

// The generic store answers a few requests that are the client's mistake with 500 Internal Error or 504
// Timeout: a resourceVersion that is not one (in a get, a watch, or the body of an update), one newer than
// any the server handed out (in a get, a list or a watch), one in the body of a create, and a server-side
// apply with a field the schema does not have. These are 400 Bad Request here, naming what is wrong.

// Get implements rest.Getter, refusing a resourceVersion that is not one with 400.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := ValidateGetOptions(ctx, r.Store, options); err != nil {
		return nil, err
	}
	return r.Store.Get(ctx, name, options)
}

// List implements rest.Lister, refusing a resourceVersion newer than etcd's with 400.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	if options != nil {
		if err := ValidateReadResourceVersion(ctx, r.Store, options.ResourceVersion); err != nil {
			return nil, err
		}
	}
	return r.Store.List(ctx, options)
}

// Watch implements rest.Watcher, refusing a resourceVersion that is not one, or is newer than etcd's,
// with 400.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options != nil {
		if err := ValidateReadResourceVersion(ctx, r.Store, options.ResourceVersion); err != nil {
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

// ValidateGetOptions refuses a get whose resourceVersion is not one, or is newer than etcd's, with 400
// Bad Request.
func ValidateGetOptions(ctx context.Context, store *genericregistry.Store, options *metav1.GetOptions) error {
	return ValidateReadResourceVersion(ctx, store, options.ResourceVersion)
}

// ValidateReadResourceVersion refuses with 400 Bad Request the resourceVersion of a get, list or watch
// that is not one, or that is newer than etcd's revision: nobody was handed that version, and the store
// would wait for it, 3 s and then 504 for a get or a list, for ever for a watch. It is etcd's revision,
// not the watch cache's, that counts: a version of another replica, whose cache is a moment ahead of
// this one's, waits as usual. The cost is one read of etcd, for reads that name a version other than 0.
func ValidateReadResourceVersion(ctx context.Context, store *genericregistry.Store, rv string) error {
	if err := ValidateResourceVersion(rv, resourceVersionParam); err != nil || rv == "" {
		return err
	}
	requested, _ := strconv.ParseUint(rv, 10, 64)
	if requested == 0 {
		return nil
	}
	newest, err := store.Storage.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		// The store answers as it would have; etcd's trouble is no reason to refuse the request.
		klog.FromContext(ctx).V(2).Info("Cannot read etcd's revision to check a resourceVersion", "resourceVersion", rv, "err", err)
		return nil
	}
	if requested > newest {
		return apierrors.NewBadRequest(field.Invalid(resourceVersionParam, rv,
			fmt.Sprintf("must not be newer than the newest resourceVersion, %d: use one the server handed out", newest)).Error())
	}
	return nil
}

// ValidateCreateResourceVersion refuses with 400 Bad Request an object to be created that carries a
// resourceVersion: the server sets it, and etcd's store would answer 500.
func ValidateCreateResourceVersion(obj runtime.Object) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if rv := accessor.GetResourceVersion(); rv != "" {
		return apierrors.NewBadRequest(field.Invalid(field.NewPath("metadata", "resourceVersion"), rv,
			"must be empty when creating: the server sets it").Error())
	}
	return nil
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
