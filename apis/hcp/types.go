package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ProvisioningState is the ARM provisioning state of a resource.
type ProvisioningState string

const (
	ProvisioningStateAccepted     ProvisioningState = "Accepted"
	ProvisioningStateProvisioning ProvisioningState = "Provisioning"
	ProvisioningStateUpdating     ProvisioningState = "Updating"
	ProvisioningStateDeleting     ProvisioningState = "Deleting"
	ProvisioningStateSucceeded    ProvisioningState = "Succeeded"
	ProvisioningStateFailed       ProvisioningState = "Failed"
	ProvisioningStateCanceled     ProvisioningState = "Canceled"
)

// Condition types of an HCPCluster.
const (
	ConditionPlaced          = "Placed"
	ConditionVersionResolved = "VersionResolved"
	ConditionDelivered       = "Delivered"
	ConditionAvailable       = "Available"
	ConditionProgressing     = "Progressing"
	ConditionDegraded        = "Degraded"
	// ConditionRevokingCredentials is True while the cluster's break-glass credentials are being revoked.
	ConditionRevokingCredentials = "RevokingCredentials"
)

// ConditionAgentConnected is True while the Maestro source hears from a ManagementCluster's agent.
const ConditionAgentConnected = "AgentConnected"

// ConditionResourcesDeleted is the condition of a Deleted ARMSubscription: True once none of its
// HCPClusters is left.
const ConditionResourcesDeleted = "ResourcesDeleted"

// ConditionReady is True while a NodePool's nodes are ready, as HyperShift reports them. A NodePool also
// has Delivered and Progressing, as an HCPCluster does.
const ConditionReady = "Ready"

// ConditionIssued is the condition of a BreakglassCredential: True once its certificate is signed, False
// with the reason while it waits, and once it failed.
const ConditionIssued = "Issued"

// The reasons of an HCPCluster's RevokingCredentials condition.
const (
	// RevocationRequested: hcpclusters/revokecredentials was called and the revocation is on its way.
	RevocationRequested = "Requested"
	// CredentialsRevoked: the cluster no longer trusts any break-glass certificate issued before the
	// condition's lastTransitionTime.
	CredentialsRevoked = "CredentialsRevoked"
)

// NodePoolUIDLabel is the key of the selector in the Scale of a NodePool (nodepools/scale), whose value
// is the pool's UID. Nothing here carries the label: the HorizontalPodAutoscaler needs a selector even to
// scale on External or Object metrics, the metrics that fit a pool of nodes.
const NodePoolUIDLabel = "hcp.aro.azure.com/nodepool-uid"

// ARMSubscriptionLabel is on the HCPClusters and NodePools the ARM shim creates; its value is the
// lowercased subscription ID, the name of the ARMSubscription they belong to, so that a subscription's
// resources are one label-selected list across namespaces, and go when the subscription is Deleted.
const ARMSubscriptionLabel = "hcp.aro.azure.com/arm-subscription"

// DeliveryFinalizer keeps a deleted HCPCluster or NodePool until the objects delivered for it are gone
// from its management cluster.
const DeliveryFinalizer = "hcp.aro.azure.com/delivery"

// ExperimentalFeaturesAnnotation, set to "true" on an HCPCluster, lets it use the candidate and
// nightly channel groups.
const ExperimentalFeaturesAnnotation = "hcp.aro.azure.com/experimental-features"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HCPCluster is one hosted OpenShift cluster: a HyperShift hosted control plane
// on a management cluster plus its worker node pools (ARM hcpOpenShiftClusters).
type HCPCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the cluster the user asks for.
	Spec HCPClusterSpec `json:"spec"`
	// status is what the service has made of it so far.
	// +optional
	Status HCPClusterStatus `json:"status,omitempty"`
}

