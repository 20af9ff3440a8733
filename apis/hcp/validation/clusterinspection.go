package validation

import (
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

const (
	minInspectionTTLSeconds = 10
	maxInspectionTTLSeconds = 60 * 60
	maxInspectionTailLines  = 10000
	maxInspectionReason     = 1024
)

// InspectionViews are the views an inspection may ask for, in the order they are documented.
var InspectionViews = []hcp.InspectionView{
	hcp.InspectionViewHostedCluster, hcp.InspectionViewNodePools, hcp.InspectionViewControlPlanePods,
	hcp.InspectionViewEvents, hcp.InspectionViewLogs,
}

var clusterInspectionPhases = []hcp.ClusterInspectionPhase{
	hcp.ClusterInspectionPhasePending, hcp.ClusterInspectionPhaseAnswered, hcp.ClusterInspectionPhaseFailed,
}

// ValidateClusterInspection validates an inspection on create.
func ValidateClusterInspection(ci *hcp.ClusterInspection) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&ci.ObjectMeta, true, validateDNSSubdomainName, field.NewPath("metadata"))
	return append(allErrs, validateClusterInspectionSpec(&ci.Spec, field.NewPath("spec"))...)
}

// ValidateClusterInspectionUpdate validates an update: what was asked, by whom and why is the audit
// trail, so the spec cannot change; another question is another inspection.
func ValidateClusterInspectionUpdate(newCI, oldCI *hcp.ClusterInspection) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newCI.ObjectMeta, &oldCI.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateClusterInspectionSpec(&newCI.Spec, field.NewPath("spec"))...)
	if !apiequality.Semantic.DeepEqual(newCI.Spec, oldCI.Spec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation; create a new ClusterInspection instead"))
	}
	return allErrs
}

// ValidateClusterInspectionStatusUpdate validates a write to the status subresource.
func ValidateClusterInspectionStatusUpdate(newCI, oldCI *hcp.ClusterInspection) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newCI.ObjectMeta, &oldCI.ObjectMeta, field.NewPath("metadata"))
	fldPath := field.NewPath("status")
	allErrs = append(allErrs, validateOptionalEnum(fldPath.Child("phase"), newCI.Status.Phase, clusterInspectionPhases)...)
	if newCI.Status.Omitted < 0 {
		allErrs = append(allErrs, validateMinimum(fldPath.Child("omitted"), newCI.Status.Omitted, 0)...)
	}
	return append(allErrs, metav1validation.ValidateConditions(newCI.Status.Conditions, fldPath.Child("conditions"))...)
}

func validateClusterInspectionSpec(spec *hcp.ClusterInspectionSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateClusterName(fldPath.Child("clusterName"), spec.ClusterName)
	allErrs = append(allErrs, validateEnum(fldPath.Child("view"), spec.View, InspectionViews)...)
	logs := spec.View == hcp.InspectionViewLogs
	switch {
	case logs && spec.Container == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("container"), "the logs view reads one control-plane container's log: name it"))
	case logs:
		allErrs = append(allErrs, validateDNSLabelName(fldPath.Child("container"), spec.Container)...)
	case spec.Container != "":
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("container"), "only the logs view reads a container"))
	}
	switch {
	case logs && spec.Pod != "":
		allErrs = append(allErrs, validateDNSSubdomainName(fldPath.Child("pod"), spec.Pod)...)
	case !logs && spec.Pod != "":
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("pod"), "only the logs view reads a pod"))
	}
	switch {
	case logs && spec.TailLines != nil:
		allErrs = append(allErrs, validateRange(fldPath.Child("tailLines"), *spec.TailLines, 1, maxInspectionTailLines)...)
	case !logs && spec.TailLines != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("tailLines"), "only the logs view reads a log's tail"))
	}
	if strings.TrimSpace(spec.Reason) == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("reason"),
			"say why the control plane is inspected (an incident or ticket, say): it is kept in the audit log"))
	} else if len(spec.Reason) > maxInspectionReason {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("reason"), spec.Reason, maxInspectionReason))
	}
	if spec.TTLSeconds != nil {
		allErrs = append(allErrs, validateRange(fldPath.Child("ttlSeconds"), *spec.TTLSeconds, minInspectionTTLSeconds, maxInspectionTTLSeconds)...)
	}
	return allErrs
}
