package v1alpha1

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

// Reasons of a NodePool's Ready condition while it is False before HyperShift reports the pool's nodes:
// they say what the pool waits for.
const (
	// NodePoolReasonClusterNotReady: the pool's HCPCluster is not placed on a management cluster, its
	// HostedCluster is not applied there, or its version is not resolved yet.
	NodePoolReasonClusterNotReady = "ClusterNotReady"
	// NodePoolReasonWaitingForDelivery: the pool's bundle is published; its agent has not reported it
	// applied yet.
	NodePoolReasonWaitingForDelivery = "WaitingForDelivery"
	// NodePoolReasonProvisioning: the pool's HyperShift NodePool is applied; its nodes are not ready yet.
	NodePoolReasonProvisioning = "Provisioning"
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
}

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
	// conditions are Placed, VersionResolved, Delivered, Available, Progressing and Degraded.
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
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HCPClusterList is a list of HCPClusters.
type HCPClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []HCPCluster `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePool is a pool of worker virtual machines of one HCPCluster.
type NodePool struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec NodePoolSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status NodePoolStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// NodePoolSpec mirrors the ARM nodePools properties.
type NodePoolSpec struct {
	// clusterName is the name of the HCPCluster in the same namespace this pool belongs to. Immutable.
	ClusterName string `json:"clusterName" protobuf:"bytes,1,opt,name=clusterName"`
	// version is the OpenShift version (MAJOR.MINOR.PATCH) of the pool's nodes.
	// +optional
	Version VersionProfile `json:"version,omitempty,omitzero" protobuf:"bytes,2,opt,name=version"`
	// platform is the Azure configuration of the pool's VMs. Immutable.
	Platform NodePoolPlatformProfile `json:"platform" protobuf:"bytes,3,opt,name=platform"`
	// replicas is the fixed number of nodes; set it or autoScaling, not both.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,4,opt,name=replicas"`
	// autoScaling lets the autoscaler move the node count between min and max; set it or replicas, not both.
	// +optional
	AutoScaling *NodePoolAutoScaling `json:"autoScaling,omitempty" protobuf:"bytes,5,opt,name=autoScaling"`
	// autoRepair replaces unhealthy nodes (default true). Immutable.
	// +optional
	AutoRepair *bool `json:"autoRepair,omitempty" protobuf:"varint,6,opt,name=autoRepair"`
	// labels are put on every node of the pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,7,rep,name=labels"`
	// taints are put on every node of the pool.
	// +optional
	// +listType=atomic
	Taints []Taint `json:"taints,omitempty" protobuf:"bytes,8,rep,name=taints"`
	// nodeDrainTimeoutMinutes is how long node drains may take before they are forced, 0 to 10080.
	// +optional
	NodeDrainTimeoutMinutes *int32 `json:"nodeDrainTimeoutMinutes,omitempty" protobuf:"varint,9,opt,name=nodeDrainTimeoutMinutes"`
	// upgradeType is Replace (the default: new nodes replace old ones) or InPlace. Immutable.
	// +optional
	UpgradeType string `json:"upgradeType,omitempty" protobuf:"bytes,10,opt,name=upgradeType"`
	// config are MachineConfig, KubeletConfig, ContainerRuntimeConfig or ImageDigestMirrorSet
	// documents applied to the pool's nodes, at most 10.
	// +optional
	// +listType=atomic
	Config []runtime.RawExtension `json:"config,omitempty" protobuf:"bytes,11,rep,name=config"`
	// tuningConfig are Tuned or PerformanceProfile documents applied to the pool's nodes, at most 10.
	// +optional
	// +listType=atomic
	TuningConfig []runtime.RawExtension `json:"tuningConfig,omitempty" protobuf:"bytes,12,rep,name=tuningConfig"`
}

