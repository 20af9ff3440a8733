package generic

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	hcpapi "github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// Object is an internal API object with metadata, a spec and a status.
type Object interface {
	runtime.Object
	metav1.Object
}

// Kind tells the shared strategies how one kind's spec and status are reached and checked.
// Every resource of the API follows the same rules: the main resource writes spec and
// metadata, /status writes status, and generation counts spec changes only.
type Kind[T Object] struct {
	NamespaceScoped bool
	// ClearStatus empties the status of a new object: clients cannot create status.
	ClearStatus func(obj T)
	// CopyStatus and CopySpec carry the stored status (or spec) over into an update.
	CopyStatus, CopySpec func(obj, old T)
	// SpecChanged tells whether an update changes the spec.
	SpecChanged func(obj, old T) bool
	// Created, SpecUpdated and Deleting, when set, record in a new object, an object whose spec changed,
	// and an object being deleted what the controllers act on (provisioning state, finalizers, IDs), so
	// that the write itself says what is to happen.
	Created     func(obj T)
	SpecUpdated func(obj, old T)
	Deleting    func(obj T)

	Validate             func(obj T) field.ErrorList
	ValidateUpdate       func(obj, old T) field.ErrorList
	ValidateStatusUpdate func(obj, old T) field.ErrorList
}

// Strategy applies to writes of the main resource: spec and metadata, never status.
type Strategy[T Object] struct {
	runtime.ObjectTyper
	names.NameGenerator
	kind Kind[T]
}

// NewStrategy returns the strategy of kind.
func NewStrategy[T Object](typer runtime.ObjectTyper, kind Kind[T]) Strategy[T] {
	return Strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, kind: kind}
}

var (
	// The main resource resets status, and the ARM operation a create asks for and its subscription's
	// version, which are never stored (REST.Create): managed fields must not name them.
	mainResetPaths = fieldpath.NewSet(fieldpath.MakePathOrDie("status"),
		fieldpath.MakePathOrDie("metadata", "annotations", hcpapi.ARMOperationAnnotation),
		fieldpath.MakePathOrDie("metadata", "annotations", hcpapi.ARMSubscriptionVersionAnnotation))
	specPath = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
)

func (s Strategy[T]) NamespaceScoped() bool { return s.kind.NamespaceScoped }

// WithoutLifecycle returns the strategy without its Created, SpecUpdated and Deleting hooks: a store as
// kube's generic store tester expects it, whose creates are deterministic and whose deletes are immediate.
func (s Strategy[T]) WithoutLifecycle() Strategy[T] {
	s.kind.Created, s.kind.SpecUpdated, s.kind.Deleting = nil, nil, nil
	return s
}

// GetResetFields keeps server-side apply from claiming status through the main resource.
func (Strategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{"hcp.aro.azure.com/v1alpha1": mainResetPaths}
}

func (s Strategy[T]) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	o := obj.(T)
	s.kind.ClearStatus(o)
	o.SetGeneration(1)
	if s.kind.Created != nil {
		s.kind.Created(o)
	}
}

func (s Strategy[T]) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	o, prev := obj.(T), old.(T)
	s.kind.CopyStatus(o, prev)
	// Controllers compare status.observedGeneration with generation, so only a spec change counts.
	if s.kind.SpecChanged(o, prev) {
		o.SetGeneration(prev.GetGeneration() + 1)
		if s.kind.SpecUpdated != nil {
			s.kind.SpecUpdated(o, prev)
		}
	}
}

// CheckGracefulDelete records that the object is being deleted; deletes are never graceful (no grace
// period), but the store persists what this changes together with the deletion timestamp when a
// finalizer keeps the object.
func (s Strategy[T]) CheckGracefulDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool {
	if s.kind.Deleting != nil {
		s.kind.Deleting(obj.(T))
	}
	return false
}

func (s Strategy[T]) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return s.kind.Validate(obj.(T))
}

func (Strategy[T]) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

func (Strategy[T]) Canonicalize(obj runtime.Object) {}

func (Strategy[T]) AllowCreateOnUpdate(ctx context.Context) bool { return false }

func (Strategy[T]) AllowUnconditionalUpdate(ctx context.Context) bool { return true }

func (s Strategy[T]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.kind.ValidateUpdate(obj.(T), old.(T))
	for _, annotation := range []string{hcpapi.ARMOperationAnnotation, hcpapi.ARMSubscriptionVersionAnnotation} {
		if _, ok := obj.(T).GetAnnotations()[annotation]; ok {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(annotation),
				"an ARM operation is recorded with a create only"))
		}
	}
	return errs
}

func (Strategy[T]) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// StatusStrategy applies to writes of /status: the spec stays as stored.
type StatusStrategy[T Object] struct {
	Strategy[T]
}

// NewStatusStrategy returns the /status strategy that goes with s.
func NewStatusStrategy[T Object](s Strategy[T]) StatusStrategy[T] {
	return StatusStrategy[T]{s}
}

// GetResetFields keeps server-side apply from claiming spec through /status.
func (StatusStrategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{"hcp.aro.azure.com/v1alpha1": specPath}
}

func (s StatusStrategy[T]) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.kind.CopySpec(obj.(T), old.(T))
}

func (s StatusStrategy[T]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return s.kind.ValidateStatusUpdate(obj.(T), old.(T))
}

// Matcher returns the predicate lists and watches filter with, from a kind's GetAttrs.
func Matcher(getAttrs storage.AttrFunc) func(labels.Selector, fields.Selector) storage.SelectionPredicate {
	return func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
		return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}
	}
}

var (
	_ rest.RESTCreateStrategy        = Strategy[Object]{}
	_ rest.RESTUpdateStrategy        = Strategy[Object]{}
	_ rest.RESTDeleteStrategy        = Strategy[Object]{}
	_ rest.ResetFieldsStrategy       = Strategy[Object]{}
	_ rest.UpdateResetFieldsStrategy = StatusStrategy[Object]{}
)

// AddFinalizer adds finalizer to obj unless it is there.
func AddFinalizer(obj metav1.Object, finalizer string) {
	if !slices.Contains(obj.GetFinalizers(), finalizer) {
		obj.SetFinalizers(append(obj.GetFinalizers(), finalizer))
	}
}

// StateAfterSpecChange is the provisioning state of a resource whose spec just changed: Updating once it
// was provisioned (or failed); a resource still being provisioned, or deleted, keeps its state.
func StateAfterSpecChange(state hcpapi.ProvisioningState) hcpapi.ProvisioningState {
	switch state {
	case hcpapi.ProvisioningStateSucceeded, hcpapi.ProvisioningStateFailed, hcpapi.ProvisioningStateCanceled:
		return hcpapi.ProvisioningStateUpdating
	}
	return state
}
