package validation

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// The limits of an external auth, as ARM and OpenShift's authentication config set them.
const (
	maxAudiences            = 10
	maxExternalAuthClients  = 20
	maxClaimLength          = 256
	maxComponentNameLength  = 256
	maxComponentNamespace   = 63
	externalAuthNameExample = "entra"
)

var (
	externalAuthClientTypes = []hcp.ExternalAuthClientType{hcp.ExternalAuthClientConfidential, hcp.ExternalAuthClientPublic}
	usernamePrefixPolicies  = []hcp.UsernamePrefixPolicy{hcp.UsernamePrefixPolicyNone, hcp.UsernamePrefixPolicyPrefix, hcp.UsernamePrefixPolicyNoPrefix}
	tokenValidationRules    = []hcp.TokenValidationRuleType{hcp.TokenValidationRuleRequiredClaim}

	// externalAuthProvisioningStates adds AwaitingSecret to the states every resource has.
	externalAuthProvisioningStates = append(provisioningStates[:len(provisioningStates):len(provisioningStates)],
		hcp.ProvisioningStateAwaitingSecret)
)

// ValidateExternalAuth validates an external auth on create.
func ValidateExternalAuth(ea *hcp.ExternalAuth) field.ErrorList {
	validateName := func(fldPath *field.Path, name string) field.ErrorList {
		return validateClusterChildName(fldPath, name, ea.Spec.ClusterName, "external auth", externalAuthNameExample)
	}
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&ea.ObjectMeta, true, validateName, field.NewPath("metadata"))
	return append(allErrs, validateExternalAuthSpec(&ea.Spec, field.NewPath("spec"))...)
}

// ValidateExternalAuthUpdate validates an external auth on update: everything ValidateExternalAuth
// checks, and that it still belongs to the same cluster. Everything else may change, as in ARM.
func ValidateExternalAuthUpdate(newEA, oldEA *hcp.ExternalAuth) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newEA.ObjectMeta, &oldEA.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateExternalAuth(newEA)...)
	return append(allErrs, apivalidation.ValidateImmutableField(newEA.Spec.ClusterName, oldEA.Spec.ClusterName, field.NewPath("spec", "clusterName"))...)
}

// ValidateExternalAuthStatusUpdate validates the status an update writes.
func ValidateExternalAuthStatusUpdate(newEA, oldEA *hcp.ExternalAuth) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newEA.ObjectMeta, &oldEA.ObjectMeta, field.NewPath("metadata"))
	fldPath := field.NewPath("status")
	allErrs = append(allErrs, validateOptionalEnum(fldPath.Child("provisioningState"), newEA.Status.ProvisioningState, externalAuthProvisioningStates)...)
	allErrs = append(allErrs, metav1validation.ValidateConditions(newEA.Status.Conditions, fldPath.Child("conditions"))...)
	return append(allErrs, apivalidation.ValidateNonnegativeField(newEA.Status.ObservedGeneration, fldPath.Child("observedGeneration"))...)
}

func validateExternalAuthSpec(spec *hcp.ExternalAuthSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateClusterName(fldPath.Child("clusterName"), spec.ClusterName)
	allErrs = append(allErrs, validateTokenIssuer(&spec.Issuer, fldPath.Child("issuer"))...)
	allErrs = append(allErrs, validateExternalAuthClients(spec.Clients, spec.Issuer.Audiences, fldPath.Child("clients"))...)
	return append(allErrs, validateExternalAuthClaim(&spec.Claim, fldPath.Child("claim"))...)
}

func validateTokenIssuer(issuer *hcp.TokenIssuer, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if issuer.URL == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("url"), "must be an https URL, such as https://login.microsoftonline.com/<tenant>/v2.0"))
	} else {
		allErrs = append(allErrs, validateURL(fldPath.Child("url"), issuer.URL,
			"must be an https URL, such as https://login.microsoftonline.com/<tenant>/v2.0", "https")...)
	}
	audPath := fldPath.Child("audiences")
	switch n := len(issuer.Audiences); {
	case n == 0:
		allErrs = append(allErrs, field.Required(audPath, fmt.Sprintf("must have 1 to %d audiences", maxAudiences)))
	case n > maxAudiences:
		allErrs = append(allErrs, field.TooMany(audPath, n, maxAudiences))
	}
	allErrs = append(allErrs, validateDistinctStrings(issuer.Audiences, audPath)...)
	if issuer.CA != "" {
		allErrs = append(allErrs, validateCertificatePEM(fldPath.Child("ca"), issuer.CA)...)
	}
	return allErrs
}

