package generic

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	hcpapi "github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
)

// Category groups every resource of the API so that `kubectl get hcp` lists them together.
const Category = "hcp"

// REST is the storage of one resource: the generic etcd store plus what kubectl discovers.
type REST struct {
	*genericregistry.Store
	shortNames    []string
	guardDelete   DeleteGuard
	claimExisting func(context.Context) error
	beginCreate   BeginCreate
	// inCreateTxn: the store writes a create's claims and companions in the object's own transaction.
	inCreateTxn bool
	operations  OperationRecorder
}

// BeginCreate starts what a create holds until it is written or refused (claims, a lock), once the object
// passed validation and admission, and returns finish, which the create calls with the outcome.
type BeginCreate func(ctx context.Context, obj runtime.Object, dryRun []string) (finish genericregistry.FinishFunc, err error)

// OperationRecorder creates the ARMOperation a create asks for (hcp.ARMOperationAnnotation) in the create's
// own transaction, so that a PUT through the ARM frontend is one write, and its operation exists exactly
// when its object does.
type OperationRecorder interface {
	// Detach reads the operation that value asks for with a create of resource, and checks that the caller
	// may create it; subscriptionVersion, if not empty, is hcp.ARMSubscriptionVersionAnnotation's value.
	// complete makes the operation follow the new object, once the object has its UID, and returns it
	// checked, as its store writes it; it has the create's write require what subscriptionVersion says.
	Detach(ctx context.Context, resource, value, subscriptionVersion string) (name string, complete func(ctx context.Context, target metav1.Object) (claims.Companion, error), err error)
}

// Create creates the object; the store's BeginCreate runs after validation and admission, so that a
// client hears of what is wrong with its object before it hears of other objects.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if err := ValidateCreateResourceVersion(obj); err != nil {
		return nil, err
	}
	var dryRun []string
	if options != nil {
		dryRun = options.DryRun
	}
	operation, validate, err := r.detachOperation(ctx, obj, createValidation)
	if err != nil {
		return nil, err
	}
	if r.inCreateTxn {
		out, err := r.create(claims.InCreate(ctx, r.beginCreate != nil), obj, validate, dryRun, options)
		if !errors.Is(err, claims.ErrClaimed) {
			return out, operationExists(err, operation)
		}
		// A value is claimed already: claimed one by one, deciding on each holder, then created again,
		// with the object's companions. Nothing was written, and storing the object again prepares it again.
		ctx = claims.InCreate(ctx, false)
	}
	out, err := r.create(ctx, obj, validate, dryRun, options)
	return out, operationExists(err, operation)
}

func (r *REST) create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, dryRun []string, options *metav1.CreateOptions) (runtime.Object, error) {
	validate, finish := r.beginCreateAfter(createValidation, dryRun)
	out, err := r.Store.Create(ctx, obj, validate, options)
	finish(ctx, err == nil)
	return out, err
}

// detachOperation takes the ARMOperation a create asks for off obj, and returns createValidation followed
// by what completes the operation and has the create write it.
func (r *REST) detachOperation(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc) (string, rest.ValidateObjectFunc, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return "", nil, err
	}
	annotations := accessor.GetAnnotations()
	value, ok := annotations[hcpapi.ARMOperationAnnotation]
	subscriptionVersion, versioned := annotations[hcpapi.ARMSubscriptionVersionAnnotation]
	if !ok {
		if versioned {
			return "", nil, forbiddenAnnotation(obj, accessor, hcpapi.ARMSubscriptionVersionAnnotation,
				"only beside "+hcpapi.ARMOperationAnnotation+", whose subscription it names the version of")
		}
		return "", createValidation, nil
	}
	if r.operations == nil {
		return "", nil, forbiddenAnnotation(obj, accessor, hcpapi.ARMOperationAnnotation,
			"only the create of an HCPCluster, a NodePool, an ExternalAuth or a BreakglassCredential records an ARM operation")
	}
	delete(annotations, hcpapi.ARMOperationAnnotation)
	delete(annotations, hcpapi.ARMSubscriptionVersionAnnotation)
	accessor.SetAnnotations(annotations)
	name, complete, err := r.operations.Detach(ctx, r.DefaultQualifiedResource.Resource, value, subscriptionVersion)
	if err != nil {
		return "", nil, err
	}
	return name, func(ctx context.Context, obj runtime.Object) error {
		if createValidation != nil {
			if err := createValidation(ctx, obj); err != nil {
				return err
			}
		}
		target, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		companion, err := complete(ctx, target)
		if err != nil {
			return err
		}
		if !claims.WriteWith(ctx, companion) {
			return apierrors.NewInternalError(fmt.Errorf("the store of %s cannot write an ARM operation with its creates", r.DefaultQualifiedResource))
		}
		return nil
	}, nil
}

