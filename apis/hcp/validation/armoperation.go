package validation

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

var (
	armOperationRequests = []hcp.ARMOperationRequest{
		hcp.ARMOperationCreate, hcp.ARMOperationUpdate, hcp.ARMOperationDelete,
		hcp.ARMOperationRequestCredential, hcp.ARMOperationRevokeCredentials,
	}
	armOperationStates = []hcp.ARMOperationState{
		hcp.ARMOperationAccepted, hcp.ARMOperationProvisioning, hcp.ARMOperationUpdating, hcp.ARMOperationDeleting,
		hcp.ARMOperationSucceeded, hcp.ARMOperationFailed, hcp.ARMOperationCanceled,
	}
	armOperationTargets = []string{"hcpclusters", "nodepools", "externalauths", "breakglasscredentials"}
)

// ValidateARMOperation validates an operation on create: it is named after its operation ID, a lowercase UUID.
func ValidateARMOperation(op *hcp.ARMOperation) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&op.ObjectMeta, false, validateOperationName, field.NewPath("metadata"))
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, validateEnum(fldPath.Child("request"), op.Spec.Request, armOperationRequests)...)
	allErrs = append(allErrs, validateRequiredString(fldPath.Child("resourceID"), op.Spec.ResourceID, 1024)...)
	allErrs = append(allErrs, validateSubscriptionName(fldPath.Child("subscriptionID"), op.Spec.SubscriptionID)...)
	allErrs = append(allErrs, validateRegion(fldPath.Child("location"), op.Spec.Location)...)
	target := fldPath.Child("target")
	allErrs = append(allErrs, validateEnum(target.Child("resource"), op.Spec.Target.Resource, armOperationTargets)...)
	allErrs = append(allErrs, validateDNSLabelName(target.Child("namespace"), op.Spec.Target.Namespace)...)
	allErrs = append(allErrs, validateDNSSubdomainName(target.Child("name"), op.Spec.Target.Name)...)
	if op.Spec.Target.UID == "" {
		allErrs = append(allErrs, field.Required(target.Child("uid"), "must be the UID of the object the operation follows"))
	}
	allErrs = append(allErrs, validateMinimum(target.Child("generation"), op.Spec.Target.Generation, 0)...)
	if uri := op.Spec.NotificationURI; uri != "" {
		allErrs = append(allErrs, ValidateNotificationURI(fldPath.Child("notificationURI"), uri)...)
	}
	return allErrs
}

// ValidateNotificationURI requires an absolute http(s) URL the service can POST to; ARM's are https,
// a service's own test receivers may be plain http. The ARM shim checks ARM's header with it before it
// writes anything.
func ValidateNotificationURI(fldPath *field.Path, value string) field.ErrorList {
	return validateURL(fldPath, value, "must be an absolute https URL, as ARM's Azure-AsyncNotificationUri", "https", "http")
}

// ValidateARMOperationUpdate validates an update: what an operation does and who asked never change.
func ValidateARMOperationUpdate(newOp, oldOp *hcp.ARMOperation) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newOp.ObjectMeta, &oldOp.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, apivalidation.ValidateImmutableField(newOp.Spec, oldOp.Spec, field.NewPath("spec"))...)
}

// ValidateARMOperationStatusUpdate validates a write to the status subresource: a final state stays final.
func ValidateARMOperationStatusUpdate(newOp, oldOp *hcp.ARMOperation) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newOp.ObjectMeta, &oldOp.ObjectMeta, field.NewPath("metadata"))
	fldPath := field.NewPath("status")
	allErrs = append(allErrs, validateOptionalEnum(fldPath.Child("state"), newOp.Status.State, armOperationStates)...)
	if oldOp.Status.State.Final() && newOp.Status.State != oldOp.Status.State {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("state"), newOp.Status.State, "the operation already ended "+string(oldOp.Status.State)))
	}
	if e := newOp.Status.Error; e != nil && e.Code == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("error", "code"), "an operation's error needs a code, such as Canceled"))
	}
	return allErrs
}

func validateOperationName(fldPath *field.Path, name string) field.ErrorList {
	return validateLowercaseUUID(fldPath, name, "the operation ID")
}

// validateLowercaseUUID requires what, a UUID, in lowercase: one object per ID whatever casing ARM uses.
func validateLowercaseUUID(fldPath *field.Path, value, what string) field.ErrorList {
	if value != strings.ToLower(value) {
		return field.ErrorList{field.Invalid(fldPath, value, "must be "+what+", a UUID in lowercase")}
	}
	return validateUUID(fldPath, value)
}
