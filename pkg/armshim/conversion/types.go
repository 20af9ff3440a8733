package conversion

// The ARM JSON of 2026-09-01-preview, plus the one field an older version has in another place
// (KMSKey.VaultName). Pointers tell a field left out of a request from one set to its zero value.

// Cluster is an hcpOpenShiftClusters resource.
type Cluster struct {
	ID         *string                 `json:"id,omitempty"`
	Name       *string                 `json:"name,omitempty"`
	Type       *string                 `json:"type,omitempty"`
	Location   *string                 `json:"location,omitempty"`
	Tags       map[string]string       `json:"tags,omitempty"`
	SystemData *SystemData             `json:"systemData,omitempty"`
	Identity   *ManagedServiceIdentity `json:"identity,omitempty"`
	Properties *ClusterProperties      `json:"properties,omitempty"`
}

// ClusterProperties are the properties of a cluster.
type ClusterProperties struct {
	ProvisioningState       *string                      `json:"provisioningState,omitempty"`
	Version                 *VersionProfile              `json:"version,omitempty"`
	DNS                     *DNSProfile                  `json:"dns,omitempty"`
	Network                 *NetworkProfile              `json:"network,omitempty"`
	Console                 *ConsoleProfile              `json:"console,omitempty"`
	API                     *APIProfile                  `json:"api,omitempty"`
	Ingress                 *IngressProfile              `json:"ingress,omitempty"`
	Platform                *PlatformProfile             `json:"platform,omitempty"`
	Autoscaling             *ClusterAutoscalingProfile   `json:"autoscaling,omitempty"`
	Etcd                    *EtcdProfile                 `json:"etcd,omitempty"`
	ImageDigestMirrors      []ImageDigestMirror          `json:"imageDigestMirrors,omitempty"`
	NodeDrainTimeoutMinutes *int32                       `json:"nodeDrainTimeoutMinutes,omitempty"`
	ClusterImageRegistry    *ClusterImageRegistryProfile `json:"clusterImageRegistry,omitempty"`
	Status                  *ResourceStatus              `json:"status,omitempty"`
	CryptoRestrictions      *string                      `json:"cryptoRestrictions,omitempty"`
}

type VersionProfile struct {
	ID           *string `json:"id,omitempty"`
	ChannelGroup *string `json:"channelGroup,omitempty"`
}

type DNSProfile struct {
	BaseDomain       *string `json:"baseDomain,omitempty"`
	BaseDomainPrefix *string `json:"baseDomainPrefix,omitempty"`
}

type NetworkProfile struct {
	NetworkType *string `json:"networkType,omitempty"`
	PodCIDR     *string `json:"podCidr,omitempty"`
	ServiceCIDR *string `json:"serviceCidr,omitempty"`
	MachineCIDR *string `json:"machineCidr,omitempty"`
	HostPrefix  *int32  `json:"hostPrefix,omitempty"`
}

type ConsoleProfile struct {
	URL *string `json:"url,omitempty"`
}

type APIProfile struct {
	URL             *string  `json:"url,omitempty"`
	Visibility      *string  `json:"visibility,omitempty"`
	AuthorizedCIDRs []string `json:"authorizedCidrs,omitempty"`
}

type IngressProfile struct {
	Type *string `json:"type,omitempty"`
}

type PlatformProfile struct {
	ManagedResourceGroup    *string                         `json:"managedResourceGroup,omitempty"`
	SubnetID                *string                         `json:"subnetId,omitempty"`
	VnetIntegrationSubnetID *string                         `json:"vnetIntegrationSubnetId,omitempty"`
	OutboundType            *string                         `json:"outboundType,omitempty"`
	NetworkSecurityGroupID  *string                         `json:"networkSecurityGroupId,omitempty"`
	OperatorsAuthentication *OperatorsAuthenticationProfile `json:"operatorsAuthentication,omitempty"`
	IssuerURL               *string                         `json:"issuerUrl,omitempty"`
}

