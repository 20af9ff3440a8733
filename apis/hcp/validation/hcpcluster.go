package validation

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

const (
	// BaseDomainPrefixMaxLength is ARO HCP's limit on spec.dns.baseDomainPrefix.
	BaseDomainPrefixMaxLength = 15
	hostPrefixMin             = 23
	hostPrefixMax             = 26
	maxAuthorizedCIDRs        = 500
	maxImageDigestMirrors     = 240
	maxMirrorsPerSource       = 255
	imageRepositoryMaxLength  = 255
	kmsNameMaxLength          = 255

	identityTypeUserAssigned          = "UserAssigned"
	identityTypeSystemAndUserAssigned = "SystemAssigned,UserAssigned"
	keyManagementModeCustomerManaged  = "CustomerManaged"
	customerManagedEncryptionTypeKMS  = "KMS"

	addressOrCIDRExample = "an IPv4 address such as 192.0.2.7 or an IPv4 CIDR such as 192.0.2.0/24"
)

var (
	networkTypes        = []string{"OVNKubernetes", "Other"}
	visibilities        = []string{"Public", "Private"}
	ingressTypes        = []string{"Public", "Private", "Disabled"}
	outboundTypes       = []string{"LoadBalancer"}
	identityTypes       = []string{"None", "SystemAssigned", identityTypeUserAssigned, identityTypeSystemAndUserAssigned}
	keyManagementModes  = []string{keyManagementModeCustomerManaged}
	encryptionTypes     = []string{customerManagedEncryptionTypeKMS}
	imageRegistryStates = []string{"Enabled", "Disabled"}
	cryptoRestrictions  = []string{"None", "FIPS"}
)

// ValidateHCPCluster validates a cluster on create.
func ValidateHCPCluster(c *hcp.HCPCluster) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&c.ObjectMeta, true, validateClusterName, field.NewPath("metadata"))
	return append(allErrs, validateHCPClusterSpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidateHCPClusterUpdate validates a cluster on update: everything ValidateHCPCluster checks,
// and that the fields ARM only accepts on create did not change.
func ValidateHCPClusterUpdate(newC, oldC *hcp.HCPCluster) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newC.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateHCPCluster(newC)...)
	return append(allErrs, validateHCPClusterSpecUpdate(&newC.Spec, &oldC.Spec, field.NewPath("spec"))...)
}

// ValidateHCPClusterStatusUpdate validates a write to the status subresource.
func ValidateHCPClusterStatusUpdate(newC, oldC *hcp.HCPCluster) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newC.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))
	fldPath := field.NewPath("status")
	allErrs = append(allErrs, validateHCPClusterStatus(&newC.Status, fldPath)...)
	// The cluster ID names the cluster's namespace on its management cluster; changing it would orphan that.
	if oldC.Status.ClusterID != "" {
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(newC.Status.ClusterID, oldC.Status.ClusterID, fldPath.Child("clusterID"))...)
	}
	return allErrs
}

func validateHCPClusterSpec(spec *hcp.HCPClusterSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateRegion(fldPath.Child("location"), spec.Location)
	allErrs = append(allErrs, validateAzureResourceReference(&spec.Azure, fldPath.Child("azure"))...)
	allErrs = append(allErrs, validateClusterVersion(&spec.Version, fldPath.Child("version"))...)
	allErrs = append(allErrs, validateDNS(&spec.DNS, fldPath.Child("dns"))...)
	allErrs = append(allErrs, validateNetwork(&spec.Network, fldPath.Child("network"))...)
	allErrs = append(allErrs, validateAPI(&spec.API, fldPath.Child("api"))...)
	allErrs = append(allErrs, validateEnum(fldPath.Child("ingress", "type"), spec.Ingress.Type, ingressTypes)...)
	allErrs = append(allErrs, validatePlatform(&spec.Platform, &spec.Azure, fldPath.Child("platform"))...)
	if spec.Identity != nil {
		allErrs = append(allErrs, validateIdentity(spec.Identity, fldPath.Child("identity"))...)
	}
	allErrs = append(allErrs, validateClusterAutoscaling(&spec.Autoscaling, fldPath.Child("autoscaling"))...)
	if spec.Etcd.DataEncryption != nil {
		allErrs = append(allErrs, validateEtcdDataEncryption(spec.Etcd.DataEncryption, fldPath.Child("etcd", "dataEncryption"))...)
	}
	allErrs = append(allErrs, validateImageDigestMirrors(spec.ImageDigestMirrors, fldPath.Child("imageDigestMirrors"))...)
	if spec.NodeDrainTimeoutMinutes != nil {
		allErrs = append(allErrs, validateRange(fldPath.Child("nodeDrainTimeoutMinutes"), *spec.NodeDrainTimeoutMinutes, 0, maxNodeDrainTimeoutMinutes)...)
	}
	allErrs = append(allErrs, validateEnum(fldPath.Child("clusterImageRegistry", "state"), spec.ClusterImageRegistry.State, imageRegistryStates)...)
	allErrs = append(allErrs, validateEnum(fldPath.Child("cryptoRestrictions"), spec.CryptoRestrictions, cryptoRestrictions)...)
	return allErrs
}