// NodePoolPlatformProfile is the Azure configuration of a node pool's VMs.
type NodePoolPlatformProfile struct {
	// subnetID is the ARM ID of the subnet of the pool's VMs; the cluster's subnet when empty.
	// +optional
	SubnetID string `json:"subnetID,omitempty" protobuf:"bytes,1,opt,name=subnetID"`
	// vmSize is the Azure VM size, for example Standard_D8s_v3.
	VMSize string `json:"vmSize" protobuf:"bytes,2,opt,name=vmSize"`
	// enableEncryptionAtHost encrypts the VMs' temporary disks and caches (default false).
	// +optional
	EnableEncryptionAtHost bool `json:"enableEncryptionAtHost,omitempty" protobuf:"varint,3,opt,name=enableEncryptionAtHost"`
	// osDisk configures the VMs' OS disk.
	// +optional
	OSDisk OSDiskProfile `json:"osDisk,omitempty,omitzero" protobuf:"bytes,4,opt,name=osDisk"`
	// availabilityZone pins the pool to one zone of the region.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty" protobuf:"bytes,5,opt,name=availabilityZone"`
}

// OSDiskProfile configures the OS disk of a node pool's VMs.
type OSDiskProfile struct {
	// sizeGiB is the disk size, 64 (the default) to 4095.
	// +optional
	SizeGiB int32 `json:"sizeGiB,omitempty" protobuf:"varint,1,opt,name=sizeGiB"`
	// diskStorageAccountType is Premium_LRS (the default), StandardSSD_LRS or Standard_LRS.
	// +optional
	DiskStorageAccountType string `json:"diskStorageAccountType,omitempty" protobuf:"bytes,2,opt,name=diskStorageAccountType"`
	// encryptionSetID is the ARM ID of a disk encryption set (Microsoft.Compute/diskEncryptionSets).
	// +optional
	EncryptionSetID string `json:"encryptionSetID,omitempty" protobuf:"bytes,3,opt,name=encryptionSetID"`
	// diskType is Managed (the default) or Ephemeral.
	// +optional
	DiskType string `json:"diskType,omitempty" protobuf:"bytes,4,opt,name=diskType"`
}

// NodePoolAutoScaling bounds the node count of an autoscaled pool.
type NodePoolAutoScaling struct {
	// min is the fewest nodes.
	Min int32 `json:"min" protobuf:"varint,1,opt,name=min"`
	// max is the most nodes; at least min.
	Max int32 `json:"max" protobuf:"varint,2,opt,name=max"`
}

// Taint is a Kubernetes taint put on a pool's nodes.
type Taint struct {
	// key is a qualified name (an optional DNS subdomain prefix and '/', then at most 63 characters).
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// value is at most 63 characters.
	// +optional
	Value string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	// effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect" protobuf:"bytes,3,opt,name=effect"`
}

