package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=RevokeCredentials,verb=create,subresource=revokecredentials,input=CredentialRevocation,result=CredentialRevocation
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HCPCluster is one hosted OpenShift cluster: a HyperShift hosted control plane
// on a management cluster plus its worker node pools (ARM hcpOpenShiftClusters).
type HCPCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// spec is the cluster the user asks for.
	Spec HCPClusterSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// status is what the service has made of it so far.
	// +optional
	Status HCPClusterStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// HCPClusterSpec mirrors the ARM properties of api-version 2026-09-01-preview.
type HCPClusterSpec struct {
	// location is the Azure region of the cluster, for example "eastus". Immutable.
	Location string `json:"location" protobuf:"bytes,1,opt,name=location"`
	// azure names the ARM resource this cluster is. Immutable.
	Azure AzureResourceReference `json:"azure" protobuf:"bytes,2,opt,name=azure"`
	// version is the OpenShift version and channel group of the control plane.
	Version VersionProfile `json:"version" protobuf:"bytes,3,opt,name=version"`
	// dns configures the cluster's DNS names. Immutable.
	// +optional
	DNS DNSProfile `json:"dns,omitempty,omitzero" protobuf:"bytes,4,opt,name=dns"`
	// network configures the cluster network. Immutable.
	// +optional
	Network NetworkProfile `json:"network,omitempty,omitzero" protobuf:"bytes,5,opt,name=network"`
	// api configures the cluster's API server endpoint.
	// +optional
	API APIProfile `json:"api,omitempty,omitzero" protobuf:"bytes,6,opt,name=api"`
	// ingress configures the default ingress controller. Immutable.
	// +optional
	Ingress IngressProfile `json:"ingress,omitempty,omitzero" protobuf:"bytes,7,opt,name=ingress"`
	// platform holds the Azure specific configuration. Only operatorsAuthentication may change.
	Platform PlatformProfile `json:"platform" protobuf:"bytes,8,opt,name=platform"`
	// identity is the managed service identity of the cluster resource.
	// +optional
	Identity *ManagedServiceIdentity `json:"identity,omitempty" protobuf:"bytes,9,opt,name=identity"`
	// autoscaling configures the cluster autoscaler.
	// +optional
	Autoscaling ClusterAutoscalingProfile `json:"autoscaling,omitempty,omitzero" protobuf:"bytes,10,opt,name=autoscaling"`
	// etcd configures the control plane's etcd.
	// +optional
	Etcd EtcdProfile `json:"etcd,omitempty,omitzero" protobuf:"bytes,11,opt,name=etcd"`
	// imageDigestMirrors are the image mirrors of the cluster (at most 240).
	// +optional
	// +listType=atomic
	ImageDigestMirrors []ImageDigestMirror `json:"imageDigestMirrors,omitempty" protobuf:"bytes,12,rep,name=imageDigestMirrors"`
	// nodeDrainTimeoutMinutes is how long node drains may take before they are forced, 0 to 10080.
	// +optional
	NodeDrainTimeoutMinutes *int32 `json:"nodeDrainTimeoutMinutes,omitempty" protobuf:"varint,13,opt,name=nodeDrainTimeoutMinutes"`
	// clusterImageRegistry configures the in-cluster image registry. Immutable.
	// +optional
	ClusterImageRegistry ClusterImageRegistryProfile `json:"clusterImageRegistry,omitempty,omitzero" protobuf:"bytes,14,opt,name=clusterImageRegistry"`
	// cryptoRestrictions is None or FIPS. Immutable.
	// +optional
	CryptoRestrictions string `json:"cryptoRestrictions,omitempty" protobuf:"bytes,15,opt,name=cryptoRestrictions"`
}

// AzureResourceReference says where the ARM resource lives.
type AzureResourceReference struct {
	// subscriptionID is the Azure subscription (a UUID).
	SubscriptionID string `json:"subscriptionID" protobuf:"bytes,1,opt,name=subscriptionID"`
	// resourceGroup is the resource group of the cluster resource.
	ResourceGroup string `json:"resourceGroup" protobuf:"bytes,2,opt,name=resourceGroup"`
	// tenantID is the Entra tenant of the subscription (a UUID).
	// +optional
	TenantID string `json:"tenantID,omitempty" protobuf:"bytes,3,opt,name=tenantID"`
}