func validateAzureResourceReference(ref *hcp.AzureResourceReference, fldPath *field.Path) field.ErrorList {
	allErrs := validateUUID(fldPath.Child("subscriptionID"), ref.SubscriptionID)
	allErrs = append(allErrs, validateResourceGroupName(fldPath.Child("resourceGroup"), ref.ResourceGroup)...)
	if ref.TenantID != "" {
		allErrs = append(allErrs, validateUUID(fldPath.Child("tenantID"), ref.TenantID)...)
	}
	return allErrs
}

func validateClusterVersion(v *hcp.VersionProfile, fldPath *field.Path) field.ErrorList {
	const msg = "must be MAJOR.MINOR, such as 4.20; the service picks the patch release"
	var allErrs field.ErrorList
	switch {
	case v.ID == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("id"), msg))
	case !isMajorMinor(v.ID): // the service picks the patch release
		allErrs = append(allErrs, field.Invalid(fldPath.Child("id"), v.ID, msg))
	}
	allErrs = append(allErrs, validateOptionalEnum(fldPath.Child("upgradePolicy"), v.UpgradePolicy, upgradePolicies)...)
	return append(allErrs, validateEnum(fldPath.Child("channelGroup"), v.ChannelGroup, channelGroups)...)
}

var upgradePolicies = []hcp.UpgradePolicy{hcp.UpgradePolicyAutomatic, hcp.UpgradePolicyManual}

func validateDNS(dns *hcp.DNSProfile, fldPath *field.Path) field.ErrorList {
	p := fldPath.Child("baseDomainPrefix")
	switch {
	case dns.BaseDomainPrefix == "":
		return nil
	case len(dns.BaseDomainPrefix) > BaseDomainPrefixMaxLength:
		return field.ErrorList{field.TooLong(p, dns.BaseDomainPrefix, BaseDomainPrefixMaxLength)}
	case !isLowercaseName(dns.BaseDomainPrefix):
		return field.ErrorList{field.Invalid(p, dns.BaseDomainPrefix,
			"must be lowercase letters, digits and '-', start with a letter and end with a letter or digit, such as mycluster")}
	}
	return nil
}

func validateNetwork(n *hcp.NetworkProfile, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(fldPath.Child("networkType"), n.NetworkType, networkTypes)

	podPrefix, podErrs := validateCIDR(fldPath.Child("podCIDR"), n.PodCIDR)
	servicePrefix, serviceErrs := validateCIDR(fldPath.Child("serviceCIDR"), n.ServiceCIDR)
	machinePrefix, machineErrs := validateCIDR(fldPath.Child("machineCIDR"), n.MachineCIDR)
	allErrs = append(allErrs, podErrs...)
	allErrs = append(allErrs, serviceErrs...)
	allErrs = append(allErrs, machineErrs...)
	// Overlaps are the network's error, not one range's, in the ARO HCP frontend's words and order.
	for _, pair := range []struct {
		name, otherName string
		prefix, other   netip.Prefix
		value, another  string
	}{
		{"machine", "service", machinePrefix, servicePrefix, n.MachineCIDR, n.ServiceCIDR},
		{"machine", "pod", machinePrefix, podPrefix, n.MachineCIDR, n.PodCIDR},
		{"service", "pod", servicePrefix, podPrefix, n.ServiceCIDR, n.PodCIDR},
	} {
		if pair.prefix.IsValid() && pair.other.IsValid() && pair.prefix.Overlaps(pair.other) {
			allErrs = append(allErrs, field.Invalid(fldPath, pair.value,
				fmt.Sprintf("%s CIDR '%s' and %s CIDR '%s' overlap", pair.name, pair.value, pair.otherName, pair.another)))
		}
	}

	hostPrefixErrs := validateRange(fldPath.Child("hostPrefix"), n.HostPrefix, hostPrefixMin, hostPrefixMax)
	allErrs = append(allErrs, hostPrefixErrs...)
	// Every node gets a /hostPrefix out of the pod range, so the pod range must hold more than one.
	if podPrefix.IsValid() && len(hostPrefixErrs) == 0 && podPrefix.Bits() >= int(n.HostPrefix) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("podCIDR"), n.PodCIDR,
			fmt.Sprintf("prefix length must be less than %s (%d) to leave room for the nodes' pod ranges, such as /14",
				fldPath.Child("hostPrefix"), n.HostPrefix)))
	}
	return allErrs
}

