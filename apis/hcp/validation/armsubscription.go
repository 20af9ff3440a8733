package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

var armSubscriptionStates = []hcp.ARMSubscriptionState{
	hcp.ARMSubscriptionRegistered, hcp.ARMSubscriptionUnregistered, hcp.ARMSubscriptionWarned,
	hcp.ARMSubscriptionSuspended, hcp.ARMSubscriptionDeleted,
}

// ValidateARMSubscription validates a subscription on create: it is named after its lowercased ID and
// in a state the service knows. The rest is ARM's record of the subscription, stored as ARM sends it,
// as the ARO HCP frontend stores it: refusing ARM's own notification would leave the service with a
// state ARM no longer has.
func ValidateARMSubscription(s *hcp.ARMSubscription) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&s.ObjectMeta, false, validateSubscriptionName, field.NewPath("metadata"))
	return append(allErrs, validateEnum(field.NewPath("spec", "state"), s.Spec.State, armSubscriptionStates)...)
}

// ValidateARMSubscriptionUpdate validates an update: ARM sends the whole subscription each time, so
// any field may change.
func ValidateARMSubscriptionUpdate(newS, oldS *hcp.ARMSubscription) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newS.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateARMSubscription(newS)...)
}

// ValidateARMSubscriptionStatusUpdate validates a write to the status subresource.
func ValidateARMSubscriptionStatusUpdate(newS, oldS *hcp.ARMSubscription) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newS.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, metav1validation.ValidateConditions(newS.Status.Conditions, field.NewPath("status", "conditions"))...)
}

// validateSubscriptionName requires the lowercased subscription ID as the name, so that one subscription
// has one object whatever casing ARM uses.
func validateSubscriptionName(fldPath *field.Path, name string) field.ErrorList {
	return validateLowercaseUUID(fldPath, name, "the subscription ID")
}