type OperatorsAuthenticationProfile struct {
	UserAssignedIdentities *UserAssignedIdentitiesProfile `json:"userAssignedIdentities,omitempty"`
}

// UserAssignedIdentitiesProfile's maps are required, so a response shows them even when empty.
type UserAssignedIdentitiesProfile struct {
	ControlPlaneOperators  map[string]string `json:"controlPlaneOperators"`
	DataPlaneOperators     map[string]string `json:"dataPlaneOperators"`
	ServiceManagedIdentity *string           `json:"serviceManagedIdentity,omitempty"`
}

type ClusterAutoscalingProfile struct {
	MaxNodesTotal               *int32 `json:"maxNodesTotal,omitempty"`
	MaxPodGracePeriodSeconds    *int32 `json:"maxPodGracePeriodSeconds,omitempty"`
	MaxNodeProvisionTimeSeconds *int32 `json:"maxNodeProvisionTimeSeconds,omitempty"`
	PodPriorityThreshold        *int32 `json:"podPriorityThreshold,omitempty"`
}

type EtcdProfile struct {
	DataEncryption *EtcdDataEncryptionProfile `json:"dataEncryption,omitempty"`
}

type EtcdDataEncryptionProfile struct {
	KeyManagementMode *string                           `json:"keyManagementMode,omitempty"`
	CustomerManaged   *CustomerManagedEncryptionProfile `json:"customerManaged,omitempty"`
}

type CustomerManagedEncryptionProfile struct {
	EncryptionType *string               `json:"encryptionType,omitempty"`
	KMS            *KMSEncryptionProfile `json:"kms,omitempty"`
}

type KMSEncryptionProfile struct {
	VaultName  *string `json:"vaultName,omitempty"`
	Visibility *string `json:"visibility,omitempty"`
	ActiveKey  *KMSKey `json:"activeKey,omitempty"`
}

type KMSKey struct {
	Name    *string `json:"name,omitempty"`
	Version *string `json:"version,omitempty"`
	// VaultName is where 2024-06-10-preview keeps the vault's name; later versions have kms.vaultName.
	VaultName *string `json:"vaultName,omitempty"`
}

type ImageDigestMirror struct {
	Source  string   `json:"source"`
	Mirrors []string `json:"mirrors"`
}

type ClusterImageRegistryProfile struct {
	State *string `json:"state,omitempty"`
}

type ResourceStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime string `json:"lastTransitionTime"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
}

// NodePool is a nodePools resource of a cluster.
type NodePool struct {
	ID         *string                 `json:"id,omitempty"`
	Name       *string                 `json:"name,omitempty"`
	Type       *string                 `json:"type,omitempty"`
	Location   *string                 `json:"location,omitempty"`
	Tags       map[string]string       `json:"tags,omitempty"`
	SystemData *SystemData             `json:"systemData,omitempty"`
	Identity   *ManagedServiceIdentity `json:"identity,omitempty"`
	Properties *NodePoolProperties     `json:"properties,omitempty"`
}

// NodePoolProperties are the properties of a node pool.
type NodePoolProperties struct {
	ProvisioningState       *string                  `json:"provisioningState,omitempty"`
	Version                 *VersionProfile          `json:"version,omitempty"`
	Platform                *NodePoolPlatformProfile `json:"platform,omitempty"`
	Replicas                *int32                   `json:"replicas,omitempty"`
	AutoRepair              *bool                    `json:"autoRepair,omitempty"`
	AutoScaling             *NodePoolAutoScaling     `json:"autoScaling,omitempty"`
	Labels                  []Label                  `json:"labels,omitempty"`
	Taints                  []Taint                  `json:"taints,omitempty"`
	NodeDrainTimeoutMinutes *int32                   `json:"nodeDrainTimeoutMinutes,omitempty"`
	Status                  *ResourceStatus          `json:"status,omitempty"`
}

type NodePoolPlatformProfile struct {
	SubnetID               *string        `json:"subnetId,omitempty"`
	VMSize                 *string        `json:"vmSize,omitempty"`
	EnableEncryptionAtHost *bool          `json:"enableEncryptionAtHost,omitempty"`
	OSDisk                 *OSDiskProfile `json:"osDisk,omitempty"`
	AvailabilityZone       *string        `json:"availabilityZone,omitempty"`
}

type OSDiskProfile struct {
	SizeGiB                *int32  `json:"sizeGiB,omitempty"`
	DiskStorageAccountType *string `json:"diskStorageAccountType,omitempty"`
	EncryptionSetID        *string `json:"encryptionSetId,omitempty"`
	DiskType               *string `json:"diskType,omitempty"`
}

type NodePoolAutoScaling struct {
	Min *int32 `json:"min,omitempty"`
	Max *int32 `json:"max,omitempty"`
}

type Label struct {
	Key   string  `json:"key"`
	Value *string `json:"value,omitempty"`
}

type Taint struct {
	Key    string  `json:"key"`
	Value  *string `json:"value,omitempty"`
	Effect string  `json:"effect"`
}

// ExternalAuth is an externalAuths resource of a cluster: a proxy resource, with neither location
// nor tags.
type ExternalAuth struct {
	ID         *string                 `json:"id,omitempty"`
	Name       *string                 `json:"name,omitempty"`
	Type       *string                 `json:"type,omitempty"`
	SystemData *SystemData             `json:"systemData,omitempty"`
	Properties *ExternalAuthProperties `json:"properties,omitempty"`
}

// ExternalAuthProperties are the properties of an external auth.
type ExternalAuthProperties struct {
	ProvisioningState *string `json:"provisioningState,omitempty"`
	// Condition is how 2024-06-10-preview and 2025-12-23-preview report the state: one condition, where
	// later versions have status.conditions.
	Condition *Condition                  `json:"condition,omitempty"`
	Status    *ResourceStatus             `json:"status,omitempty"`
	Issuer    *TokenIssuerProfile         `json:"issuer,omitempty"`
	Clients   []ExternalAuthClientProfile `json:"clients,omitempty"`
	Claim     *ExternalAuthClaimProfile   `json:"claim,omitempty"`
}

type TokenIssuerProfile struct {
	URL       *string  `json:"url,omitempty"`
	Audiences []string `json:"audiences,omitempty"`
	CA        *string  `json:"ca,omitempty"`
}

type ExternalAuthClientProfile struct {
	Component   *ExternalAuthClientComponentProfile `json:"component,omitempty"`
	ClientID    *string                             `json:"clientId,omitempty"`
	ExtraScopes []string                            `json:"extraScopes,omitempty"`
	Type        *string                             `json:"type,omitempty"`
}

type ExternalAuthClientComponentProfile struct {
	Name                *string `json:"name,omitempty"`
	AuthClientNamespace *string `json:"authClientNamespace,omitempty"`
}

type ExternalAuthClaimProfile struct {
	Mappings        *TokenClaimMappingsProfile `json:"mappings,omitempty"`
	ValidationRules []TokenClaimValidationRule `json:"validationRules,omitempty"`
}

type TokenClaimMappingsProfile struct {
	Username *UsernameClaimProfile `json:"username,omitempty"`
	Groups   *GroupClaimProfile    `json:"groups,omitempty"`
}

type UsernameClaimProfile struct {
	Claim        *string `json:"claim,omitempty"`
	Prefix       *string `json:"prefix,omitempty"`
	PrefixPolicy *string `json:"prefixPolicy,omitempty"`
}

type GroupClaimProfile struct {
	Claim  *string `json:"claim,omitempty"`
	Prefix *string `json:"prefix,omitempty"`
}

type TokenClaimValidationRule struct {
	Type          *string             `json:"type,omitempty"`
	RequiredClaim *TokenRequiredClaim `json:"requiredClaim,omitempty"`
}

type TokenRequiredClaim struct {
	Claim         *string `json:"claim,omitempty"`
	RequiredValue *string `json:"requiredValue,omitempty"`
}
