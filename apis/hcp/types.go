package hcp

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
	// ProvisioningStateAwaitingSecret is an ExternalAuth's: delivered, and waiting for the secret of a
	// confidential client in the hosted cluster.
	ProvisioningStateAwaitingSecret ProvisioningState = "AwaitingSecret"
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

// Conditions of an HCPCluster's Azure side, which the service provisions when it runs with
// --azure-config. A cluster is delivered once its identities are valid and its managed resource group
// is ready, and is Succeeded only once its DNS records are written too.
const (
	// ConditionAzureIdentitiesValid is True once every managed identity the cluster names exists and
	// its control plane's identities hold the roles the service requires on its network.
	ConditionAzureIdentitiesValid = "AzureIdentitiesValid"
	// ConditionManagedResourceGroupReady is True once the cluster's managed resource group exists,
	// made and tagged by the service for this cluster.
	ConditionManagedResourceGroupReady = "ManagedResourceGroupReady"
	// ConditionDNSReady is True once the records of the cluster's API and applications (*.apps) in the
	// service's regional DNS zone point at the addresses its management cluster reports for them.
	ConditionDNSReady = "DNSReady"
	// ReasonAwaitingAddresses is the reason of DNSReady, False, until the management cluster reports the
	// addresses the cluster's names are to resolve to.
	ReasonAwaitingAddresses = "AwaitingAddresses"
	// ReasonAzureDisabled is the reason of the three conditions above, True, when the server runs
	// without --azure-config: it provisions nothing in Azure and checks nothing there.
	ReasonAzureDisabled = "AzureDisabled"
	// ReasonAwaitingAzure is the reason of Delivered while a cluster's first delivery waits for the
	// identities and the managed resource group.
	ReasonAwaitingAzure = "AwaitingAzure"
)

// ReasonNoManagementCluster is the reason of Placed, False, while no management cluster can take the
// cluster. A new cluster is stored with it, so that one nothing can place costs no status write.
const ReasonNoManagementCluster = "NoManagementCluster"

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

// ManagedResourceGroupFinalizer keeps a deleted HCPCluster until its managed resource group is deleted,
// which waits for its control plane to be gone. It is on the clusters of a service that provisions
// Azure (--azure-config).
const ManagedResourceGroupFinalizer = "hcp.aro.azure.com/managed-resource-group"

// DNSFinalizer keeps a deleted HCPCluster until the DNS records the service wrote for it are deleted. It is
// on the clusters of a service that provisions Azure (--azure-config).
const DNSFinalizer = "hcp.aro.azure.com/dns-records"

// ExperimentalFeaturesAnnotation, set to "true" on an HCPCluster, lets it use the candidate and
// nightly channel groups.
const ExperimentalFeaturesAnnotation = "hcp.aro.azure.com/experimental-features"

// ARMOperationAnnotation, on the create of an HCPCluster, NodePool, ExternalAuth or BreakglassCredential,
// asks the server to create the ARMOperation it holds (JSON of an ARMOperation: its name, labels and spec)
// in the create's own write, following the new object: the ARM frontend records a create's operation so.
// The caller must be allowed to create ARMOperations. The annotation is never stored.
const ARMOperationAnnotation = "hcp.aro.azure.com/arm-operation"

// ARMSubscriptionVersionAnnotation, beside ARMOperationAnnotation, holds the resourceVersion of the
// operation's ARMSubscription at which the caller found the subscription's state to allow the create: the
// server writes the create only while the subscription is still at that version, in the same write, and
// answers 409 Conflict (for armsubscriptions) otherwise. The ARM frontend so checks a subscription from its
// cache and still never creates in a subscription whose state ARM has just changed. Never stored.
const ARMSubscriptionVersionAnnotation = "hcp.aro.azure.com/arm-subscription-version"
