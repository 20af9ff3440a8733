// Package hcpcluster stores HCPClusters: how they are created, updated and
// validated, which fields clients can select on, and how kubectl prints them.
package hcpcluster

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

// NewStrategy returns the strategy for creating and updating HCPClusters.
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
	cluster := obj.(*hcp.HCPCluster)
	cluster.Status = hcp.HCPClusterStatus{}
	cluster.Generation = 1
}

func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newCluster, oldCluster := obj.(*hcp.HCPCluster), old.(*hcp.HCPCluster)
	newCluster.Status = oldCluster.Status
	// Controllers compare status.observedGeneration with generation, so only a spec change counts.
	if !apiequality.Semantic.DeepEqual(newCluster.Spec, oldCluster.Spec) {
		newCluster.Generation = oldCluster.Generation + 1
	}
}

func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateHCPCluster(obj.(*hcp.HCPCluster))
}

func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

func (strategy) Canonicalize(obj runtime.Object) {}

func (strategy) AllowCreateOnUpdate(ctx context.Context) bool { return false }

func (strategy) AllowUnconditionalUpdate(ctx context.Context) bool { return true }

func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateHCPClusterUpdate(obj.(*hcp.HCPCluster), old.(*hcp.HCPCluster))
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
	newCluster, oldCluster := obj.(*hcp.HCPCluster), old.(*hcp.HCPCluster)
	newCluster.Spec = oldCluster.Spec
}

func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateHCPClusterStatusUpdate(obj.(*hcp.HCPCluster), old.(*hcp.HCPCluster))
}

func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// GetAttrs returns the labels and selectable fields of an HCPCluster.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	cluster := obj.(*hcp.HCPCluster)
	return labels.Set(cluster.Labels), SelectableFields(cluster), nil
}

// SelectableFields are the fields clients can select HCPClusters on; v1alpha1.HCPClusterSelectableFields
// lists the same names for the scheme's field label conversion.
func SelectableFields(cluster *hcp.HCPCluster) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"status.managementCluster": cluster.Status.ManagementCluster,
		"status.provisioningState": string(cluster.Status.ProvisioningState),
	}, &cluster.ObjectMeta, true)
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