func validateAPI(api *hcp.APIProfile, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(fldPath.Child("visibility"), api.Visibility, visibilities)
	if api.AuthorizedCIDRs == nil {
		return allErrs
	}
	p := fldPath.Child("authorizedCIDRs")
	switch n := len(api.AuthorizedCIDRs); {
	case n == 0:
		allErrs = append(allErrs, field.Required(p, fmt.Sprintf("must list 1 to %d entries, each %s", maxAuthorizedCIDRs, addressOrCIDRExample)))
	case n > maxAuthorizedCIDRs:
		allErrs = append(allErrs, field.TooMany(p, n, maxAuthorizedCIDRs))
	}
	// A bare address means that address alone, so "192.0.2.7" and "192.0.2.7/32" are duplicates.
	seen := map[netip.Prefix]bool{}
	for i, value := range api.AuthorizedCIDRs {
		prefix, ok := parseAddressOrCIDR(value)
		switch {
		case !ok:
			allErrs = append(allErrs, field.Invalid(p.Index(i), value, "must be "+addressOrCIDRExample))
		case prefix != prefix.Masked():
			allErrs = append(allErrs, field.Invalid(p.Index(i), value,
				fmt.Sprintf("must be an IPv4 CIDR with no host bits set, such as %s", prefix.Masked())))
		case seen[prefix]:
			allErrs = append(allErrs, field.Duplicate(p.Index(i), value))
		default:
			seen[prefix] = true
		}
	}
	return allErrs
}

// parseAddressOrCIDR parses an IPv4 address as a /32, or an IPv4 CIDR.
func parseAddressOrCIDR(value string) (netip.Prefix, bool) {
	if !strings.Contains(value, "/") {
		addr, err := netip.ParseAddr(value)
		if err != nil || !addr.Is4() {
			return netip.Prefix{}, false
		}
		return netip.PrefixFrom(addr, addr.BitLen()), true
	}
	prefix, err := netip.ParsePrefix(value)
	return prefix, err == nil && prefix.Addr().Is4()
}

