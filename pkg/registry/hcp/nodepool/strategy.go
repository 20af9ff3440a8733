// Package nodepool stores NodePools: how they are created, updated and
// validated, which fields clients can select on, and how kubectl prints them.
package nodepool

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
)

// strategy applies to writes of the main resource: spec and metadata, never status.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy for creating and updating NodePools.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return true }

// GetResetFields keeps server-side apply from claiming status through the main resource.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"hcp.aro.azure.com/v1alpha1": fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	pool := obj.(*hcp.NodePool)
	pool.Status = hcp.NodePoolStatus{}
	pool.Generation = 1
}

func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newObj, oldObj := obj.(*hcp.NodePool), old.(*hcp.NodePool)
	newObj.Status = oldObj.Status
	// Controllers compare status.observedGeneration with generation, so only a spec change counts.
	if !apiequality.Semantic.DeepEqual(newObj.Spec, oldObj.Spec) {
		newObj.Generation = oldObj.Generation + 1
	}
}

func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateNodePool(obj.(*hcp.NodePool))
}

func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

func (strategy) Canonicalize(obj runtime.Object) {}

func (strategy) AllowCreateOnUpdate(ctx context.Context) bool { return false }

func (strategy) AllowUnconditionalUpdate(ctx context.Context) bool { return true }

func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNodePoolUpdate(obj.(*hcp.NodePool), old.(*hcp.NodePool))
}

func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string { return nil }

// statusStrategy applies to writes of /status: the spec stays as stored.
type statusStrategy struct {
	strategy
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s strategy) statusStrategy {
	return statusStrategy{s}
}

// GetResetFields keeps server-side apply from claiming spec through /status.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"hcp.aro.azure.com/v1alpha1": fieldpath.NewSet(fieldpath.MakePathOrDie("spec")),
	}
}

func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newObj, oldObj := obj.(*hcp.NodePool), old.(*hcp.NodePool)
	newObj.Spec = oldObj.Spec
}

func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNodePoolStatusUpdate(obj.(*hcp.NodePool), old.(*hcp.NodePool))
}

func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// GetAttrs returns the labels and selectable fields of an NodePool.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pool := obj.(*hcp.NodePool)
	return labels.Set(pool.Labels), SelectableFields(pool), nil
}

// SelectableFields are the fields clients can select NodePools on; v1alpha1.NodePoolSelectableFields
// lists the same names for the scheme's field label conversion.
func SelectableFields(pool *hcp.NodePool) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.clusterName": pool.Spec.ClusterName,
	}, &pool.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}

var (
	_ rest.RESTCreateStrategy        = strategy{}
	_ rest.RESTUpdateStrategy        = strategy{}
	_ rest.RESTDeleteStrategy        = strategy{}
	_ rest.ResetFieldsStrategy       = strategy{}
	_ rest.UpdateResetFieldsStrategy = statusStrategy{}
)