// validateDistinctStrings requires the entries of a set to be non-empty and distinct.
func validateDistinctStrings(values []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, v := range values {
		switch {
		case v == "":
			allErrs = append(allErrs, field.Required(fldPath.Index(i), "must not be empty"))
		case seen.Has(v):
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), v))
		}
		seen.Insert(v)
	}
	return allErrs
}

func validateExternalAuthClients(clients []hcp.ExternalAuthClient, audiences []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(clients) > maxExternalAuthClients {
		allErrs = append(allErrs, field.TooMany(fldPath, len(clients), maxExternalAuthClients))
	}
	components := sets.New[hcp.ExternalAuthClientComponent]()
	for i, c := range clients {
		idxPath := fldPath.Index(i)
		compPath := idxPath.Child("component")
		allErrs = append(allErrs, validateRequiredString(compPath.Child("name"), c.Component.Name, maxComponentNameLength)...)
		allErrs = append(allErrs, validateRequiredString(compPath.Child("authClientNamespace"), c.Component.AuthClientNamespace, maxComponentNamespace)...)
		if components.Has(c.Component) {
			allErrs = append(allErrs, field.Duplicate(compPath, fmt.Sprintf("%s/%s", c.Component.AuthClientNamespace, c.Component.Name)))
		}
		components.Insert(c.Component)
		switch {
		case c.ClientID == "":
			allErrs = append(allErrs, field.Required(idxPath.Child("clientID"), "must be one of the issuer's audiences"))
		case !sets.New(audiences...).Has(c.ClientID):
			allErrs = append(allErrs, field.Invalid(idxPath.Child("clientID"), c.ClientID,
				fmt.Sprintf("must be one of the issuer's audiences: %s", quoteAll(audiences))))
		}
		allErrs = append(allErrs, validateDistinctStrings(c.ExtraScopes, idxPath.Child("extraScopes"))...)
		allErrs = append(allErrs, validateEnum(idxPath.Child("type"), c.Type, externalAuthClientTypes)...)
	}
	return allErrs
}

func validateExternalAuthClaim(claim *hcp.ExternalAuthClaim, fldPath *field.Path) field.ErrorList {
	mapPath := fldPath.Child("mappings")
	user := &claim.Mappings.Username
	userPath := mapPath.Child("username")
	allErrs := validateRequiredString(userPath.Child("claim"), user.Claim, maxClaimLength)
	allErrs = append(allErrs, validateEnum(userPath.Child("prefixPolicy"), user.PrefixPolicy, usernamePrefixPolicies)...)
	switch {
	case user.PrefixPolicy == hcp.UsernamePrefixPolicyPrefix && user.Prefix == "":
		allErrs = append(allErrs, field.Required(userPath.Child("prefix"), "must be set when prefixPolicy is Prefix"))
	case user.PrefixPolicy != hcp.UsernamePrefixPolicyPrefix && user.Prefix != "":
		allErrs = append(allErrs, field.Invalid(userPath.Child("prefix"), user.Prefix,
			fmt.Sprintf("may only be set when prefixPolicy is Prefix, not %q", user.PrefixPolicy)))
	}
	if g := claim.Mappings.Groups; g != nil {
		allErrs = append(allErrs, validateRequiredString(mapPath.Child("groups", "claim"), g.Claim, maxClaimLength)...)
	}
	for i, rule := range claim.ValidationRules {
		rulePath := fldPath.Child("validationRules").Index(i)
		allErrs = append(allErrs, validateEnum(rulePath.Child("type"), rule.Type, tokenValidationRules)...)
		reqPath := rulePath.Child("requiredClaim")
		if rule.RequiredClaim.Claim == "" {
			allErrs = append(allErrs, field.Required(reqPath.Child("claim"), "must name the claim a token must carry"))
		}
		if rule.RequiredClaim.RequiredValue == "" {
			allErrs = append(allErrs, field.Required(reqPath.Child("requiredValue"), "must be the value the claim must have"))
		}
	}
	return allErrs
}