func validatePlatform(p *hcp.PlatformProfile, azure *hcp.AzureResourceReference, fldPath *field.Path) field.ErrorList {
	// ARM requires the cluster's subnets in the cluster's own subscription. When that subscription
	// is itself invalid, the error is on spec.azure.subscriptionID and comparing would only add noise.
	subscriptionID := ""
	if IsUUID(azure.SubscriptionID) {
		subscriptionID = azure.SubscriptionID
	}
	allErrs := validateARMID(fldPath.Child("subnetID"), p.SubnetID, subnetResourceType, subscriptionID)
	if p.VnetIntegrationSubnetID != "" {
		vnetPath := fldPath.Child("vnetIntegrationSubnetID")
		errs := validateARMID(vnetPath, p.VnetIntegrationSubnetID, subnetResourceType, subscriptionID)
		allErrs = append(allErrs, errs...)
		if len(errs) == 0 && strings.EqualFold(p.VnetIntegrationSubnetID, p.SubnetID) {
			allErrs = append(allErrs, field.Invalid(vnetPath, p.VnetIntegrationSubnetID,
				fmt.Sprintf("must differ from %s: the integration subnet is dedicated to control plane traffic", fldPath.Child("subnetID"))))
		}
	}
	allErrs = append(allErrs, validateARMID(fldPath.Child("networkSecurityGroupID"), p.NetworkSecurityGroupID, networkSecurityGroupResourceType, "")...)
	allErrs = append(allErrs, validateEnum(fldPath.Child("outboundType"), p.OutboundType, outboundTypes)...)
	if p.ManagedResourceGroup != "" {
		rgPath := fldPath.Child("managedResourceGroup")
		errs := validateResourceGroupName(rgPath, p.ManagedResourceGroup)
		allErrs = append(allErrs, errs...)
		// The service owns everything in the managed resource group, so it cannot be the customer's.
		if len(errs) == 0 && strings.EqualFold(p.ManagedResourceGroup, azure.ResourceGroup) {
			allErrs = append(allErrs, field.Invalid(rgPath, p.ManagedResourceGroup,
				fmt.Sprintf("must not be the same resource group name: %q", azure.ResourceGroup)))
		}
		// Nor can the customer's network be in it.
		for _, subnet := range []struct {
			path *field.Path
			id   string
		}{{fldPath.Child("subnetID"), p.SubnetID}, {fldPath.Child("vnetIntegrationSubnetID"), p.VnetIntegrationSubnetID}} {
			if resourceGroup, ok := subnetResourceGroup(subnet.id); ok && strings.EqualFold(resourceGroup, p.ManagedResourceGroup) {
				allErrs = append(allErrs, field.Invalid(subnet.path, subnet.id,
					fmt.Sprintf("must not be the same resource group name: %q", p.ManagedResourceGroup)))
			}
		}
	}
	if u := p.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL; u != "" {
		allErrs = append(allErrs, validateHTTPSURL(fldPath.Child("operatorsAuthentication", "managedIdentitiesDataPlaneIdentityURL"), u)...)
	}
	return append(allErrs, validateOperatorIdentities(&p.OperatorsAuthentication.UserAssignedIdentities,
		fldPath.Child("operatorsAuthentication", "userAssignedIdentities"))...)
}

func validateOperatorIdentities(ids *hcp.UserAssignedIdentitiesProfile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, m := range []struct {
		name       string
		identities map[string]string
	}{
		{"controlPlaneOperators", ids.ControlPlaneOperators},
		{"dataPlaneOperators", ids.DataPlaneOperators},
	} {
		p := fldPath.Child(m.name)
		for _, operator := range slices.Sorted(maps.Keys(m.identities)) {
			allErrs = append(allErrs, validateOperatorName(p, operator)...)
			allErrs = append(allErrs, validateARMID(p.Key(operator), m.identities[operator], userAssignedIdentityResourceType, "")...)
		}
	}
	if ids.ServiceManagedIdentity != "" {
		allErrs = append(allErrs, validateARMID(fldPath.Child("serviceManagedIdentity"), ids.ServiceManagedIdentity, userAssignedIdentityResourceType, "")...)
	}
	return allErrs
}

// validateOperatorName checks a key of an operator identity map; like label key errors in
// metav1validation.ValidateLabels, the error names the map.
func validateOperatorName(fldPath *field.Path, operator string) field.ErrorList {
	if operator == "" || len(content.IsDNS1123Subdomain(operator)) > 0 {
		return field.ErrorList{field.Invalid(fldPath, operator,
			"operator names must be lowercase letters, digits, '-' and '.', such as cloud-controller-manager")}
	}
	return nil
}