// NodePoolStatus is what the service reports of a node pool.
type NodePoolStatus struct {
	// provisioningState is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled.
	// +optional
	ProvisioningState ProvisioningState `json:"provisioningState,omitempty" protobuf:"bytes,1,opt,name=provisioningState,casttype=ProvisioningState"`
	// conditions report the pool's state (Ready, Progressing, Degraded, ...).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	// replicas is the number of nodes the pool has now.
	// +optional
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,4,opt,name=replicas"`
	// version is the OpenShift version the pool's nodes run.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,5,opt,name=version"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []NodePool `json:"items" protobuf:"bytes,2,rep,name=items"`
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

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredential is a short-lived cluster-admin client certificate for one HCPCluster.
type BreakglassCredential struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec BreakglassCredentialSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status BreakglassCredentialStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// BreakglassCredentialSpec asks for a credential. It cannot change once created.
type BreakglassCredentialSpec struct {
	// clusterName is the HCPCluster in the same namespace the credential is for.
	ClusterName string `json:"clusterName" protobuf:"bytes,1,opt,name=clusterName"`
	// certificateSigningRequest is a PEM encoded PKCS#10 request with subject
	// CN=system:customer-break-glass:<user>, O=system:masters. When empty the server generates the key.
	// +optional
	CertificateSigningRequest string `json:"certificateSigningRequest,omitempty" protobuf:"bytes,2,opt,name=certificateSigningRequest"`
	// expirationSeconds is the credential's lifetime, 600 (10 minutes) to 86400 (24 hours, the default).
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty" protobuf:"varint,3,opt,name=expirationSeconds"`
}

// BreakglassCredentialStatus reports the credential.
type BreakglassCredentialStatus struct {
	// phase is Pending, Issued, Failed, Expired or Revoked.
	// +optional
	Phase BreakglassCredentialPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=BreakglassCredentialPhase"`
	// certificate is the PEM encoded issued client certificate.
	// +optional
	Certificate string `json:"certificate,omitempty" protobuf:"bytes,2,opt,name=certificate"`
	// expirationTimestamp is when the certificate stops being valid.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty" protobuf:"bytes,3,opt,name=expirationTimestamp"`
	// conditions report the credential's progress.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
	// certificateAuthority is the PEM encoded CA bundle the hosted cluster's API server's serving
	// certificate chains to, as the control plane reported it when the credential was issued.
	// +optional
	CertificateAuthority string `json:"certificateAuthority,omitempty" protobuf:"bytes,5,opt,name=certificateAuthority"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CredentialRevocation asks that every break-glass credential of an HCPCluster issued so far stop working:
// the body of a create on hcpclusters/<name>/revokecredentials, named after the cluster. The server
// answers 202 and reports progress in the cluster's RevokingCredentials condition.
type CredentialRevocation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredentialList is a list of BreakglassCredentials.
type BreakglassCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []BreakglassCredential `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ManagementCluster is a Kubernetes cluster that runs hosted control planes; one Maestro consumer.
type ManagementCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec ManagementClusterSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status ManagementClusterStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// ManagementClusterSpec describes a management cluster.
type ManagementClusterSpec struct {
	// consumerName is the cluster's Maestro consumer, the topic segment its agent uses
	// (lowercase alphanumerics and '-'). Immutable.
	ConsumerName string `json:"consumerName" protobuf:"bytes,1,opt,name=consumerName"`
	// location is the Azure region the cluster serves. Immutable.
	Location string `json:"location" protobuf:"bytes,2,opt,name=location"`
	// capacity is the most hosted clusters placed on it (at least 1).
	Capacity int32 `json:"capacity" protobuf:"varint,3,opt,name=capacity"`
	// schedulable lets new hosted clusters be placed on it (default true).
	// +optional
	Schedulable *bool `json:"schedulable,omitempty" protobuf:"varint,4,opt,name=schedulable"`
}

// ManagementClusterStatus reports a management cluster.
type ManagementClusterStatus struct {
	// conditions report AgentConnected: True while the Maestro source hears from its agent, with the
	// time it last changed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,1,rep,name=conditions"`
	// hostedClusters is the number of HCPClusters placed on it.
	// +optional
	HostedClusters int32 `json:"hostedClusters,omitempty" protobuf:"varint,2,opt,name=hostedClusters"`
	// lastSeen is when its agent was last heard from.
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty" protobuf:"bytes,3,opt,name=lastSeen"`
	// nodePools is the number of NodePools of the hosted clusters placed on it.
	// +optional
	NodePools int32 `json:"nodePools,omitempty" protobuf:"varint,4,opt,name=nodePools"`
	// availableCapacity is how many more hosted clusters may be placed on it: capacity less hostedClusters.
	// +optional
	AvailableCapacity int32 `json:"availableCapacity,omitempty" protobuf:"varint,5,opt,name=availableCapacity"`
	// lastResync is when its agent last asked for every bundle again, as it does whenever it (re)connects.
	// +optional
	LastResync *metav1.Time `json:"lastResync,omitempty" protobuf:"bytes,6,opt,name=lastResync"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ManagementClusterList is a list of ManagementClusters.
type ManagementClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []ManagementCluster `json:"items" protobuf:"bytes,2,rep,name=items"`
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

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMSubscription is an Azure subscription as Azure Resource Manager last registered it with the service,
// named after the lowercased subscription ID. Its state decides what the ARM frontend lets the
// subscription do; a Deleted subscription's HCPClusters are deleted.
type ARMSubscription struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec ARMSubscriptionSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status ARMSubscriptionStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// ARMSubscriptionSpec is the body of ARM's subscription PUT.
type ARMSubscriptionSpec struct {
	// state is Registered, Unregistered, Warned, Suspended or Deleted.
	State ARMSubscriptionState `json:"state" protobuf:"bytes,1,opt,name=state,casttype=ARMSubscriptionState"`
	// registrationDate is when the subscription registered the resource provider, as ARM wrote it.
	// +optional
	RegistrationDate string `json:"registrationDate,omitempty" protobuf:"bytes,2,opt,name=registrationDate"`
	// properties are the subscription's properties as ARM sent them.
	// +optional
	Properties *ARMSubscriptionProperties `json:"properties,omitempty" protobuf:"bytes,3,opt,name=properties"`
}

// ARMSubscriptionProperties are a subscription's properties as ARM sends them.
type ARMSubscriptionProperties struct {
	// tenantID is the subscription's home tenant.
	// +optional
	TenantID string `json:"tenantID,omitempty" protobuf:"bytes,1,opt,name=tenantID"`
	// locationPlacementID is ARM's placement of the subscription.
	// +optional
	LocationPlacementID string `json:"locationPlacementID,omitempty" protobuf:"bytes,2,opt,name=locationPlacementID"`
	// quotaID is the subscription's offer.
	// +optional
	QuotaID string `json:"quotaID,omitempty" protobuf:"bytes,3,opt,name=quotaID"`
	// spendingLimit is On, Off or CurrentPeriodOff.
	// +optional
	SpendingLimit string `json:"spendingLimit,omitempty" protobuf:"bytes,4,opt,name=spendingLimit"`
	// registeredFeatures are the preview features (AFECs) the subscription registered.
	// +optional
	// +listType=map
	// +listMapKey=name
	RegisteredFeatures []ARMFeature `json:"registeredFeatures,omitempty" protobuf:"bytes,5,rep,name=registeredFeatures"`
	// managedByTenants are the tenants that manage the subscription through Azure Lighthouse.
	// +optional
	// +listType=atomic
	ManagedByTenants []ARMManagedByTenant `json:"managedByTenants,omitempty" protobuf:"bytes,6,rep,name=managedByTenants"`
}

// ARMFeature is a preview feature registered on a subscription.
type ARMFeature struct {
	// name is the feature's name, e.g. Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// state is the feature's registration state, e.g. Registered.
	// +optional
	State string `json:"state,omitempty" protobuf:"bytes,2,opt,name=state"`
}

// ARMManagedByTenant is a tenant that manages a subscription.
type ARMManagedByTenant struct {
	// tenantID is the managing tenant.
	TenantID string `json:"tenantID" protobuf:"bytes,1,opt,name=tenantID"`
}

// ARMSubscriptionStatus reports what the service did about the subscription's state.
type ARMSubscriptionStatus struct {
	// conditions report ResourcesDeleted for a Deleted subscription: True once none of its HCPClusters is left.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,1,rep,name=conditions"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,2,opt,name=observedGeneration"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMSubscriptionList is a list of ARMSubscriptions.
type ARMSubscriptionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []ARMSubscription `json:"items" protobuf:"bytes,2,rep,name=items"`
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

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMOperation is one ARM asynchronous operation (a PUT, PATCH, DELETE or POST action of the ARM
// frontend), named after its operation ID. A controller keeps its status in step with the object it acts
// on; it is deleted 7 days after it was created, as ARM keeps operations.
type ARMOperation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec ARMOperationSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status ARMOperationStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// ARMOperationSpec says what the operation does and who asked. It cannot change once created.
type ARMOperationSpec struct {
	// request is Create, Update, Delete, RequestCredential or RevokeCredentials.
	Request ARMOperationRequest `json:"request" protobuf:"bytes,1,opt,name=request,casttype=ARMOperationRequest"`
	// resourceID is the ARM resource ID the operation acts on, as the caller spelled it.
	ResourceID string `json:"resourceID" protobuf:"bytes,2,opt,name=resourceID"`
	// subscriptionID is the subscription of resourceID, lowercased.
	SubscriptionID string `json:"subscriptionID" protobuf:"bytes,3,opt,name=subscriptionID"`
	// location is the region whose operation endpoints serve it.
	Location string `json:"location" protobuf:"bytes,4,opt,name=location"`
	// target is the object the operation follows.
	Target ARMOperationTarget `json:"target" protobuf:"bytes,5,opt,name=target"`
	// apiVersion is the ARM api-version the operation was started with.
	// +optional
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,6,opt,name=apiVersion"`
	// tenantID is the caller's home tenant (x-ms-home-tenant-id): only it may read the operation.
	// +optional
	TenantID string `json:"tenantID,omitempty" protobuf:"bytes,7,opt,name=tenantID"`
	// clientObjectID is the caller's object ID (x-ms-client-object-id): only it may read the operation.
	// +optional
	ClientObjectID string `json:"clientObjectID,omitempty" protobuf:"bytes,8,opt,name=clientObjectID"`
	// clientRequestID is the caller's x-ms-client-request-id.
	// +optional
	ClientRequestID string `json:"clientRequestID,omitempty" protobuf:"bytes,9,opt,name=clientRequestID"`
	// correlationRequestID is ARM's x-ms-correlation-request-id.
	// +optional
	CorrelationRequestID string `json:"correlationRequestID,omitempty" protobuf:"bytes,10,opt,name=correlationRequestID"`
	// notificationURI is ARM's Azure-AsyncNotificationUri, to be told when the operation ends.
	// +optional
	NotificationURI string `json:"notificationURI,omitempty" protobuf:"bytes,11,opt,name=notificationURI"`
}

// ARMOperationTarget names the object an operation follows.
type ARMOperationTarget struct {
	// resource is hcpclusters, nodepools or breakglasscredentials.
	Resource string `json:"resource" protobuf:"bytes,1,opt,name=resource"`
	// namespace is the object's namespace.
	Namespace string `json:"namespace" protobuf:"bytes,2,opt,name=namespace"`
	// name is the object's name.
	Name string `json:"name" protobuf:"bytes,3,opt,name=name"`
	// uid is the object's UID: an object of the same name made later is another one.
	UID types.UID `json:"uid" protobuf:"bytes,4,opt,name=uid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// generation is the object's generation the operation waits for (its metadata.generation after the write).
	// +optional
	Generation int64 `json:"generation,omitempty" protobuf:"varint,5,opt,name=generation"`
}

// ARMOperationStatus reports an operation as ARM's operation status endpoint does.
type ARMOperationStatus struct {
	// state is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled; the last three are final.
	// +optional
	State ARMOperationState `json:"state,omitempty" protobuf:"bytes,1,opt,name=state,casttype=ARMOperationState"`
	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,2,opt,name=lastTransitionTime"`
	// endTime is when the operation reached a final state.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty" protobuf:"bytes,3,opt,name=endTime"`
	// error says why a Failed or Canceled operation ended so.
	// +optional
	Error *ARMOperationError `json:"error,omitempty" protobuf:"bytes,4,opt,name=error"`
	// notificationTime is when ARM's notification URI was told that the operation ended.
	// +optional
	NotificationTime *metav1.Time `json:"notificationTime,omitempty" protobuf:"bytes,5,opt,name=notificationTime"`
}

// ARMOperationError is the error of a failed operation, as ARM's CloudError carries it.
type ARMOperationError struct {
	// code is the error's code, e.g. Canceled or InternalServerError.
	Code string `json:"code" protobuf:"bytes,1,opt,name=code"`
	// message says what went wrong.
	Message string `json:"message" protobuf:"bytes,2,opt,name=message"`
	// target is what the error is about, when it is about one field or object.
	// +optional
	Target string `json:"target,omitempty" protobuf:"bytes,3,opt,name=target"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMOperationList is a list of ARMOperations.
type ARMOperationList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []ARMOperation `json:"items" protobuf:"bytes,2,rep,name=items"`
}