// HCPClusterSpec mirrors the ARM properties of api-version 2026-09-01-preview.
type HCPClusterSpec struct {
	// location is the Azure region of the cluster, for example "eastus". Immutable.
	Location string `json:"location"`
	// azure names the ARM resource this cluster is. Immutable.
	Azure AzureResourceReference `json:"azure"`
	// version is the OpenShift version and channel group of the control plane.
	Version VersionProfile `json:"version"`
	// dns configures the cluster's DNS names. Immutable.
	// +optional
	DNS DNSProfile `json:"dns,omitempty"`
	// network configures the cluster network. Immutable.
	// +optional
	Network NetworkProfile `json:"network,omitempty"`
	// api configures the cluster's API server endpoint.
	// +optional
	API APIProfile `json:"api,omitempty"`
	// ingress configures the default ingress controller. Immutable.
	// +optional
	Ingress IngressProfile `json:"ingress,omitempty"`
	// platform holds the Azure specific configuration. Only operatorsAuthentication may change.
	Platform PlatformProfile `json:"platform"`
	// identity is the managed service identity of the cluster resource.
	// +optional
	Identity *ManagedServiceIdentity `json:"identity,omitempty"`
	// autoscaling configures the cluster autoscaler.
	// +optional
	Autoscaling ClusterAutoscalingProfile `json:"autoscaling,omitempty"`
	// etcd configures the control plane's etcd.
	// +optional
	Etcd EtcdProfile `json:"etcd,omitempty"`
	// imageDigestMirrors are the image mirrors of the cluster (at most 240).
	// +optional
	// +listType=atomic
	ImageDigestMirrors []ImageDigestMirror `json:"imageDigestMirrors,omitempty"`
	// nodeDrainTimeoutMinutes is how long node drains may take before they are forced, 0 to 10080.
	// +optional
	NodeDrainTimeoutMinutes *int32 `json:"nodeDrainTimeoutMinutes,omitempty"`
	// clusterImageRegistry configures the in-cluster image registry. Immutable.
	// +optional
	ClusterImageRegistry ClusterImageRegistryProfile `json:"clusterImageRegistry,omitempty"`
	// cryptoRestrictions is None or FIPS. Immutable.
	// +optional
	CryptoRestrictions string `json:"cryptoRestrictions,omitempty"`
}

// AzureResourceReference says where the ARM resource lives.
type AzureResourceReference struct {
	// subscriptionID is the Azure subscription (a UUID).
	SubscriptionID string `json:"subscriptionID"`
	// resourceGroup is the resource group of the cluster resource.
	ResourceGroup string `json:"resourceGroup"`
	// tenantID is the Entra tenant of the subscription (a UUID).
	// +optional
	TenantID string `json:"tenantID,omitempty"`
}

// VersionProfile selects an OpenShift version.
type VersionProfile struct {
	// id is MAJOR.MINOR for a cluster (the service picks the patch) and MAJOR.MINOR.PATCH for a node pool.
	ID string `json:"id"`
	// channelGroup is stable (the default), fast, candidate or nightly.
	// +optional
	ChannelGroup string `json:"channelGroup,omitempty"`
}

// DNSProfile configures the cluster's DNS.
type DNSProfile struct {
	// baseDomainPrefix is the first label of the cluster's base domain: at most 15 lowercase
	// alphanumerics and '-', starting with a letter.
	// +optional
	BaseDomainPrefix string `json:"baseDomainPrefix,omitempty"`
}

// NetworkProfile configures the cluster network.
type NetworkProfile struct {
	// networkType is OVNKubernetes (the default) or Other.
	// +optional
	NetworkType string `json:"networkType,omitempty"`
	// podCIDR is the IPv4 range pods get addresses from (default 10.128.0.0/14).
	// +optional
	PodCIDR string `json:"podCIDR,omitempty"`
	// serviceCIDR is the IPv4 range of service IPs (default 172.30.0.0/16).
	// +optional
	ServiceCIDR string `json:"serviceCIDR,omitempty"`
	// machineCIDR is the IPv4 range of the nodes (default 10.0.0.0/16).
	// +optional
	MachineCIDR string `json:"machineCIDR,omitempty"`
	// hostPrefix is the prefix length of each node's pod range, 23 to 26 (default 23).
	// +optional
	HostPrefix int32 `json:"hostPrefix,omitempty"`
}

// APIProfile configures the cluster's API server endpoint.
type APIProfile struct {
	// visibility is Public (the default) or Private. Immutable.
	// +optional
	Visibility string `json:"visibility,omitempty"`
	// authorizedCIDRs are the IPv4 addresses or CIDR blocks allowed to reach the API server (1 to 500 when set).
	// +optional
	// +listType=atomic
	AuthorizedCIDRs []string `json:"authorizedCIDRs,omitempty"`
}

// IngressProfile configures the default ingress controller.
type IngressProfile struct {
	// type is Public (the default), Private or Disabled.
	// +optional
	Type string `json:"type,omitempty"`
}