func validateIdentity(id *hcp.ManagedServiceIdentity, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(fldPath.Child("type"), id.Type, identityTypes)
	p := fldPath.Child("userAssignedIdentities")
	// UserAssigned with no identities yet is a cluster whose operators use none, as ARO HCP accepts it.
	if slices.Contains(identityTypes, id.Type) {
		userAssigned := id.Type == identityTypeUserAssigned || id.Type == identityTypeSystemAndUserAssigned
		if !userAssigned && len(id.UserAssignedIdentities) > 0 {
			allErrs = append(allErrs, field.Forbidden(p,
				fmt.Sprintf("may only be set when type is %s or %s", identityTypeUserAssigned, identityTypeSystemAndUserAssigned)))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(id.UserAssignedIdentities)) {
		allErrs = append(allErrs, validateARMID(p.Key(key), key, userAssignedIdentityResourceType, "")...)
	}
	return allErrs
}

func validateClusterAutoscaling(a *hcp.ClusterAutoscalingProfile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if a.MaxNodesTotal != nil {
		allErrs = append(allErrs, validateRange(fldPath.Child("maxNodesTotal"), *a.MaxNodesTotal, 0, maxNodes)...)
	}
	if a.MaxPodGracePeriodSeconds != nil {
		allErrs = append(allErrs, validateMinimum(fldPath.Child("maxPodGracePeriodSeconds"), *a.MaxPodGracePeriodSeconds, 0)...)
	}
	if a.MaxNodeProvisionTimeSeconds != nil {
		allErrs = append(allErrs, validateMinimum(fldPath.Child("maxNodeProvisionTimeSeconds"), *a.MaxNodeProvisionTimeSeconds, 0)...)
	}
	return allErrs
}

func validateEtcdDataEncryption(de *hcp.EtcdDataEncryptionProfile, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(fldPath.Child("keyManagementMode"), de.KeyManagementMode, keyManagementModes)
	cmPath := fldPath.Child("customerManaged")
	cm := de.CustomerManaged
	if cm == nil {
		if de.KeyManagementMode == keyManagementModeCustomerManaged {
			allErrs = append(allErrs, field.Required(cmPath, "must be set when keyManagementMode is "+keyManagementModeCustomerManaged))
		}
		return allErrs
	}
	allErrs = append(allErrs, validateEnum(cmPath.Child("encryptionType"), cm.EncryptionType, encryptionTypes)...)
	kmsPath := cmPath.Child("kms")
	if cm.KMS == nil {
		if cm.EncryptionType == customerManagedEncryptionTypeKMS {
			allErrs = append(allErrs, field.Required(kmsPath, "must be set when encryptionType is "+customerManagedEncryptionTypeKMS))
		}
		return allErrs
	}
	allErrs = append(allErrs, validateRequiredString(kmsPath.Child("vaultName"), cm.KMS.VaultName, kmsNameMaxLength)...)
	allErrs = append(allErrs, validateEnum(kmsPath.Child("visibility"), cm.KMS.Visibility, visibilities)...)
	allErrs = append(allErrs, validateRequiredString(kmsPath.Child("activeKey", "name"), cm.KMS.ActiveKey.Name, kmsNameMaxLength)...)
	allErrs = append(allErrs, validateRequiredString(kmsPath.Child("activeKey", "version"), cm.KMS.ActiveKey.Version, kmsNameMaxLength)...)
	return allErrs
}

func validateImageDigestMirrors(mirrors []hcp.ImageDigestMirror, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(mirrors) > maxImageDigestMirrors {
		allErrs = append(allErrs, field.TooMany(fldPath, len(mirrors), maxImageDigestMirrors))
	}
	for i, m := range mirrors {
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateRequiredString(p.Child("source"), m.Source, imageRepositoryMaxLength)...)
		mirrorsPath := p.Child("mirrors")
		switch n := len(m.Mirrors); {
		case n == 0:
			allErrs = append(allErrs, field.Required(mirrorsPath, fmt.Sprintf("must list 1 to %d mirrors of the source", maxMirrorsPerSource)))
		case n > maxMirrorsPerSource:
			allErrs = append(allErrs, field.TooMany(mirrorsPath, n, maxMirrorsPerSource))
		}
		for j, mirror := range m.Mirrors {
			allErrs = append(allErrs, validateRequiredString(mirrorsPath.Index(j), mirror, imageRepositoryMaxLength)...)
		}
	}
	return allErrs
}

