// Package validation checks HCP API objects (internal versions, after defaulting) against the
// rules ARM applies to the same resources in api-version 2026-09-01-preview, so a request ARM
// would reject is rejected here, with a field path and a message that says what is allowed.
package validation

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// Limits that more than one kind shares.
const (
	// clusterNameMaxLength is ARM's limit on hcpOpenShiftClusters names.
	clusterNameMaxLength = 54
	// maxNodes bounds a node pool and the cluster autoscaler.
	maxNodes = 500
	// maxNodesWithoutZone bounds a node pool that is not pinned to an availability zone.
	maxNodesWithoutZone = 200
	// maxNodeDrainTimeoutMinutes is one week.
	maxNodeDrainTimeoutMinutes = 7 * 24 * 60
	// resourceGroupMaxLength is Azure's limit on resource group names.
	resourceGroupMaxLength = 90
)

// The ARM resource types that fields of this API refer to.
const (
	subnetResourceType               = "Microsoft.Network/virtualNetworks/subnets"
	networkSecurityGroupResourceType = "Microsoft.Network/networkSecurityGroups"
	userAssignedIdentityResourceType = "Microsoft.ManagedIdentity/userAssignedIdentities"
	diskEncryptionSetResourceType    = "Microsoft.Compute/diskEncryptionSets"
)

var (
	channelGroups = []string{"stable", "fast", "candidate", "nightly"}

	provisioningStates = []hcp.ProvisioningState{
		hcp.ProvisioningStateAccepted, hcp.ProvisioningStateProvisioning, hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateDeleting, hcp.ProvisioningStateSucceeded, hcp.ProvisioningStateFailed,
		hcp.ProvisioningStateCanceled,
	}
)

// validateEnum requires value to be one of allowed. Defaulting fills every enum that has an ARM
// default, so an empty value means the field was required.
func validateEnum[T ~string](fldPath *field.Path, value T, allowed []T) field.ErrorList {
	if slices.Contains(allowed, value) {
		return nil
	}
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "must be one of "+quoteAll(allowed))}
	}
	return field.ErrorList{field.NotSupported(fldPath, value, allowed)}
}

// validateOptionalEnum is validateEnum for fields that may stay empty.
func validateOptionalEnum[T ~string](fldPath *field.Path, value T, allowed []T) field.ErrorList {
	if value == "" {
		return nil
	}
	return validateEnum(fldPath, value, allowed)
}

func quoteAll[T ~string](values []T) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(string(v))
	}
	return strings.Join(quoted, ", ")
}

// validateRange requires min <= value <= max, saying which bound is broken as apimachinery's
// declarative validation and the ARO HCP frontend say it.
func validateRange[T int32 | int64](fldPath *field.Path, value, minimum, maximum T) field.ErrorList {
	if value < minimum {
		return validateMinimum(fldPath, value, minimum)
	}
	if value > maximum {
		return field.ErrorList{field.Invalid(fldPath, value, fmt.Sprintf("must be less than or equal to %d", maximum))}
	}
	return nil
}

// validateMinimum requires value >= minimum.
func validateMinimum[T int32 | int64](fldPath *field.Path, value, minimum T) field.ErrorList {
	if value < minimum {
		return field.ErrorList{field.Invalid(fldPath, value, fmt.Sprintf("must be greater than or equal to %d", minimum))}
	}
	return nil
}

// validateRequiredString requires 1 to maxLength bytes.
func validateRequiredString(fldPath *field.Path, value string, maxLength int) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must be 1 to %d characters", maxLength))}
	}
	if len(value) > maxLength {
		return field.ErrorList{field.TooLong(fldPath, value, maxLength)}
	}
	return nil
}

func validateUUID(fldPath *field.Path, value string) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "must be a UUID such as 00000000-0000-0000-0000-000000000000")}
	}
	if !IsUUID(value) {
		return field.ErrorList{field.Invalid(fldPath, value, "must be a UUID such as 00000000-0000-0000-0000-000000000000")}
	}
	return nil
}

