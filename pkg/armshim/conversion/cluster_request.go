package conversion

import (
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

const keyManagementPlatformManaged = "PlatformManaged"

// ClusterFromARM applies a PUT of an hcpOpenShiftClusters resource to existing (nil on create) and
// returns the HCPCluster to create or update. It changes only what req's api-version knows, and
// refuses changes to create-only fields; errors carry ARM field paths (properties.network.podCidr).
// Validation of the values themselves is the API's.
func ClusterFromARM(req Request, existing *hcpv1alpha1.HCPCluster) (*hcpv1alpha1.HCPCluster, field.ErrorList) {
	obj, systemData, errs := parseRequest(req, names.KindCluster)
	if len(errs) > 0 {
		return nil, errs
	}
	var in Cluster
	if errs := decode(req.Body, &in); len(errs) > 0 {
		return nil, errs
	}
	clusterRequestToNewest(req.APIVersion, &in)

	out := &hcpv1alpha1.HCPCluster{ObjectMeta: newObjectMeta(obj)}
	var existingIdentity *hcpv1alpha1.ManagedServiceIdentity
	if existing != nil {
		out = existing.DeepCopy()
		ensureAnnotations(&out.ObjectMeta)
		existingIdentity = existing.Spec.Identity
	} else {
		out.Spec.Azure = hcpv1alpha1.AzureResourceReference{SubscriptionID: obj.ID.SubscriptionID, ResourceGroup: obj.ID.ResourceGroupName}
	}

	a := &applier{update: existing != nil}
	applyLocation(a, in.Location, &out.Spec.Location)
	applyTags(a, out.Annotations, in.Tags)
	mergeSystemData(out.Annotations, systemData)
	identity, idErrs := identityFromARM(pathIdentity, in.Identity, existingIdentity)
	a.errs = append(a.errs, idErrs...)
	out.Spec.Identity = identity

	if in.Properties == nil {
		a.errs = append(a.errs, field.Required(pathProperties, "a cluster needs properties, with at least version and platform"))
		return nil, a.result()
	}
	identityURL := out.Spec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL
	applyClusterProperties(a, req.APIVersion, in.Properties, &out.Spec)
	// ARM sends the identities' data plane URL on create; the cluster keeps it, as the frontend keeps it.
	if !a.update {
		identityURL = req.IdentityURL
	}
	out.Spec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL = identityURL
	if !a.update && out.Spec.Platform.ManagedResourceGroup == "" {
		out.Spec.Platform.ManagedResourceGroup = defaultManagedResourceGroup(obj.ID.Name)
	}
	if len(a.errs) > 0 {
		return nil, a.result()
	}
	return out, nil
}

func applyClusterProperties(a *applier, v APIVersion, in *ClusterProperties, spec *hcpv1alpha1.HCPClusterSpec) {
	path := pathProperties
	// Read-only and ignored: provisioningState, console, api.url, dns.baseDomain, platform.issuerUrl, status.

	if in.Version != nil {
		vp := path.Child("version")
		if v.versionIDUpdatable() {
			if in.Version.ID != nil {
				spec.Version.ID = *in.Version.ID
			}
		} else {
			createOnly(a, vp.Child("id"), in.Version.ID, &spec.Version.ID)
		}
		// The API defaults a channel group left out.
		spec.Version.ChannelGroup = deref(in.Version.ChannelGroup)
	}

	if in.DNS != nil {
		createOnly(a, path.Child("dns", "baseDomainPrefix"), in.DNS.BaseDomainPrefix, &spec.DNS.BaseDomainPrefix)
	}

	if n := in.Network; n != nil {
		np := path.Child("network")
		createOnly(a, np.Child("networkType"), n.NetworkType, &spec.Network.NetworkType)
		createOnly(a, np.Child("podCidr"), n.PodCIDR, &spec.Network.PodCIDR)
		createOnly(a, np.Child("serviceCidr"), n.ServiceCIDR, &spec.Network.ServiceCIDR)
		createOnly(a, np.Child("machineCidr"), n.MachineCIDR, &spec.Network.MachineCIDR)
		createOnly(a, np.Child("hostPrefix"), n.HostPrefix, &spec.Network.HostPrefix)
	}

	if in.API != nil {
		createOnly(a, path.Child("api", "visibility"), in.API.Visibility, &spec.API.Visibility)
		spec.API.AuthorizedCIDRs = in.API.AuthorizedCIDRs
	} else {
		spec.API.AuthorizedCIDRs = nil
	}

	if in.Ingress != nil {
		createOnly(a, path.Child("ingress", "type"), in.Ingress.Type, &spec.Ingress.Type)
	}

	if p := in.Platform; p != nil {
		pp := path.Child("platform")
		createOnlyFold(a, pp.Child("managedResourceGroup"), p.ManagedResourceGroup, &spec.Platform.ManagedResourceGroup)
		createOnlyFold(a, pp.Child("subnetId"), p.SubnetID, &spec.Platform.SubnetID)
		createOnlyFold(a, pp.Child("vnetIntegrationSubnetId"), p.VnetIntegrationSubnetID, &spec.Platform.VnetIntegrationSubnetID)
		createOnly(a, pp.Child("outboundType"), p.OutboundType, &spec.Platform.OutboundType)
		createOnlyFold(a, pp.Child("networkSecurityGroupId"), p.NetworkSecurityGroupID, &spec.Platform.NetworkSecurityGroupID)
		if oa := p.OperatorsAuthentication; oa != nil {
			spec.Platform.OperatorsAuthentication = operatorsAuthenticationFromARM(oa)
		}
	}

	// autoscaling has no create-only part: a PUT replaces it, and ARM's defaults fill what it leaves out.
	spec.Autoscaling = hcpv1alpha1.ClusterAutoscalingProfile{}
	if as := in.Autoscaling; as != nil {
		spec.Autoscaling = hcpv1alpha1.ClusterAutoscalingProfile{
			MaxNodesTotal:               as.MaxNodesTotal,
			MaxPodGracePeriodSeconds:    as.MaxPodGracePeriodSeconds,
			MaxNodeProvisionTimeSeconds: as.MaxNodeProvisionTimeSeconds,
			PodPriorityThreshold:        as.PodPriorityThreshold,
		}
	}
	defaultAutoscaling(&spec.Autoscaling)

	if in.Etcd != nil && in.Etcd.DataEncryption != nil {
		applyEtcd(a, v, path.Child("etcd", "dataEncryption"), in.Etcd.DataEncryption, &spec.Etcd)
	}

	if v.hasImageDigestMirrors() {
		spec.ImageDigestMirrors = nil
		for _, m := range in.ImageDigestMirrors {
			spec.ImageDigestMirrors = append(spec.ImageDigestMirrors, hcpv1alpha1.ImageDigestMirror{Source: m.Source, Mirrors: m.Mirrors})
		}
	}

	spec.NodeDrainTimeoutMinutes = in.NodeDrainTimeoutMinutes

	if in.ClusterImageRegistry != nil {
		createOnly(a, path.Child("clusterImageRegistry", "state"), in.ClusterImageRegistry.State, &spec.ClusterImageRegistry.State)
	}
	createOnly(a, path.Child("cryptoRestrictions"), in.CryptoRestrictions, &spec.CryptoRestrictions)
}

func operatorsAuthenticationFromARM(in *OperatorsAuthenticationProfile) hcpv1alpha1.OperatorsAuthenticationProfile {
	if in.UserAssignedIdentities == nil {
		return hcpv1alpha1.OperatorsAuthenticationProfile{}
	}
	uai := in.UserAssignedIdentities
	return hcpv1alpha1.OperatorsAuthenticationProfile{UserAssignedIdentities: hcpv1alpha1.UserAssignedIdentitiesProfile{
		ControlPlaneOperators:  maps.Clone(uai.ControlPlaneOperators),
		DataPlaneOperators:     maps.Clone(uai.DataPlaneOperators),
		ServiceManagedIdentity: deref(uai.ServiceManagedIdentity),
	}}
}

// applyEtcd applies etcd.dataEncryption. Everything in it is create-only but the key's version,
// which 2026-06-30-preview made updatable. PlatformManaged (before 2026-06-30-preview) is the absence
// of a customer managed key.
func applyEtcd(a *applier, v APIVersion, path *field.Path, in *EtcdDataEncryptionProfile, etcd *hcpv1alpha1.EtcdProfile) {
	mode := deref(in.KeyManagementMode)
	if mode == keyManagementPlatformManaged && v.hasPlatformManagedEtcd() {
		if a.update && etcd.DataEncryption != nil {
			a.errs = append(a.errs, field.Invalid(path.Child("keyManagementMode"), mode,
				"cannot be changed once the resource exists (it is "+etcd.DataEncryption.KeyManagementMode+")"))
		}
		return
	}
	if a.update && etcd.DataEncryption == nil {
		a.errs = append(a.errs, field.Invalid(path.Child("keyManagementMode"), mode,
			"cannot be changed once the resource exists (the cluster's etcd has no customer managed key)"))
		return
	}
	if etcd.DataEncryption == nil {
		etcd.DataEncryption = &hcpv1alpha1.EtcdDataEncryptionProfile{}
	}
	de := etcd.DataEncryption
	createOnly(a, path.Child("keyManagementMode"), in.KeyManagementMode, &de.KeyManagementMode)
	cm := in.CustomerManaged
	if cm == nil {
		return
	}
	cmPath := path.Child("customerManaged")
	if de.CustomerManaged == nil {
		de.CustomerManaged = &hcpv1alpha1.CustomerManagedEncryptionProfile{}
	}
	createOnly(a, cmPath.Child("encryptionType"), cm.EncryptionType, &de.CustomerManaged.EncryptionType)
	if cm.KMS == nil {
		return
	}
	kmsPath := cmPath.Child("kms")
	if de.CustomerManaged.KMS == nil {
		de.CustomerManaged.KMS = &hcpv1alpha1.KMSEncryptionProfile{}
	}
	kms := de.CustomerManaged.KMS
	vaultPath := kmsPath.Child("vaultName")
	if v.vaultNameInKeyProfile() {
		vaultPath = kmsPath.Child("activeKey", "vaultName")
	}
	createOnly(a, vaultPath, cm.KMS.VaultName, &kms.VaultName)
	createOnly(a, kmsPath.Child("visibility"), cm.KMS.Visibility, &kms.Visibility)
	if v.vaultNameInKeyProfile() && !a.update && kms.Visibility == "" {
		// 2024-06-10-preview has no visibility: its vaults are reached over the internet.
		kms.Visibility = "Public"
	}
	if key := cm.KMS.ActiveKey; key != nil {
		keyPath := kmsPath.Child("activeKey")
		createOnly(a, keyPath.Child("name"), key.Name, &kms.ActiveKey.Name)
		if v.kmsKeyVersionUpdatable() {
			if key.Version != nil {
				kms.ActiveKey.Version = *key.Version
			}
		} else {
			createOnly(a, keyPath.Child("version"), key.Version, &kms.ActiveKey.Version)
		}
	}
}