// PlatformProfile is the Azure specific configuration of a cluster.
type PlatformProfile struct {
	// managedResourceGroup is the resource group the service creates the cluster's resources in;
	// generated as "aro-hcp-<cluster>-<uuid>" when empty. It must differ from the cluster's own resource group.
	// +optional
	ManagedResourceGroup string `json:"managedResourceGroup,omitempty"`
	// subnetID is the ARM ID of the worker subnet (Microsoft.Network/virtualNetworks/subnets).
	SubnetID string `json:"subnetID"`
	// vnetIntegrationSubnetID is the ARM ID of the subnet dedicated to control plane to node traffic.
	// +optional
	VnetIntegrationSubnetID string `json:"vnetIntegrationSubnetID,omitempty"`
	// networkSecurityGroupID is the ARM ID of the network security group (Microsoft.Network/networkSecurityGroups).
	NetworkSecurityGroupID string `json:"networkSecurityGroupID"`
	// outboundType is LoadBalancer (the default and only value).
	// +optional
	OutboundType string `json:"outboundType,omitempty"`
	// operatorsAuthentication holds the managed identities the cluster's operators use.
	// +optional
	OperatorsAuthentication OperatorsAuthenticationProfile `json:"operatorsAuthentication,omitempty"`
}

// OperatorsAuthenticationProfile holds how the cluster's operators authenticate to Azure.
type OperatorsAuthenticationProfile struct {
	// userAssignedIdentities are the user-assigned managed identities of the operators.
	// +optional
	UserAssignedIdentities UserAssignedIdentitiesProfile `json:"userAssignedIdentities,omitempty"`
	// managedIdentitiesDataPlaneIdentityURL is the data plane URL of the cluster's managed identities
	// (ARM's X-Ms-Identity-Url on create), where the service gets the identities' credentials. It cannot
	// change once set.
	// +optional
	ManagedIdentitiesDataPlaneIdentityURL string `json:"managedIdentitiesDataPlaneIdentityURL,omitempty"`
}

// UserAssignedIdentitiesProfile maps operators to user-assigned managed identity ARM IDs.
type UserAssignedIdentitiesProfile struct {
	// controlPlaneOperators maps a control plane operator name to its identity's ARM ID.
	// +optional
	ControlPlaneOperators map[string]string `json:"controlPlaneOperators,omitempty"`
	// dataPlaneOperators maps a data plane operator name to its identity's ARM ID.
	// +optional
	DataPlaneOperators map[string]string `json:"dataPlaneOperators,omitempty"`
	// serviceManagedIdentity is the ARM ID of the identity the service itself uses.
	// +optional
	ServiceManagedIdentity string `json:"serviceManagedIdentity,omitempty"`
}

// ManagedServiceIdentity is the ARM managed identity of a resource.
type ManagedServiceIdentity struct {
	// type is None, SystemAssigned, UserAssigned or "SystemAssigned,UserAssigned".
	Type string `json:"type"`
	// userAssignedIdentities are the ARM IDs of the user-assigned identities of the resource.
	// +optional
	UserAssignedIdentities map[string]UserAssignedIdentity `json:"userAssignedIdentities,omitempty"`
}

// UserAssignedIdentity is what Azure reports of one user-assigned identity.
type UserAssignedIdentity struct {
	// principalID is the identity's principal (object) ID.
	// +optional
	PrincipalID string `json:"principalID,omitempty"`
	// clientID is the identity's client (application) ID.
	// +optional
	ClientID string `json:"clientID,omitempty"`
}

// ClusterAutoscalingProfile configures the cluster autoscaler.
type ClusterAutoscalingProfile struct {
	// maxNodesTotal is the most nodes the autoscaler may run across all node pools, 0 to 500.
	// +optional
	MaxNodesTotal *int32 `json:"maxNodesTotal,omitempty"`
	// maxPodGracePeriodSeconds is the graceful termination time given to pods on scale down.
	// +optional
	MaxPodGracePeriodSeconds *int32 `json:"maxPodGracePeriodSeconds,omitempty"`
	// maxNodeProvisionTimeSeconds is how long the autoscaler waits for a node to be provisioned.
	// +optional
	MaxNodeProvisionTimeSeconds *int32 `json:"maxNodeProvisionTimeSeconds,omitempty"`
	// podPriorityThreshold: pods below this priority do not cause scale up and do not block scale down.
	// +optional
	PodPriorityThreshold *int32 `json:"podPriorityThreshold,omitempty"`
}

