package validation

import (
	"time"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

var armSubscriptionStates = []hcp.ARMSubscriptionState{
	hcp.ARMSubscriptionRegistered, hcp.ARMSubscriptionUnregistered, hcp.ARMSubscriptionWarned,
	hcp.ARMSubscriptionSuspended, hcp.ARMSubscriptionDeleted,
}

// ValidateARMSubscription validates a subscription on create: it is named after its lowercased ID.
func ValidateARMSubscription(s *hcp.ARMSubscription) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&s.ObjectMeta, false, validateSubscriptionName, field.NewPath("metadata"))
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, validateEnum(fldPath.Child("state"), s.Spec.State, armSubscriptionStates)...)
	if d := s.Spec.RegistrationDate; d != "" && !isARMDate(d) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("registrationDate"), d, "must be a date as ARM writes it, RFC 1123 or RFC 3339"))
	}
	if p := s.Spec.Properties; p != nil {
		propPath := fldPath.Child("properties")
		if p.TenantID != "" {
			allErrs = append(allErrs, validateUUID(propPath.Child("tenantID"), p.TenantID)...)
		}
		for i, f := range p.RegisteredFeatures {
			if f.Name == "" {
				allErrs = append(allErrs, field.Required(propPath.Child("registeredFeatures").Index(i).Child("name"), "must name the feature, such as Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures"))
			}
		}
		for i, t := range p.ManagedByTenants {
			allErrs = append(allErrs, validateUUID(propPath.Child("managedByTenants").Index(i).Child("tenantID"), t.TenantID)...)
		}
	}
	return allErrs
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

func isARMDate(s string) bool {
	for _, layout := range []string{time.RFC1123, time.RFC3339Nano} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
