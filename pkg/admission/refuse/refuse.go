// Package refuse builds the status errors admission plugins answer with, so that
// every refusal names the plugin that made it and uses the code the rule calls for:
// 422 for an invalid value, 409 for a conflict with the state of another object,
// 403 for a policy limit.
package refuse

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
)

// Invalid refuses a request with 422 Invalid; each error's detail ends with the plugin's name.
func Invalid(plugin string, a admission.Attributes, errs field.ErrorList) error {
	for _, e := range errs {
		e.Detail = fmt.Sprintf("%s (admission plugin %s)", e.Detail, plugin)
	}
	return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), errs)
}

// Conflict refuses a request with 409 Conflict: it cannot be done while another object is as it is.
func Conflict(plugin string, a admission.Attributes, format string, args ...interface{}) error {
	return apierrors.NewConflict(a.GetResource().GroupResource(), a.GetName(),
		fmt.Errorf("%s: %s", plugin, fmt.Sprintf(format, args...)))
}

// Forbidden refuses a request with 403 Forbidden: a policy limit says no.
func Forbidden(plugin string, a admission.Attributes, format string, args ...interface{}) error {
	return admission.NewForbidden(a, fmt.Errorf("%s: %s", plugin, fmt.Sprintf(format, args...)))
}