// EtcdProfile configures the control plane's etcd.
type EtcdProfile struct {
	// dataEncryption configures encryption of etcd data with a customer managed key.
	// +optional
	DataEncryption *EtcdDataEncryptionProfile `json:"dataEncryption,omitempty"`
}

// EtcdDataEncryptionProfile configures encryption of etcd data.
type EtcdDataEncryptionProfile struct {
	// keyManagementMode is CustomerManaged. Immutable.
	KeyManagementMode string `json:"keyManagementMode"`
	// customerManaged configures the customer managed key; required for CustomerManaged.
	// +optional
	CustomerManaged *CustomerManagedEncryptionProfile `json:"customerManaged,omitempty"`
}

// CustomerManagedEncryptionProfile configures a customer managed encryption key.
type CustomerManagedEncryptionProfile struct {
	// encryptionType is KMS (the default and only value). Immutable.
	// +optional
	EncryptionType string `json:"encryptionType,omitempty"`
	// kms names the Key Vault key.
	// +optional
	KMS *KMSEncryptionProfile `json:"kms,omitempty"`
}

// KMSEncryptionProfile names a key in an Azure Key Vault.
type KMSEncryptionProfile struct {
	// vaultName is the Key Vault's name (1 to 255 characters). Immutable.
	VaultName string `json:"vaultName"`
	// visibility is Public or Private: whether the vault is reachable from the internet. Immutable.
	Visibility string `json:"visibility"`
	// activeKey is the key in use; only its version may change.
	ActiveKey KMSKey `json:"activeKey"`
}

// KMSKey names one version of a Key Vault key.
type KMSKey struct {
	// name is the key's name (1 to 255 characters). Immutable.
	Name string `json:"name"`
	// version is the key's version (1 to 255 characters).
	Version string `json:"version"`
}

// ImageDigestMirror lists the mirrors of one image repository.
type ImageDigestMirror struct {
	// source is the repository that is mirrored (at most 255 characters).
	Source string `json:"source"`
	// mirrors are the repositories that serve the same content, 1 to 255 of them.
	// +listType=atomic
	Mirrors []string `json:"mirrors"`
}

// ClusterImageRegistryProfile configures the in-cluster image registry.
type ClusterImageRegistryProfile struct {
	// state is Enabled (the default) or Disabled.
	// +optional
	State string `json:"state,omitempty"`
}

// HCPClusterStatus is what the service reports of a cluster.
type HCPClusterStatus struct {
	// provisioningState is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled.
	// +optional
	ProvisioningState ProvisioningState `json:"provisioningState,omitempty"`
	// conditions are Placed, VersionResolved, Delivered, Available, Progressing and Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// clusterID is the UUID the service assigned to the cluster; it names the management cluster namespace.
	// +optional
	ClusterID string `json:"clusterID,omitempty"`
	// version reports the resolved and running versions.
	// +optional
	Version ClusterVersionStatus `json:"version,omitempty"`
	// managementCluster is the name of the ManagementCluster the control plane runs on.
	// +optional
	ManagementCluster string `json:"managementCluster,omitempty"`
	// api reports the API server endpoint.
	// +optional
	API EndpointStatus `json:"api,omitempty"`
	// console reports the web console endpoint.
	// +optional
	Console EndpointStatus `json:"console,omitempty"`
	// issuerURL is the OIDC issuer of the cluster's service account tokens.
	// +optional
	IssuerURL string `json:"issuerURL,omitempty"`
}

// ClusterVersionStatus reports versions of a control plane.
type ClusterVersionStatus struct {
	// desired is the full version the service resolved spec.version.id to, for example 4.20.8.
	// +optional
	Desired string `json:"desired,omitempty"`
	// actual is the version the control plane runs.
	// +optional
	Actual string `json:"actual,omitempty"`
	// history lists the versions the control plane moved through, newest first.
	// +optional
	// +listType=atomic
	History []VersionHistoryEntry `json:"history,omitempty"`
}