// validateRegion requires an Azure region name such as "eastus".
func validateRegion(fldPath *field.Path, value string) field.ErrorList {
	const msg = "must be an Azure region name of lowercase letters and digits, such as eastus"
	if value == "" {
		return field.ErrorList{field.Required(fldPath, msg)}
	}
	if !isLowercaseAlphanumeric(value) { // Azure region names as ARM writes them in resource IDs: eastus, westeurope2
		return field.ErrorList{field.Invalid(fldPath, value, msg)}
	}
	return nil
}

// validateResourceGroupName applies Azure's resource group naming rules.
func validateResourceGroupName(fldPath *field.Path, value string) field.ErrorList {
	const msg = "must be an Azure resource group name: letters, digits, '-', '_', '.', '(' and ')', not ending in '.'"
	switch {
	case value == "":
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must be 1 to %d characters", resourceGroupMaxLength))}
	case utf8.RuneCountInString(value) > resourceGroupMaxLength:
		return field.ErrorList{field.TooLongCharacters(fldPath, value, resourceGroupMaxLength)}
	case !isResourceGroupName(value) || strings.HasSuffix(value, "."): // ARM's ^[-\w\._\(\)]+$, whose \w takes Unicode letters and digits
		return field.ErrorList{field.Invalid(fldPath, value, msg)}
	}
	return nil
}

// validateClusterName applies ARM's cluster name rule. It is both the HCPCluster's
// metadata.name rule and the rule for the spec.clusterName references to it.
func validateClusterName(fldPath *field.Path, name string) field.ErrorList {
	const msg = "must be lowercase letters, digits and '-', start with a letter and end with a letter or digit, such as my-cluster"
	switch {
	case name == "":
		return field.ErrorList{field.Required(fldPath, "must name an HCPCluster in the same namespace")}
	case len(name) > clusterNameMaxLength:
		return field.ErrorList{field.TooLong(fldPath, name, clusterNameMaxLength)}
	case !isLowercaseName(name): // ARM's hcpOpenShiftClusters name rule, lowercased as Kubernetes names are
		return field.ErrorList{field.Invalid(fldPath, name, msg)}
	}
	return nil
}