// VersionProfile selects an OpenShift version.
type VersionProfile struct {
	// id is MAJOR.MINOR for a cluster (the service picks the patch) and MAJOR.MINOR.PATCH for a node pool.
	ID string `json:"id" protobuf:"bytes,1,opt,name=id"`
	// channelGroup is stable (the default), fast, candidate or nightly.
	// +optional
	ChannelGroup string `json:"channelGroup,omitempty" protobuf:"bytes,2,opt,name=channelGroup"`
	// upgradePolicy, of a cluster only, is Automatic (when empty: the service moves the cluster to newer
	// patches of its minor along the update service's edges that carry no known risk) or Manual (only a
	// change of id moves it). Minor upgrades are always the user's.
	// +optional
	UpgradePolicy UpgradePolicy `json:"upgradePolicy,omitempty" protobuf:"bytes,3,opt,name=upgradePolicy,casttype=UpgradePolicy"`
}

// UpgradePolicy says whether the service upgrades a cluster to new patches on its own.
type UpgradePolicy string

const (
	// UpgradePolicyAutomatic lets the service move the cluster along the update graph within its minor.
	UpgradePolicyAutomatic UpgradePolicy = "Automatic"
	// UpgradePolicyManual keeps the cluster on its patch until its spec changes.
	UpgradePolicyManual UpgradePolicy = "Manual"
)

// DNSProfile configures the cluster's DNS.
type DNSProfile struct {
	// baseDomainPrefix is the first label of the cluster's base domain: at most 15 lowercase
	// alphanumerics and '-', starting with a letter.
	// +optional
	BaseDomainPrefix string `json:"baseDomainPrefix,omitempty" protobuf:"bytes,1,opt,name=baseDomainPrefix"`
}

// NetworkProfile configures the cluster network.
type NetworkProfile struct {
	// networkType is OVNKubernetes (the default) or Other.
	// +optional
	NetworkType string `json:"networkType,omitempty" protobuf:"bytes,1,opt,name=networkType"`
	// podCIDR is the IPv4 range pods get addresses from (default 10.128.0.0/14).
	// +optional
	PodCIDR string `json:"podCIDR,omitempty" protobuf:"bytes,2,opt,name=podCIDR"`
	// serviceCIDR is the IPv4 range of service IPs (default 172.30.0.0/16).
	// +optional
	ServiceCIDR string `json:"serviceCIDR,omitempty" protobuf:"bytes,3,opt,name=serviceCIDR"`
	// machineCIDR is the IPv4 range of the nodes (default 10.0.0.0/16).
	// +optional
	MachineCIDR string `json:"machineCIDR,omitempty" protobuf:"bytes,4,opt,name=machineCIDR"`
	// hostPrefix is the prefix length of each node's pod range, 23 to 26 (default 23).
	// +optional
	HostPrefix int32 `json:"hostPrefix,omitempty" protobuf:"varint,5,opt,name=hostPrefix"`
}

// APIProfile configures the cluster's API server endpoint.
type APIProfile struct {
	// visibility is Public (the default) or Private. Immutable.
	// +optional
	Visibility string `json:"visibility,omitempty" protobuf:"bytes,1,opt,name=visibility"`
	// authorizedCIDRs are the IPv4 addresses or CIDR blocks allowed to reach the API server (1 to 500 when set).
	// +optional
	// +listType=atomic
	AuthorizedCIDRs []string `json:"authorizedCIDRs,omitempty" protobuf:"bytes,2,rep,name=authorizedCIDRs"`
}