// VersionHistoryEntry is one version a control plane moved to.
type VersionHistoryEntry struct {
	// version is the full version.
	Version string `json:"version"`
	// state is Partial while the update runs and Completed once done.
	State string `json:"state"`
	// startedTime is when the update to this version started.
	// +optional
	StartedTime *metav1.Time `json:"startedTime,omitempty"`
	// completionTime is when the update to this version completed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// EndpointStatus reports one URL of a cluster.
type EndpointStatus struct {
	// url is where the endpoint is reached.
	// +optional
	URL string `json:"url,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HCPClusterList is a list of HCPClusters.
type HCPClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []HCPCluster `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePool is a pool of worker virtual machines of one HCPCluster.
type NodePool struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NodePoolSpec `json:"spec"`
	// +optional
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolSpec mirrors the ARM nodePools properties.
type NodePoolSpec struct {
	// clusterName is the name of the HCPCluster in the same namespace this pool belongs to. Immutable.
	ClusterName string `json:"clusterName"`
	// version is the OpenShift version (MAJOR.MINOR.PATCH) of the pool's nodes.
	// +optional
	Version VersionProfile `json:"version,omitempty"`
	// platform is the Azure configuration of the pool's VMs. Immutable.
	Platform NodePoolPlatformProfile `json:"platform"`
	// replicas is the fixed number of nodes; set it or autoScaling, not both.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// autoScaling lets the autoscaler move the node count between min and max; set it or replicas, not both.
	// +optional
	AutoScaling *NodePoolAutoScaling `json:"autoScaling,omitempty"`
	// autoRepair replaces unhealthy nodes (default true). Immutable.
	// +optional
	AutoRepair *bool `json:"autoRepair,omitempty"`
	// labels are put on every node of the pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// taints are put on every node of the pool.
	// +optional
	// +listType=atomic
	Taints []Taint `json:"taints,omitempty"`
	// nodeDrainTimeoutMinutes is how long node drains may take before they are forced, 0 to 10080.
	// +optional
	NodeDrainTimeoutMinutes *int32 `json:"nodeDrainTimeoutMinutes,omitempty"`
	// upgradeType is Replace (the default: new nodes replace old ones) or InPlace. Immutable.
	// +optional
	UpgradeType string `json:"upgradeType,omitempty"`
	// config are MachineConfig, KubeletConfig, ContainerRuntimeConfig or ImageDigestMirrorSet
	// documents applied to the pool's nodes, at most 10.
	// +optional
	// +listType=atomic
	Config []runtime.RawExtension `json:"config,omitempty"`
	// tuningConfig are Tuned or PerformanceProfile documents applied to the pool's nodes, at most 10.
	// +optional
	// +listType=atomic
	TuningConfig []runtime.RawExtension `json:"tuningConfig,omitempty"`
}

// NodePoolPlatformProfile is the Azure configuration of a node pool's VMs.
type NodePoolPlatformProfile struct {
	// subnetID is the ARM ID of the subnet of the pool's VMs; the cluster's subnet when empty.
	// +optional
	SubnetID string `json:"subnetID,omitempty"`
	// vmSize is the Azure VM size, for example Standard_D8s_v3.
	VMSize string `json:"vmSize"`
	// enableEncryptionAtHost encrypts the VMs' temporary disks and caches (default false).
	// +optional
	EnableEncryptionAtHost bool `json:"enableEncryptionAtHost,omitempty"`
	// osDisk configures the VMs' OS disk.
	// +optional
	OSDisk OSDiskProfile `json:"osDisk,omitempty"`
	// availabilityZone pins the pool to one zone of the region.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`
}

// OSDiskProfile configures the OS disk of a node pool's VMs.
type OSDiskProfile struct {
	// sizeGiB is the disk size, 64 (the default) to 4095.
	// +optional
	SizeGiB int32 `json:"sizeGiB,omitempty"`
	// diskStorageAccountType is Premium_LRS (the default), StandardSSD_LRS or Standard_LRS.
	// +optional
	DiskStorageAccountType string `json:"diskStorageAccountType,omitempty"`
	// encryptionSetID is the ARM ID of a disk encryption set (Microsoft.Compute/diskEncryptionSets).
	// +optional
	EncryptionSetID string `json:"encryptionSetID,omitempty"`
	// diskType is Managed (the default) or Ephemeral.
	// +optional
	DiskType string `json:"diskType,omitempty"`
}

// NodePoolAutoScaling bounds the node count of an autoscaled pool.
type NodePoolAutoScaling struct {
	// min is the fewest nodes.
	Min int32 `json:"min"`
	// max is the most nodes; at least min.
	Max int32 `json:"max"`
}

// Taint is a Kubernetes taint put on a pool's nodes.
type Taint struct {
	// key is a qualified name (an optional DNS subdomain prefix and '/', then at most 63 characters).
	Key string `json:"key"`
	// value is at most 63 characters.
	// +optional
	Value string `json:"value,omitempty"`
	// effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect"`
}

// NodePoolStatus is what the service reports of a node pool.
type NodePoolStatus struct {
	// provisioningState is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled.
	// +optional
	ProvisioningState ProvisioningState `json:"provisioningState,omitempty"`
	// conditions report the pool's state (Ready, Progressing, Degraded, ...).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// replicas is the number of nodes the pool has now.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// version is the OpenShift version the pool's nodes run.
	// +optional
	Version string `json:"version,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []NodePool `json:"items"`
}

// BreakglassCredentialPhase is the life stage of a break-glass credential.
type BreakglassCredentialPhase string

const (
	BreakglassCredentialPhasePending BreakglassCredentialPhase = "Pending"
	BreakglassCredentialPhaseIssued  BreakglassCredentialPhase = "Issued"
	BreakglassCredentialPhaseFailed  BreakglassCredentialPhase = "Failed"
	BreakglassCredentialPhaseExpired BreakglassCredentialPhase = "Expired"
	BreakglassCredentialPhaseRevoked BreakglassCredentialPhase = "Revoked"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredential is a short-lived cluster-admin client certificate for one HCPCluster.
type BreakglassCredential struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BreakglassCredentialSpec `json:"spec"`
	// +optional
	Status BreakglassCredentialStatus `json:"status,omitempty"`
}

// BreakglassCredentialSpec asks for a credential. It cannot change once created.
type BreakglassCredentialSpec struct {
	// clusterName is the HCPCluster in the same namespace the credential is for.
	ClusterName string `json:"clusterName"`
	// certificateSigningRequest is a PEM encoded PKCS#10 request with subject
	// CN=system:customer-break-glass:<user>, O=system:masters. When empty the server generates the key.
	// +optional
	CertificateSigningRequest string `json:"certificateSigningRequest,omitempty"`
	// expirationSeconds is the credential's lifetime, 600 (10 minutes) to 86400 (24 hours, the default).
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
}

// BreakglassCredentialStatus reports the credential.
type BreakglassCredentialStatus struct {
	// phase is Pending, Issued, Failed, Expired or Revoked.
	// +optional
	Phase BreakglassCredentialPhase `json:"phase,omitempty"`
	// certificate is the PEM encoded issued client certificate.
	// +optional
	Certificate string `json:"certificate,omitempty"`
	// expirationTimestamp is when the certificate stops being valid.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty"`
	// conditions report the credential's progress.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// certificateAuthority is the PEM encoded CA bundle the hosted cluster's API server's serving
	// certificate chains to, as the control plane reported it when the credential was issued.
	// +optional
	CertificateAuthority string `json:"certificateAuthority,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CredentialRevocation asks that every break-glass credential of an HCPCluster issued so far stop working:
// the body of a create on hcpclusters/<name>/revokecredentials, named after the cluster. The server
// answers 202 and reports progress in the cluster's RevokingCredentials condition.
type CredentialRevocation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredentialList is a list of BreakglassCredentials.
type BreakglassCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []BreakglassCredential `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ManagementCluster is a Kubernetes cluster that runs hosted control planes; one Maestro consumer.
type ManagementCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ManagementClusterSpec `json:"spec"`
	// +optional
	Status ManagementClusterStatus `json:"status,omitempty"`
}

// ManagementClusterSpec describes a management cluster.
type ManagementClusterSpec struct {
	// consumerName is the cluster's Maestro consumer, the topic segment its agent uses
	// (lowercase alphanumerics and '-'). Immutable.
	ConsumerName string `json:"consumerName"`
	// location is the Azure region the cluster serves. Immutable.
	Location string `json:"location"`
	// capacity is the most hosted clusters placed on it (at least 1).
	Capacity int32 `json:"capacity"`
	// schedulable lets new hosted clusters be placed on it (default true).
	// +optional
	Schedulable *bool `json:"schedulable,omitempty"`
}

// ManagementClusterStatus reports a management cluster.
type ManagementClusterStatus struct {
	// conditions report AgentConnected: True while the Maestro source hears from its agent, with the
	// time it last changed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// hostedClusters is the number of HCPClusters placed on it.
	// +optional
	HostedClusters int32 `json:"hostedClusters,omitempty"`
	// lastSeen is when its agent was last heard from.
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`
	// nodePools is the number of NodePools of the hosted clusters placed on it.
	// +optional
	NodePools int32 `json:"nodePools,omitempty"`
	// availableCapacity is how many more hosted clusters may be placed on it: capacity less hostedClusters.
	// +optional
	AvailableCapacity int32 `json:"availableCapacity,omitempty"`
	// lastResync is when its agent last asked for every bundle again, as it does whenever it (re)connects.
	// +optional
	LastResync *metav1.Time `json:"lastResync,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ManagementClusterList is a list of ManagementClusters.
type ManagementClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ManagementCluster `json:"items"`
}

// ARMSubscriptionState is the state Azure Resource Manager reports for a subscription.
type ARMSubscriptionState string

const (
	ARMSubscriptionRegistered   ARMSubscriptionState = "Registered"
	ARMSubscriptionUnregistered ARMSubscriptionState = "Unregistered"
	ARMSubscriptionWarned       ARMSubscriptionState = "Warned"
	ARMSubscriptionSuspended    ARMSubscriptionState = "Suspended"
	ARMSubscriptionDeleted      ARMSubscriptionState = "Deleted"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMSubscription is an Azure subscription as Azure Resource Manager last registered it with the service,
// named after the lowercased subscription ID. Its state decides what the ARM frontend lets the
// subscription do; a Deleted subscription's HCPClusters are deleted.
type ARMSubscription struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ARMSubscriptionSpec `json:"spec"`
	// +optional
	Status ARMSubscriptionStatus `json:"status,omitempty,omitzero"`
}

// ARMSubscriptionSpec is the body of ARM's subscription PUT.
type ARMSubscriptionSpec struct {
	// state is Registered, Unregistered, Warned, Suspended or Deleted.
	State ARMSubscriptionState `json:"state"`
	// registrationDate is when the subscription registered the resource provider, as ARM wrote it.
	// +optional
	RegistrationDate string `json:"registrationDate,omitempty"`
	// properties are the subscription's properties as ARM sent them.
	// +optional
	Properties *ARMSubscriptionProperties `json:"properties,omitempty"`
}

// ARMSubscriptionProperties are a subscription's properties as ARM sends them.
type ARMSubscriptionProperties struct {
	// tenantID is the subscription's home tenant.
	// +optional
	TenantID string `json:"tenantID,omitempty"`
	// locationPlacementID is ARM's placement of the subscription.
	// +optional
	LocationPlacementID string `json:"locationPlacementID,omitempty"`
	// quotaID is the subscription's offer.
	// +optional
	QuotaID string `json:"quotaID,omitempty"`
	// spendingLimit is On, Off or CurrentPeriodOff.
	// +optional
	SpendingLimit string `json:"spendingLimit,omitempty"`
	// registeredFeatures are the preview features (AFECs) the subscription registered.
	// +optional
	// +listType=map
	// +listMapKey=name
	RegisteredFeatures []ARMFeature `json:"registeredFeatures,omitempty"`
	// managedByTenants are the tenants that manage the subscription through Azure Lighthouse.
	// +optional
	// +listType=atomic
	ManagedByTenants []ARMManagedByTenant `json:"managedByTenants,omitempty"`
}

// ARMFeature is a preview feature registered on a subscription.
type ARMFeature struct {
	// name is the feature's name, e.g. Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures.
	Name string `json:"name"`
	// state is the feature's registration state, e.g. Registered.
	// +optional
	State string `json:"state,omitempty"`
}

// ARMManagedByTenant is a tenant that manages a subscription.
type ARMManagedByTenant struct {
	// tenantID is the managing tenant.
	TenantID string `json:"tenantID"`
}

// ARMSubscriptionStatus reports what the service did about the subscription's state.
type ARMSubscriptionStatus struct {
	// conditions report ResourcesDeleted for a Deleted subscription: True once none of its HCPClusters is left.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMSubscriptionList is a list of ARMSubscriptions.
type ARMSubscriptionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ARMSubscription `json:"items"`
}

// ARMOperationRequest is what an ARM asynchronous operation was started for.
type ARMOperationRequest string

const (
	ARMOperationCreate            ARMOperationRequest = "Create"
	ARMOperationUpdate            ARMOperationRequest = "Update"
	ARMOperationDelete            ARMOperationRequest = "Delete"
	ARMOperationRequestCredential ARMOperationRequest = "RequestCredential"
	ARMOperationRevokeCredentials ARMOperationRequest = "RevokeCredentials"
)

// ARMOperationState is an ARM asynchronous operation's status, as ARM spells it.
type ARMOperationState string

const (
	ARMOperationAccepted     ARMOperationState = "Accepted"
	ARMOperationProvisioning ARMOperationState = "Provisioning"
	ARMOperationUpdating     ARMOperationState = "Updating"
	ARMOperationDeleting     ARMOperationState = "Deleting"
	ARMOperationSucceeded    ARMOperationState = "Succeeded"
	ARMOperationFailed       ARMOperationState = "Failed"
	ARMOperationCanceled     ARMOperationState = "Canceled"
)

// Final tells whether an operation in state s has ended: Succeeded, Failed and Canceled stay as they are.
func (s ARMOperationState) Final() bool {
	return s == ARMOperationSucceeded || s == ARMOperationFailed || s == ARMOperationCanceled
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMOperation is one ARM asynchronous operation (a PUT, PATCH, DELETE or POST action of the ARM
// frontend), named after its operation ID. A controller keeps its status in step with the object it acts
// on; it is deleted 7 days after it was created, as ARM keeps operations.
type ARMOperation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ARMOperationSpec `json:"spec"`
	// +optional
	Status ARMOperationStatus `json:"status,omitempty,omitzero"`
}

// ARMOperationSpec says what the operation does and who asked. It cannot change once created.
type ARMOperationSpec struct {
	// request is Create, Update, Delete, RequestCredential or RevokeCredentials.
	Request ARMOperationRequest `json:"request"`
	// resourceID is the ARM resource ID the operation acts on, as the caller spelled it.
	ResourceID string `json:"resourceID"`
	// subscriptionID is the subscription of resourceID, lowercased.
	SubscriptionID string `json:"subscriptionID"`
	// location is the region whose operation endpoints serve it.
	Location string `json:"location"`
	// target is the object the operation follows.
	Target ARMOperationTarget `json:"target"`
	// apiVersion is the ARM api-version the operation was started with.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// tenantID is the caller's home tenant (x-ms-home-tenant-id): only it may read the operation.
	// +optional
	TenantID string `json:"tenantID,omitempty"`
	// clientObjectID is the caller's object ID (x-ms-client-object-id): only it may read the operation.
	// +optional
	ClientObjectID string `json:"clientObjectID,omitempty"`
	// clientRequestID is the caller's x-ms-client-request-id.
	// +optional
	ClientRequestID string `json:"clientRequestID,omitempty"`
	// correlationRequestID is ARM's x-ms-correlation-request-id.
	// +optional
	CorrelationRequestID string `json:"correlationRequestID,omitempty"`
	// notificationURI is ARM's Azure-AsyncNotificationUri, to be told when the operation ends.
	// +optional
	NotificationURI string `json:"notificationURI,omitempty"`
}

// ARMOperationTarget names the object an operation follows.
type ARMOperationTarget struct {
	// resource is hcpclusters, nodepools or breakglasscredentials.
	Resource string `json:"resource"`
	// namespace is the object's namespace.
	Namespace string `json:"namespace"`
	// name is the object's name.
	Name string `json:"name"`
	// uid is the object's UID: an object of the same name made later is another one.
	UID types.UID `json:"uid"`
	// generation is the object's generation the operation waits for (its metadata.generation after the write).
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// ARMOperationStatus reports an operation as ARM's operation status endpoint does.
type ARMOperationStatus struct {
	// state is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled; the last three are final.
	// +optional
	State ARMOperationState `json:"state,omitempty"`
	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// endTime is when the operation reached a final state.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// error says why a Failed or Canceled operation ended so.
	// +optional
	Error *ARMOperationError `json:"error,omitempty"`
	// notificationTime is when ARM's notification URI was told that the operation ended.
	// +optional
	NotificationTime *metav1.Time `json:"notificationTime,omitempty"`
}

// ARMOperationError is the error of a failed operation, as ARM's CloudError carries it.
type ARMOperationError struct {
	// code is the error's code, e.g. Canceled or InternalServerError.
	Code string `json:"code"`
	// message says what went wrong.
	Message string `json:"message"`
	// target is what the error is about, when it is about one field or object.
	// +optional
	Target string `json:"target,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMOperationList is a list of ARMOperations.
type ARMOperationList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ARMOperation `json:"items"`
}