// validateHCPClusterSpecUpdate rejects changes to what ARM marks create-only.
func validateHCPClusterSpecUpdate(newSpec, oldSpec *hcp.HCPClusterSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	platform := fldPath.Child("platform")
	for _, f := range []struct {
		path           *field.Path
		newVal, oldVal any
	}{
		{fldPath.Child("location"), newSpec.Location, oldSpec.Location},
		{fldPath.Child("azure"), newSpec.Azure, oldSpec.Azure},
		{fldPath.Child("dns"), newSpec.DNS, oldSpec.DNS},
		{fldPath.Child("network"), newSpec.Network, oldSpec.Network},
		{fldPath.Child("api", "visibility"), newSpec.API.Visibility, oldSpec.API.Visibility},
		{fldPath.Child("ingress"), newSpec.Ingress, oldSpec.Ingress},
		// Only operatorsAuthentication may change: identities can be rotated.
		{platform.Child("managedResourceGroup"), newSpec.Platform.ManagedResourceGroup, oldSpec.Platform.ManagedResourceGroup},
		{platform.Child("subnetID"), newSpec.Platform.SubnetID, oldSpec.Platform.SubnetID},
		{platform.Child("vnetIntegrationSubnetID"), newSpec.Platform.VnetIntegrationSubnetID, oldSpec.Platform.VnetIntegrationSubnetID},
		{platform.Child("networkSecurityGroupID"), newSpec.Platform.NetworkSecurityGroupID, oldSpec.Platform.NetworkSecurityGroupID},
		{platform.Child("outboundType"), newSpec.Platform.OutboundType, oldSpec.Platform.OutboundType},
		{fldPath.Child("clusterImageRegistry"), newSpec.ClusterImageRegistry, oldSpec.ClusterImageRegistry},
		{fldPath.Child("cryptoRestrictions"), newSpec.CryptoRestrictions, oldSpec.CryptoRestrictions},
	} {
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(f.newVal, f.oldVal, f.path)...)
	}
	if oldURL := oldSpec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL; oldURL != "" {
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(newSpec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL,
			oldURL, platform.Child("operatorsAuthentication", "managedIdentitiesDataPlaneIdentityURL"))...)
	}
	return append(allErrs, validateEtcdDataEncryptionUpdate(newSpec.Etcd.DataEncryption, oldSpec.Etcd.DataEncryption,
		fldPath.Child("etcd", "dataEncryption"))...)
}

// validateEtcdDataEncryptionUpdate allows only a new key version: etcd data stays encrypted with
// the vault and key it was created with.
func validateEtcdDataEncryptionUpdate(newDE, oldDE *hcp.EtcdDataEncryptionProfile, fldPath *field.Path) field.ErrorList {
	if (newDE == nil) != (oldDE == nil) {
		return field.ErrorList{field.Forbidden(fldPath, "may not be added or removed after the cluster is created")}
	}
	if newDE == nil {
		return nil
	}
	allErrs := apivalidation.ValidateImmutableField(newDE.KeyManagementMode, oldDE.KeyManagementMode, fldPath.Child("keyManagementMode"))
	newCM, oldCM := newDE.CustomerManaged, oldDE.CustomerManaged
	if newCM == nil || oldCM == nil {
		return allErrs // a missing customerManaged is reported by ValidateHCPCluster
	}
	cmPath := fldPath.Child("customerManaged")
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newCM.EncryptionType, oldCM.EncryptionType, cmPath.Child("encryptionType"))...)
	if newCM.KMS == nil || oldCM.KMS == nil {
		return allErrs
	}
	kmsPath := cmPath.Child("kms")
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newCM.KMS.VaultName, oldCM.KMS.VaultName, kmsPath.Child("vaultName"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newCM.KMS.Visibility, oldCM.KMS.Visibility, kmsPath.Child("visibility"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newCM.KMS.ActiveKey.Name, oldCM.KMS.ActiveKey.Name, kmsPath.Child("activeKey", "name"))...)
	return allErrs
}

func validateHCPClusterStatus(status *hcp.HCPClusterStatus, fldPath *field.Path) field.ErrorList {
	allErrs := validateOptionalEnum(fldPath.Child("provisioningState"), status.ProvisioningState, provisioningStates)
	allErrs = append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(status.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	if status.ClusterID != "" {
		allErrs = append(allErrs, validateUUID(fldPath.Child("clusterID"), status.ClusterID)...)
	}
	// An A record is written from each address: it must be IPv4, as the load balancers' are.
	for _, a := range []struct {
		path    *field.Path
		address string
	}{{fldPath.Child("api", "address"), status.API.Address}, {fldPath.Child("console", "address"), status.Console.Address}} {
		if a.address != "" && !IsIPv4Address(a.address) {
			allErrs = append(allErrs, field.Invalid(a.path, a.address, "must be an IPv4 address"))
		}
	}
	return allErrs
}

// IsIPv4Address tells an address an A record can hold (192.0.2.7) from anything else, IPv6 and IPv4-mapped
// IPv6 (::ffff:192.0.2.7) included: the status validation and the controller that reads load balancers' status
// both ask it.
func IsIPv4Address(address string) bool {
	ip := net.ParseIP(address)
	return ip != nil && ip.To4() != nil && !strings.Contains(address, ":")
}
