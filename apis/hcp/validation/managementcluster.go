package validation

import (
	"regexp"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

const (
	consumerNameMaxLength = 63
	maxCapacity           = 10000
)

// consumerNameRegexp keeps the Maestro consumer name usable as a topic segment.
var consumerNameRegexp = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateManagementCluster validates a management cluster on create.
func ValidateManagementCluster(mc *hcp.ManagementCluster) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&mc.ObjectMeta, false, validateDNSLabelName, field.NewPath("metadata"))
	return append(allErrs, validateManagementClusterSpec(&mc.Spec, field.NewPath("spec"))...)
}

// ValidateManagementClusterUpdate validates an update. The consumer name ties the object to
// its agent's topic and the location to the clusters placed on it, so neither may change.
func ValidateManagementClusterUpdate(newMC, oldMC *hcp.ManagementCluster) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newMC.ObjectMeta, &oldMC.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateManagementCluster(newMC)...)
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newMC.Spec.ConsumerName, oldMC.Spec.ConsumerName, fldPath.Child("consumerName"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newMC.Spec.Location, oldMC.Spec.Location, fldPath.Child("location"))...)
	return allErrs
}

// ValidateManagementClusterStatusUpdate validates a write to the status subresource.
func ValidateManagementClusterStatusUpdate(newMC, oldMC *hcp.ManagementCluster) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newMC.ObjectMeta, &oldMC.ObjectMeta, field.NewPath("metadata"))
	fldPath := field.NewPath("status")
	allErrs = append(allErrs, metav1validation.ValidateConditions(newMC.Status.Conditions, fldPath.Child("conditions"))...)
	allErrs = append(allErrs, validateMinimum(fldPath.Child("hostedClusters"), newMC.Status.HostedClusters, 0)...)
	return allErrs
}

func validateManagementClusterSpec(spec *hcp.ManagementClusterSpec, fldPath *field.Path) field.ErrorList {
	allErrs := ValidateConsumerName(spec.ConsumerName, fldPath.Child("consumerName"))
	allErrs = append(allErrs, validateRegion(fldPath.Child("location"), spec.Location)...)
	allErrs = append(allErrs, validateRange(fldPath.Child("capacity"), spec.Capacity, 1, maxCapacity)...)
	return allErrs
}

// ValidateConsumerName validates a Maestro consumer name, which is a segment of the agent's MQTT topics
// and the common name of its client certificate.
func ValidateConsumerName(name string, fldPath *field.Path) field.ErrorList {
	const msg = "must be lowercase letters, digits and '-', start and end with a letter or digit, such as mgmt-eastus-1"
	switch {
	case name == "":
		return field.ErrorList{field.Required(fldPath, msg)}
	case len(name) > consumerNameMaxLength:
		return field.ErrorList{field.TooLong(fldPath, name, consumerNameMaxLength)}
	case !consumerNameRegexp.MatchString(name):
		return field.ErrorList{field.Invalid(fldPath, name, msg)}
	}
	return nil
}