// forbiddenAnnotation refuses the create of obj for carrying annotation, as an invalid object.
func forbiddenAnnotation(obj runtime.Object, accessor metav1.Object, annotation, detail string) error {
	gk := schema.GroupKind{Group: hcpapi.GroupName, Kind: reflect.TypeOf(obj).Elem().Name()}
	return apierrors.NewInvalid(gk, accessor.GetName(), field.ErrorList{field.Forbidden(
		field.NewPath("metadata", "annotations").Key(annotation), detail)})
}

// operationExists tells of an operation whose name is taken already, which wrote nothing.
func operationExists(err error, operation string) error {
	if errors.Is(err, claims.ErrCompanionExists) {
		return apierrors.NewAlreadyExists(hcpapi.Resource("armoperations"), operation)
	}
	return err
}

// beginCreateAfter returns createValidation followed by the store's BeginCreate, and the finish function
// of what it began (nothing if the create was refused before).
func (r *REST) beginCreateAfter(createValidation rest.ValidateObjectFunc, dryRun []string) (rest.ValidateObjectFunc, genericregistry.FinishFunc) {
	finish := genericregistry.FinishFunc(func(context.Context, bool) {})
	if r.beginCreate == nil {
		return createValidation, func(ctx context.Context, success bool) { finish(ctx, success) }
	}
	validate := func(ctx context.Context, obj runtime.Object) error {
		if createValidation != nil {
			if err := createValidation(ctx, obj); err != nil {
				return err
			}
		}
		f, err := r.beginCreate(ctx, obj, dryRun)
		if err != nil {
			return err
		}
		finish = f
		return nil
	}
	return validate, func(ctx context.Context, success bool) { finish(ctx, success) }
}

// ClaimExisting claims the unique values of the objects stored before their claims were kept (by an
// older server); the server runs it once at start.
func (r *REST) ClaimExisting(ctx context.Context) error {
	if r.claimExisting == nil {
		return nil
	}
	return r.claimExisting(ctx)
}

// DeleteGuard runs the delete of the object name, which del carries out, within what keeps a rule over
// several objects true while requests race (a lock), and may refuse it.
type DeleteGuard func(ctx context.Context, name string, del func() (runtime.Object, bool, error)) (runtime.Object, bool, error)

// Delete deletes the object, through the store's DeleteGuard when it has one.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if r.guardDelete == nil {
		return r.Store.Delete(ctx, name, deleteValidation, options)
	}
	return r.guardDelete(ctx, name, func() (runtime.Object, bool, error) {
		return r.Store.Delete(ctx, name, deleteValidation, options)
	})
}

// DeleteCollection deletes the listed objects one by one through Delete when the store has a DeleteGuard:
// the generic store's DeleteCollection would call its own Delete and bypass the guard.
func (r *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if r.guardDelete == nil {
		return r.Store.DeleteCollection(ctx, deleteValidation, options, listOptions)
	}
	list, err := r.Store.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	deleted := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		accessor, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		var opts *metav1.DeleteOptions
		if options != nil {
			opts = options.DeepCopy()
		}
		obj, _, err := r.Delete(ctx, accessor.GetName(), deleteValidation, opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		deleted = append(deleted, obj)
	}
	out := r.NewListFunc()
	if err := meta.SetList(out, deleted); err != nil {
		return nil, err
	}
	return out, nil
}