// IngressProfile configures the default ingress controller.
type IngressProfile struct {
	// type is Public (the default), Private or Disabled.
	// +optional
	Type string `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
}

// PlatformProfile is the Azure specific configuration of a cluster.
type PlatformProfile struct {
	// managedResourceGroup is the resource group the service creates the cluster's resources in;
	// generated as "aro-hcp-<cluster>-<uuid>" when empty. It must differ from the cluster's own resource group.
	// +optional
	ManagedResourceGroup string `json:"managedResourceGroup,omitempty" protobuf:"bytes,1,opt,name=managedResourceGroup"`
	// subnetID is the ARM ID of the worker subnet (Microsoft.Network/virtualNetworks/subnets).
	SubnetID string `json:"subnetID" protobuf:"bytes,2,opt,name=subnetID"`
	// vnetIntegrationSubnetID is the ARM ID of the subnet dedicated to control plane to node traffic.
	// +optional
	VnetIntegrationSubnetID string `json:"vnetIntegrationSubnetID,omitempty" protobuf:"bytes,3,opt,name=vnetIntegrationSubnetID"`
	// networkSecurityGroupID is the ARM ID of the network security group (Microsoft.Network/networkSecurityGroups).
	NetworkSecurityGroupID string `json:"networkSecurityGroupID" protobuf:"bytes,4,opt,name=networkSecurityGroupID"`
	// outboundType is LoadBalancer (the default and only value).
	// +optional
	OutboundType string `json:"outboundType,omitempty" protobuf:"bytes,5,opt,name=outboundType"`
	// operatorsAuthentication holds the managed identities the cluster's operators use.
	// +optional
	OperatorsAuthentication OperatorsAuthenticationProfile `json:"operatorsAuthentication,omitempty,omitzero" protobuf:"bytes,6,opt,name=operatorsAuthentication"`
}

// OperatorsAuthenticationProfile holds how the cluster's operators authenticate to Azure.
type OperatorsAuthenticationProfile struct {
	// userAssignedIdentities are the user-assigned managed identities of the operators.
	// +optional
	UserAssignedIdentities UserAssignedIdentitiesProfile `json:"userAssignedIdentities,omitempty,omitzero" protobuf:"bytes,1,opt,name=userAssignedIdentities"`
	// managedIdentitiesDataPlaneIdentityURL is the data plane URL of the cluster's managed identities
	// (ARM's X-Ms-Identity-Url on create), where the service gets the identities' credentials. It cannot
	// change once set.
	// +optional
	ManagedIdentitiesDataPlaneIdentityURL string `json:"managedIdentitiesDataPlaneIdentityURL,omitempty" protobuf:"bytes,2,opt,name=managedIdentitiesDataPlaneIdentityURL"`
}

// UserAssignedIdentitiesProfile maps operators to user-assigned managed identity ARM IDs.
type UserAssignedIdentitiesProfile struct {
	// controlPlaneOperators maps a control plane operator name to its identity's ARM ID.
	// +optional
	ControlPlaneOperators map[string]string `json:"controlPlaneOperators,omitempty" protobuf:"bytes,1,rep,name=controlPlaneOperators"`
	// dataPlaneOperators maps a data plane operator name to its identity's ARM ID.
	// +optional
	DataPlaneOperators map[string]string `json:"dataPlaneOperators,omitempty" protobuf:"bytes,2,rep,name=dataPlaneOperators"`
	// serviceManagedIdentity is the ARM ID of the identity the service itself uses.
	// +optional
	ServiceManagedIdentity string `json:"serviceManagedIdentity,omitempty" protobuf:"bytes,3,opt,name=serviceManagedIdentity"`
}

// ManagedServiceIdentity is the ARM managed identity of a resource.
type ManagedServiceIdentity struct {
	// type is None, SystemAssigned, UserAssigned or "SystemAssigned,UserAssigned".
	Type string `json:"type" protobuf:"bytes,1,opt,name=type"`
	// userAssignedIdentities are the ARM IDs of the user-assigned identities of the resource.
	// +optional
	UserAssignedIdentities map[string]UserAssignedIdentity `json:"userAssignedIdentities,omitempty" protobuf:"bytes,2,rep,name=userAssignedIdentities"`
}

// UserAssignedIdentity is what Azure reports of one user-assigned identity.
type UserAssignedIdentity struct {
	// principalID is the identity's principal (object) ID.
	// +optional
	PrincipalID string `json:"principalID,omitempty" protobuf:"bytes,1,opt,name=principalID"`
	// clientID is the identity's client (application) ID.
	// +optional
	ClientID string `json:"clientID,omitempty" protobuf:"bytes,2,opt,name=clientID"`
}

// ClusterAutoscalingProfile configures the cluster autoscaler.
type ClusterAutoscalingProfile struct {
	// maxNodesTotal is the most nodes the autoscaler may run across all node pools, 0 to 500.
	// +optional
	MaxNodesTotal *int32 `json:"maxNodesTotal,omitempty" protobuf:"varint,1,opt,name=maxNodesTotal"`
	// maxPodGracePeriodSeconds is the graceful termination time given to pods on scale down.
	// +optional
	MaxPodGracePeriodSeconds *int32 `json:"maxPodGracePeriodSeconds,omitempty" protobuf:"varint,2,opt,name=maxPodGracePeriodSeconds"`
	// maxNodeProvisionTimeSeconds is how long the autoscaler waits for a node to be provisioned.
	// +optional
	MaxNodeProvisionTimeSeconds *int32 `json:"maxNodeProvisionTimeSeconds,omitempty" protobuf:"varint,3,opt,name=maxNodeProvisionTimeSeconds"`
	// podPriorityThreshold: pods below this priority do not cause scale up and do not block scale down.
	// +optional
	PodPriorityThreshold *int32 `json:"podPriorityThreshold,omitempty" protobuf:"varint,4,opt,name=podPriorityThreshold"`
}

// EtcdProfile configures the control plane's etcd.
type EtcdProfile struct {
	// dataEncryption configures encryption of etcd data with a customer managed key.
	// +optional
	DataEncryption *EtcdDataEncryptionProfile `json:"dataEncryption,omitempty" protobuf:"bytes,1,opt,name=dataEncryption"`
}

// EtcdDataEncryptionProfile configures encryption of etcd data.
type EtcdDataEncryptionProfile struct {
	// keyManagementMode is CustomerManaged. Immutable.
	KeyManagementMode string `json:"keyManagementMode" protobuf:"bytes,1,opt,name=keyManagementMode"`
	// customerManaged configures the customer managed key; required for CustomerManaged.
	// +optional
	CustomerManaged *CustomerManagedEncryptionProfile `json:"customerManaged,omitempty" protobuf:"bytes,2,opt,name=customerManaged"`
}

// CustomerManagedEncryptionProfile configures a customer managed encryption key.
type CustomerManagedEncryptionProfile struct {
	// encryptionType is KMS (the default and only value). Immutable.
	// +optional
	EncryptionType string `json:"encryptionType,omitempty" protobuf:"bytes,1,opt,name=encryptionType"`
	// kms names the Key Vault key.
	// +optional
	KMS *KMSEncryptionProfile `json:"kms,omitempty" protobuf:"bytes,2,opt,name=kms"`
}

// KMSEncryptionProfile names a key in an Azure Key Vault.
type KMSEncryptionProfile struct {
	// vaultName is the Key Vault's name (1 to 255 characters). Immutable.
	VaultName string `json:"vaultName" protobuf:"bytes,1,opt,name=vaultName"`
	// visibility is Public or Private: whether the vault is reachable from the internet. Immutable.
	Visibility string `json:"visibility" protobuf:"bytes,2,opt,name=visibility"`
	// activeKey is the key in use; only its version may change.
	ActiveKey KMSKey `json:"activeKey" protobuf:"bytes,3,opt,name=activeKey"`
}

// KMSKey names one version of a Key Vault key.
type KMSKey struct {
	// name is the key's name (1 to 255 characters). Immutable.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// version is the key's version (1 to 255 characters).
	Version string `json:"version" protobuf:"bytes,2,opt,name=version"`
}

// ImageDigestMirror lists the mirrors of one image repository.
type ImageDigestMirror struct {
	// source is the repository that is mirrored (at most 255 characters).
	Source string `json:"source" protobuf:"bytes,1,opt,name=source"`
	// mirrors are the repositories that serve the same content, 1 to 255 of them.
	// +listType=atomic
	Mirrors []string `json:"mirrors" protobuf:"bytes,2,rep,name=mirrors"`
}

// ClusterImageRegistryProfile configures the in-cluster image registry.
type ClusterImageRegistryProfile struct {
	// state is Enabled (the default) or Disabled.
	// +optional
	State string `json:"state,omitempty" protobuf:"bytes,1,opt,name=state"`
}

// HCPClusterStatus is what the service reports of a cluster.
type HCPClusterStatus struct {
	// provisioningState is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled.
	// +optional
	ProvisioningState ProvisioningState `json:"provisioningState,omitempty" protobuf:"bytes,1,opt,name=provisioningState,casttype=ProvisioningState"`
	// conditions are Placed, VersionResolved, Delivered, Available, Progressing and Degraded, and the Azure
	// side's AzureIdentitiesValid, ManagedResourceGroupReady and DNSReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	// clusterID is the UUID the service assigned to the cluster; it names the management cluster namespace.
	// +optional
	ClusterID string `json:"clusterID,omitempty" protobuf:"bytes,4,opt,name=clusterID"`
	// version reports the resolved and running versions.
	// +optional
	Version ClusterVersionStatus `json:"version,omitempty,omitzero" protobuf:"bytes,5,opt,name=version"`
	// managementCluster is the name of the ManagementCluster the control plane runs on.
	// +optional
	ManagementCluster string `json:"managementCluster,omitempty" protobuf:"bytes,6,opt,name=managementCluster"`
	// api reports the API server endpoint.
	// +optional
	API EndpointStatus `json:"api,omitempty,omitzero" protobuf:"bytes,7,opt,name=api"`
	// console reports the web console endpoint.
	// +optional
	Console EndpointStatus `json:"console,omitempty,omitzero" protobuf:"bytes,8,opt,name=console"`
	// issuerURL is the OIDC issuer of the cluster's service account tokens.
	// +optional
	IssuerURL string `json:"issuerURL,omitempty" protobuf:"bytes,9,opt,name=issuerURL"`
}

// ClusterVersionStatus reports versions of a control plane.
type ClusterVersionStatus struct {
	// desired is the full version the service resolved spec.version.id to, for example 4.20.8.
	// +optional
	Desired string `json:"desired,omitempty" protobuf:"bytes,1,opt,name=desired"`
	// actual is the version the control plane runs.
	// +optional
	Actual string `json:"actual,omitempty" protobuf:"bytes,2,opt,name=actual"`
	// history lists the versions the control plane moved through, newest first.
	// +optional
	// +listType=atomic
	History []VersionHistoryEntry `json:"history,omitempty" protobuf:"bytes,3,rep,name=history"`
}

// VersionHistoryEntry is one version a control plane moved to.
type VersionHistoryEntry struct {
	// version is the full version.
	Version string `json:"version" protobuf:"bytes,1,opt,name=version"`
	// state is Partial while the update runs and Completed once done.
	State string `json:"state" protobuf:"bytes,2,opt,name=state"`
	// startedTime is when the update to this version started.
	// +optional
	StartedTime *metav1.Time `json:"startedTime,omitempty" protobuf:"bytes,3,opt,name=startedTime"`
	// completionTime is when the update to this version completed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty" protobuf:"bytes,4,opt,name=completionTime"`
}

// EndpointStatus reports one URL of a cluster.
type EndpointStatus struct {
	// url is where the endpoint is reached.
	// +optional
	URL string `json:"url,omitempty" protobuf:"bytes,1,opt,name=url"`
	// address is the IP address the management cluster reports the endpoint is served at; a service
	// that provisions Azure points the DNS record of the endpoint's name at it.
	// +optional
	Address string `json:"address,omitempty" protobuf:"bytes,2,opt,name=address"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HCPClusterList is a list of HCPClusters.
type HCPClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []HCPCluster `json:"items" protobuf:"bytes,2,rep,name=items"`
}