// validateDNSSubdomainName is apivalidation.NameIsDNSSubdomain for ValidateObjectMetaWithOpts.
func validateDNSSubdomainName(fldPath *field.Path, name string) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsDNS1123Subdomain(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

// validateDNSLabelName is apivalidation.NameIsDNSLabel for ValidateObjectMetaWithOpts.
func validateDNSLabelName(fldPath *field.Path, name string) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsDNS1123Label(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

// validateCIDR requires an IPv4 CIDR in canonical form ("10.0.0.0/16", not "10.0.0.1/16"):
// a range with host bits set is more likely a typo than a wish, so it is not silently masked.
func validateCIDR(fldPath *field.Path, value string) (netip.Prefix, field.ErrorList) {
	const msg = "must be an IPv4 CIDR such as 10.0.0.0/16"
	if value == "" {
		return netip.Prefix{}, field.ErrorList{field.Required(fldPath, msg)}
	}
	prefix, err := netip.ParsePrefix(value)
	if err != nil || !prefix.Addr().Is4() {
		return netip.Prefix{}, field.ErrorList{field.Invalid(fldPath, value, msg)}
	}
	if prefix != prefix.Masked() {
		return netip.Prefix{}, field.ErrorList{field.Invalid(fldPath, value,
			fmt.Sprintf("must be an IPv4 CIDR with no host bits set, such as %s", prefix.Masked()))}
	}
	return prefix, nil
}

// validateARMID requires id to be the ARM ID of a resource of resourceType (for example
// "Microsoft.Network/virtualNetworks/subnets") in a resource group, and in subscriptionID
// when that is not empty. The whole chain of parent types is checked, not only the last
// one: ARM parses ".../userAssignedIdentities/a/providers/Microsoft.ManagedIdentity/userAssignedIdentities/b"
// as an identity too, but it is an extension resource, not the identity it looks like.
func validateARMID(fldPath *field.Path, id, resourceType, subscriptionID string) field.ErrorList {
	// The message is made only for an error: every create checks several IDs.
	msg := func() string {
		return fmt.Sprintf("must be the ARM ID of a %s, such as %s", resourceType, exampleARMID(resourceType))
	}
	if id == "" {
		return field.ErrorList{field.Required(fldPath, msg())}
	}
	subscription, ok := armIDSubscription(id, resourceType)
	if !ok {
		return field.ErrorList{field.Invalid(fldPath, id, msg())}
	}
	if !IsUUID(subscription) {
		return field.ErrorList{field.Invalid(fldPath, id, "the subscription in the ID must be a UUID; "+msg())}
	}
	if subscriptionID != "" && !strings.EqualFold(subscription, subscriptionID) {
		return field.ErrorList{field.Invalid(fldPath, id, fmt.Sprintf("must be in the same Azure subscription: %q", subscriptionID))}
	}
	return nil
}

// armIDSubscription reads id as the ARM ID of a resource of resourceType in a resource group, and
// returns the subscription it names; ok is false when it is not one.
func armIDSubscription(id, resourceType string) (subscription string, ok bool) {
	if subscription, _, ok := plainARMID(id, resourceType); ok {
		return subscription, true
	}
	parsed, err := arm.ParseResourceID(id)
	if err == nil {
		err = parsed.ValidateResourceTypeChain(resourceTypeChain(resourceType))
	}
	// The parser drops empty and blank segments; an ID that does not print back the same
	// (ignoring case, as ARM does) had some, or a missing name.
	if err != nil || !strings.EqualFold(parsed.String(), id) || hasEmptyName(parsed) {
		return "", false
	}
	return parsed.SubscriptionID, true
}

// typeChains remembers resourceTypeChain's answers: a handful of resource types, asked for on every create.
var typeChains sync.Map // resource type -> []arm.ResourceType

// resourceTypeChain lists the types from the tenant down to a resource of resourceType in a
// resource group: "Microsoft.Network/virtualNetworks/subnets" needs a virtual network parent.
func resourceTypeChain(resourceType string) []arm.ResourceType {
	if chain, ok := typeChains.Load(resourceType); ok {
		return chain.([]arm.ResourceType)
	}
	namespace, typeName, _ := strings.Cut(resourceType, "/")
	chain := []arm.ResourceType{arm.TenantResourceType, arm.SubscriptionResourceType, arm.ResourceGroupResourceType}
	types := strings.Split(typeName, "/")
	for i := range types {
		chain = append(chain, arm.NewResourceType(namespace, strings.Join(types[:i+1], "/")))
	}
	typeChains.Store(resourceType, chain)
	return chain
}

func hasEmptyName(id *arm.ResourceID) bool {
	for ; id != nil && id.Parent != nil; id = id.Parent {
		if id.Name == "" {
			return true
		}
	}
	return false
}

// exampleARMID shows the shape of an ID of resourceType, with placeholders for the names.
func exampleARMID(resourceType string) string {
	namespace, typeName, _ := strings.Cut(resourceType, "/")
	var b strings.Builder
	b.WriteString("/subscriptions/<subscription>/resourceGroups/<resource-group>/providers/" + namespace)
	for _, t := range strings.Split(typeName, "/") {
		b.WriteString("/" + t + "/<name>")
	}
	return b.String()
}

// MaxURLLength bounds a URL field, as browsers and proxies bound URLs.
const MaxURLLength = 2048

// validateURL requires an absolute URL of at most MaxURLLength bytes, with a host and one of schemes;
// detail says what is allowed.
func validateURL(fldPath *field.Path, value, detail string, schemes ...string) field.ErrorList {
	if len(value) > MaxURLLength {
		return field.ErrorList{field.TooLong(fldPath, value, MaxURLLength)}
	}
	if u, err := url.Parse(value); err != nil || !slices.Contains(schemes, u.Scheme) || u.Host == "" {
		return field.ErrorList{field.Invalid(fldPath, value, detail)}
	}
	return nil
}

// validateHTTPSURL requires an absolute https URL with a host.
func validateHTTPSURL(fldPath *field.Path, value string) field.ErrorList {
	return validateURL(fldPath, value, "must be an https URL, such as https://identity.example.com/subscriptions/...", "https")
}