var (
	_ rest.ShortNamesProvider = &REST{}
	_ rest.CategoriesProvider = &REST{}
)

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return []string{Category} }

// StatusREST serves the /status subresource: it reads the whole object and writes only its status.
type StatusREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher              = &StatusREST{}
	_ rest.ResetFieldsStrategy  = &StatusREST{}
	_ rest.TableConvertor       = &StatusREST{}
	_ rest.Storage              = &StatusREST{}
	_ rest.SingularNameProvider = &REST{}
)

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage; the main store owns the shared etcd client.
func (r *StatusREST) Destroy() {}

// Get retrieves the object, so that clients can patch its status.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := ValidateGetOptions(ctx, r.store, options); err != nil {
		return nil, err
	}
	return r.store.Get(ctx, name, options)
}

// Update writes the status of the object; the status strategy keeps the spec as stored.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Status writes never create: an object is created through the main resource.
	return r.store.Update(ctx, name, ClearBadRequests(objInfo), createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// StoreOptions is what differs between the resources of the API.
type StoreOptions struct {
	Store          *genericregistry.Store
	StatusStrategy rest.UpdateResetFieldsStrategy
	ShortNames     []string
	AttrFunc       storage.AttrFunc
	// GuardDelete, when set, runs every delete (DeleteGuard).
	GuardDelete DeleteGuard
	// ClaimExisting is what ClaimUniqueValues returned, if the store claims values.
	ClaimExisting func(context.Context) error
	// BeginCreate, when set, runs in every create once validation and admission passed.
	BeginCreate BeginCreate
	// Claims, when set with BeginCreate, is where BeginCreate claims values: a create then writes them in
	// the object's own etcd transaction.
	Claims *claims.Store
	// Operations, when set with Claims, records the ARMOperation a create asks for in its transaction.
	Operations OperationRecorder
}

// NewStores completes the resource's store on etcd and derives its /status store from it.
func NewStores(o StoreOptions, optsGetter generic.RESTOptionsGetter) (*REST, *StatusREST, error) {
	store := o.Store
	inCreateTxn := o.Claims != nil && (o.BeginCreate != nil || o.Operations != nil)
	operations := o.Operations
	if inCreateTxn {
		optsGetter = DecorateStorage(optsGetter, o.Claims.WithClaimsInCreate)
	} else {
		operations = nil // nothing would write them
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: o.AttrFunc}); err != nil {
		return nil, nil, err
	}
	statusStore := *store
	statusStore.UpdateStrategy = o.StatusStrategy
	statusStore.ResetFieldsStrategy = o.StatusStrategy
	return &REST{Store: store, shortNames: o.ShortNames, guardDelete: o.GuardDelete, claimExisting: o.ClaimExisting, beginCreate: o.BeginCreate,
		inCreateTxn: inCreateTxn, operations: operations}, &StatusREST{store: &statusStore}, nil
}

// DecorateStorage returns getter with the storage decorator of every resource's options wrapped by decorate.
func DecorateStorage(getter generic.RESTOptionsGetter, decorate func(inner generic.StorageDecorator) generic.StorageDecorator) generic.RESTOptionsGetter {
	return decoratingOptions{RESTOptionsGetter: getter, decorate: decorate}
}

type decoratingOptions struct {
	generic.RESTOptionsGetter
	decorate func(generic.StorageDecorator) generic.StorageDecorator
}

func (g decoratingOptions) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	inner := opts.Decorator
	if inner == nil {
		inner = generic.UndecoratedStorage
	}
	opts.Decorator = g.decorate(inner)
	return opts, nil
}
