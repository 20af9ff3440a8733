package agent

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// FieldManager is the field manager of every write the agent makes.
	FieldManager = "maestro-agent"
	// BundleLabel marks an object the agent wrote; its value is the bundle's resource ID.
	BundleLabel = "maestro.aro.azure.com/bundle"
	// GenerationAnnotation records the generation of the bundle that last wrote the object.
	GenerationAnnotation = "maestro.aro.azure.com/bundle-generation"
)

// validateBundleID checks that a resource ID can be a label value; Maestro's are UUIDs.
func validateBundleID(bundleID string) error {
	if bundleID == "" {
		return fmt.Errorf("a bundle needs a resource ID")
	}
	if errs := validation.IsValidLabelValue(bundleID); len(errs) > 0 {
		return fmt.Errorf("bundle resource ID %q cannot label the objects it applies: %v", bundleID, errs)
	}
	return nil
}

// bundleSelector selects the objects written for one bundle.
func bundleSelector(bundleID string) string {
	return BundleLabel + "=" + bundleID
}

// markOwned labels obj as written by generation of bundleID.
func markOwned(obj *unstructured.Unstructured, bundleID string, generation int64) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[BundleLabel] = bundleID
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[GenerationAnnotation] = strconv.FormatInt(generation, 10)
	obj.SetAnnotations(annotations)
}

// bundleOf returns the bundle that wrote obj, "" if none did.
func bundleOf(obj *unstructured.Unstructured) string {
	return obj.GetLabels()[BundleLabel]
}

// generationOf returns the bundle generation that last wrote obj; 0 if none did or the annotation is not a
// number, so that a damaged annotation never blocks a newer generation.
func generationOf(obj *unstructured.Unstructured) int64 {
	g, err := strconv.ParseInt(obj.GetAnnotations()[GenerationAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return g
}
