package validation

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// validHCPCluster is a defaulted cluster that sets every optional field.
func validHCPCluster() *hcp.HCPCluster {
	return &hcp.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cluster", Namespace: "team-a", ResourceVersion: "1"},
		Spec: hcp.HCPClusterSpec{
			Location: "eastus",
			Azure:    hcp.AzureResourceReference{SubscriptionID: testSubscription, ResourceGroup: "my-rg", TenantID: testTenant},
			Version:  hcp.VersionProfile{ID: "4.20", ChannelGroup: "stable"},
			DNS:      hcp.DNSProfile{BaseDomainPrefix: "mycluster"},
			Network: hcp.NetworkProfile{
				NetworkType: "OVNKubernetes",
				PodCIDR:     "10.128.0.0/14",
				ServiceCIDR: "172.30.0.0/16",
				MachineCIDR: "10.0.0.0/16",
				HostPrefix:  23,
			},
			API:     hcp.APIProfile{Visibility: "Public", AuthorizedCIDRs: []string{"192.0.2.0/24", "198.51.100.7"}},
			Ingress: hcp.IngressProfile{Type: "Public"},
			Platform: hcp.PlatformProfile{
				ManagedResourceGroup:    "aro-hcp-my-cluster-managed",
				SubnetID:                subnetID(testSubscription, "workers"),
				VnetIntegrationSubnetID: subnetID(testSubscription, "integration"),
				NetworkSecurityGroupID:  armID(testSubscription, "network-rg", "Microsoft.Network/networkSecurityGroups/nsg"),
				OutboundType:            "LoadBalancer",
				OperatorsAuthentication: hcp.OperatorsAuthenticationProfile{
					UserAssignedIdentities: hcp.UserAssignedIdentitiesProfile{
						ControlPlaneOperators:  map[string]string{"cloud-controller-manager": identityID("ccm"), "ingress": identityID("ingress")},
						DataPlaneOperators:     map[string]string{"disk-csi-driver": identityID("disk")},
						ServiceManagedIdentity: identityID("service"),
					},
				},
			},
			Identity: &hcp.ManagedServiceIdentity{
				Type:                   "UserAssigned",
				UserAssignedIdentities: map[string]hcp.UserAssignedIdentity{identityID("service"): {}},
			},
			Autoscaling: hcp.ClusterAutoscalingProfile{
				MaxNodesTotal:               ptr.To[int32](100),
				MaxPodGracePeriodSeconds:    ptr.To[int32](600),
				MaxNodeProvisionTimeSeconds: ptr.To[int32](900),
				PodPriorityThreshold:        ptr.To[int32](-10),
			},
			Etcd: hcp.EtcdProfile{DataEncryption: &hcp.EtcdDataEncryptionProfile{
				KeyManagementMode: "CustomerManaged",
				CustomerManaged: &hcp.CustomerManagedEncryptionProfile{
					EncryptionType: "KMS",
					KMS: &hcp.KMSEncryptionProfile{
						VaultName:  "my-vault",
						Visibility: "Public",
						ActiveKey:  hcp.KMSKey{Name: "etcd-key", Version: "0123456789abcdef"},
					},
				},
			}},
			ImageDigestMirrors:      []hcp.ImageDigestMirror{{Source: "quay.io/openshift-release-dev", Mirrors: []string{"mirror.example.com/ocp"}}},
			NodeDrainTimeoutMinutes: ptr.To[int32](30),
			ClusterImageRegistry:    hcp.ClusterImageRegistryProfile{State: "Enabled"},
			CryptoRestrictions:      "None",
		},
	}
}

func TestValidateHCPCluster(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *hcp.HCPCluster)
		want   []wantErr
	}{
		{name: "valid", mutate: func(c *hcp.HCPCluster) {}},
		{name: "valid without optional fields", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Azure.TenantID = ""
			c.Spec.DNS = hcp.DNSProfile{}
			c.Spec.API.AuthorizedCIDRs = nil
			c.Spec.Platform.ManagedResourceGroup = ""
			c.Spec.Platform.VnetIntegrationSubnetID = ""
			c.Spec.Platform.OperatorsAuthentication = hcp.OperatorsAuthenticationProfile{}
			c.Spec.Identity = nil
			c.Spec.Autoscaling = hcp.ClusterAutoscalingProfile{}
			c.Spec.Etcd = hcp.EtcdProfile{}
			c.Spec.ImageDigestMirrors = nil
			c.Spec.NodeDrainTimeoutMinutes = nil
		}},

		// metadata
		{name: "generated name", mutate: func(c *hcp.HCPCluster) { c.GenerateName, c.Name = "my-cluster-", "my-cluster-x7k2p" }},
		{name: "54 character name", mutate: func(c *hcp.HCPCluster) { c.Name = "c" + strings.Repeat("1", 53) }},
		{name: "no name", mutate: func(c *hcp.HCPCluster) { c.Name = "" }, want: []wantErr{required("metadata.name")}},
		{name: "55 character name", mutate: func(c *hcp.HCPCluster) { c.Name = "c" + strings.Repeat("1", 54) }, want: []wantErr{tooLong("metadata.name")}},
		{name: "name starts with a digit", mutate: func(c *hcp.HCPCluster) { c.Name = "1cluster" }, want: []wantErr{invalid("metadata.name")}},
		{name: "upper case name", mutate: func(c *hcp.HCPCluster) { c.Name = "My-Cluster" }, want: []wantErr{invalid("metadata.name")}},
		{name: "name ends with a dash", mutate: func(c *hcp.HCPCluster) { c.Name = "cluster-" }, want: []wantErr{invalid("metadata.name")}},
		{name: "name with a period", mutate: func(c *hcp.HCPCluster) { c.Name = "my.cluster" }, want: []wantErr{invalid("metadata.name")}},
		{name: "no namespace", mutate: func(c *hcp.HCPCluster) { c.Namespace = "" }, want: []wantErr{required("metadata.namespace")}},

		// location and azure
		{name: "no location", mutate: func(c *hcp.HCPCluster) { c.Spec.Location = "" }, want: []wantErr{required("spec.location")}},
		{name: "display name as location", mutate: func(c *hcp.HCPCluster) { c.Spec.Location = "East US" }, want: []wantErr{invalid("spec.location")}},
		{name: "no subscription", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.SubscriptionID = "" }, want: []wantErr{required("spec.azure.subscriptionID")}},
		{name: "subscription not a UUID", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.SubscriptionID = "my-subscription" }, want: []wantErr{invalid("spec.azure.subscriptionID")}},
		{name: "no resource group", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.ResourceGroup = "" }, want: []wantErr{required("spec.azure.resourceGroup")}},
		{name: "resource group too long", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.ResourceGroup = strings.Repeat("r", 91) }, want: []wantErr{tooLong("spec.azure.resourceGroup")}},
		{name: "resource group ends in a period", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.ResourceGroup = "my-rg." }, want: []wantErr{invalid("spec.azure.resourceGroup")}},
		{name: "tenant not a UUID", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.TenantID = "contoso" }, want: []wantErr{invalid("spec.azure.tenantID")}},

		// version
		{name: "no version", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ID = "" }, want: []wantErr{required("spec.version.id")}},
		{name: "version with patch", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ID = "4.20.8" }, want: []wantErr{invalid("spec.version.id")}},
		{name: "major version only", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ID = "4" }, want: []wantErr{invalid("spec.version.id")}},
		{name: "version not numeric", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ID = "4.x" }, want: []wantErr{invalid("spec.version.id")}},
		{name: "channel group fast", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ChannelGroup = "fast" }},
		{name: "unknown channel group", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ChannelGroup = "beta" }, want: []wantErr{notSupported("spec.version.channelGroup")}},
		{name: "no channel group", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ChannelGroup = "" }, want: []wantErr{required("spec.version.channelGroup")}},

		// dns
		{name: "15 character base domain prefix", mutate: func(c *hcp.HCPCluster) { c.Spec.DNS.BaseDomainPrefix = "a" + strings.Repeat("0", 14) }},
		{name: "16 character base domain prefix", mutate: func(c *hcp.HCPCluster) { c.Spec.DNS.BaseDomainPrefix = "a" + strings.Repeat("0", 15) }, want: []wantErr{tooLong("spec.dns.baseDomainPrefix")}},
		{name: "base domain prefix starts with a digit", mutate: func(c *hcp.HCPCluster) { c.Spec.DNS.BaseDomainPrefix = "1abc" }, want: []wantErr{invalid("spec.dns.baseDomainPrefix")}},
		{name: "base domain prefix upper case", mutate: func(c *hcp.HCPCluster) { c.Spec.DNS.BaseDomainPrefix = "Abc" }, want: []wantErr{invalid("spec.dns.baseDomainPrefix")}},
		{name: "base domain prefix ends with a dash", mutate: func(c *hcp.HCPCluster) { c.Spec.DNS.BaseDomainPrefix = "abc-" }, want: []wantErr{invalid("spec.dns.baseDomainPrefix")}},

		// network
		{name: "network type Other", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.NetworkType = "Other" }},
		{name: "unknown network type", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.NetworkType = "Calico" }, want: []wantErr{notSupported("spec.network.networkType")}},
		{name: "pod CIDR without prefix", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.PodCIDR = "10.128.0.0" }, want: []wantErr{invalid("spec.network.podCIDR")}},
		{name: "IPv6 service CIDR", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.ServiceCIDR = "fd02::/112" }, want: []wantErr{invalid("spec.network.serviceCIDR")}},
		{name: "machine CIDR with host bits", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.MachineCIDR = "10.0.0.1/16" }, want: []wantErr{invalid("spec.network.machineCIDR")}},
		{name: "no machine CIDR", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.MachineCIDR = "" }, want: []wantErr{required("spec.network.machineCIDR")}},
		{name: "service CIDR inside pod CIDR", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.ServiceCIDR = "10.130.0.0/16" }, want: []wantErr{invalid("spec.network")}},
		{name: "machine CIDR around service CIDR", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.MachineCIDR = "172.16.0.0/12" }, want: []wantErr{invalid("spec.network")}},
		{name: "all three ranges the same", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Network.ServiceCIDR, c.Spec.Network.MachineCIDR = c.Spec.Network.PodCIDR, c.Spec.Network.PodCIDR
		}, want: []wantErr{invalid("spec.network"), invalid("spec.network"), invalid("spec.network")}},
		{name: "adjacent ranges", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.MachineCIDR = "10.132.0.0/16" }},
		{name: "host prefix 26", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.HostPrefix = 26 }},
		{name: "host prefix 22", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.HostPrefix = 22 }, want: []wantErr{invalid("spec.network.hostPrefix")}},
		{name: "host prefix 27", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.HostPrefix = 27 }, want: []wantErr{invalid("spec.network.hostPrefix")}},
		{name: "pod CIDR as small as one node", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.PodCIDR = "10.128.0.0/23" }, want: []wantErr{invalid("spec.network.podCIDR")}},
		{name: "pod CIDR for two nodes", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.PodCIDR = "10.128.0.0/22" }},

		// api and ingress
		{name: "private API", mutate: func(c *hcp.HCPCluster) { c.Spec.API.Visibility = "Private" }},
		{name: "unknown API visibility", mutate: func(c *hcp.HCPCluster) { c.Spec.API.Visibility = "Internal" }, want: []wantErr{notSupported("spec.api.visibility")}},
		{name: "empty authorized CIDRs", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs = []string{} }, want: []wantErr{required("spec.api.authorizedCIDRs")}},
		{name: "500 authorized CIDRs", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs = distinctAddresses(500) }},
		{name: "501 authorized CIDRs", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs = distinctAddresses(501) }, want: []wantErr{tooMany("spec.api.authorizedCIDRs")}},
		{name: "all addresses", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs = []string{"0.0.0.0/0"} }},
		{name: "authorized host name", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs[1] = "example.com" }, want: []wantErr{invalid("spec.api.authorizedCIDRs[1]")}},
		{name: "authorized IPv6 address", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs[1] = "2001:db8::1" }, want: []wantErr{invalid("spec.api.authorizedCIDRs[1]")}},
		{name: "authorized CIDR with host bits", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs[0] = "192.0.2.1/24" }, want: []wantErr{invalid("spec.api.authorizedCIDRs[0]")}},
		{name: "duplicate authorized CIDR", mutate: func(c *hcp.HCPCluster) {
			c.Spec.API.AuthorizedCIDRs = append(c.Spec.API.AuthorizedCIDRs, "192.0.2.0/24")
		}, want: []wantErr{duplicate("spec.api.authorizedCIDRs[2]")}},
		{name: "address and its /32", mutate: func(c *hcp.HCPCluster) {
			c.Spec.API.AuthorizedCIDRs = append(c.Spec.API.AuthorizedCIDRs, "198.51.100.7/32")
		}, want: []wantErr{duplicate("spec.api.authorizedCIDRs[2]")}},
		{name: "ingress disabled", mutate: func(c *hcp.HCPCluster) { c.Spec.Ingress.Type = "Disabled" }},
		{name: "unknown ingress type", mutate: func(c *hcp.HCPCluster) { c.Spec.Ingress.Type = "External" }, want: []wantErr{notSupported("spec.ingress.type")}},

		// platform
		{name: "no subnet", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = "" }, want: []wantErr{required("spec.platform.subnetID")}},
		{name: "subnet name instead of ID", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = "workers" }, want: []wantErr{invalid("spec.platform.subnetID")}},
		{name: "virtual network instead of subnet", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.SubnetID = armID(testSubscription, "network-rg", "Microsoft.Network/virtualNetworks/vnet")
		}, want: []wantErr{invalid("spec.platform.subnetID")}},
		{name: "subnet in another subscription", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = subnetID(otherSubscription, "workers") }, want: []wantErr{invalid("spec.platform.subnetID")}},
		{name: "subnet subscription in upper case", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.SubnetID = subnetID(strings.ToUpper(testSubscription), "workers")
		}},
		{name: "subnet subscription not compared when the cluster's is invalid", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.SubscriptionID = "x" }, want: []wantErr{invalid("spec.azure.subscriptionID")}},
		{name: "integration subnet is the worker subnet", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.VnetIntegrationSubnetID = strings.ToUpper(c.Spec.Platform.SubnetID)
		}, want: []wantErr{invalid("spec.platform.vnetIntegrationSubnetID")}},
		{name: "integration subnet in another subscription", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.VnetIntegrationSubnetID = subnetID(otherSubscription, "integration")
		}, want: []wantErr{invalid("spec.platform.vnetIntegrationSubnetID")}},
		{name: "integration subnet not a subnet", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.VnetIntegrationSubnetID = identityID("x") }, want: []wantErr{invalid("spec.platform.vnetIntegrationSubnetID")}},
		{name: "no network security group", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.NetworkSecurityGroupID = "" }, want: []wantErr{required("spec.platform.networkSecurityGroupID")}},
		{name: "subnet as network security group", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.NetworkSecurityGroupID = subnetID(testSubscription, "workers")
		}, want: []wantErr{invalid("spec.platform.networkSecurityGroupID")}},
		{name: "user defined routing", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.OutboundType = "UserDefinedRouting" }, want: []wantErr{notSupported("spec.platform.outboundType")}},
		{name: "managed resource group is the cluster's", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "MY-RG" }, want: []wantErr{invalid("spec.platform.managedResourceGroup")}},
		{name: "managed resource group with a slash", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "a/b" }, want: []wantErr{invalid("spec.platform.managedResourceGroup")}},
		{name: "control plane operator identity not an ID", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators["ingress"] = "ingress-identity"
		}, want: []wantErr{invalid("spec.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators[ingress]")}},
		{name: "data plane operator identity of another type", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.DataPlaneOperators["disk-csi-driver"] = subnetID(testSubscription, "x")
		}, want: []wantErr{invalid("spec.platform.operatorsAuthentication.userAssignedIdentities.dataPlaneOperators[disk-csi-driver]")}},
		{name: "operator identity as extension resource", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.DataPlaneOperators["disk-csi-driver"] =
				identityID("a") + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/b"
		}, want: []wantErr{invalid("spec.platform.operatorsAuthentication.userAssignedIdentities.dataPlaneOperators[disk-csi-driver]")}},
		{name: "empty operator name", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators[""] = identityID("x")
		}, want: []wantErr{invalid("spec.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators")}},
		{name: "operator name with an underscore", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.DataPlaneOperators["image_registry"] = identityID("x")
		}, want: []wantErr{invalid("spec.platform.operatorsAuthentication.userAssignedIdentities.dataPlaneOperators")}},
		{name: "service managed identity not an ID", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ServiceManagedIdentity = "service"
		}, want: []wantErr{invalid("spec.platform.operatorsAuthentication.userAssignedIdentities.serviceManagedIdentity")}},

		// identity
		{name: "system and user assigned identity", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity.Type = "SystemAssigned,UserAssigned" }},
		{name: "no identity type", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity.Type = "" }, want: []wantErr{required("spec.identity.type")}},
		{name: "unknown identity type", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity.Type = "Managed" }, want: []wantErr{notSupported("spec.identity.type")}},
		{name: "user identities with system assigned type", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity.Type = "SystemAssigned" }, want: []wantErr{forbidden("spec.identity.userAssignedIdentities")}},
		{name: "system assigned identity alone", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity = &hcp.ManagedServiceIdentity{Type: "SystemAssigned"} }},
		{name: "no identity", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity = &hcp.ManagedServiceIdentity{Type: "None"} }},
		// ARO HCP accepts a cluster whose operators have no identities yet.
		{name: "user assigned type without identities", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity.UserAssignedIdentities = nil }},
		{name: "user assigned identity key not an ID", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Identity.UserAssignedIdentities["service"] = hcp.UserAssignedIdentity{}
		}, want: []wantErr{invalid("spec.identity.userAssignedIdentities[service]")}},

		// autoscaling
		{name: "max nodes 0", mutate: func(c *hcp.HCPCluster) { c.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](0) }},
		{name: "max nodes 501", mutate: func(c *hcp.HCPCluster) { c.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](501) }, want: []wantErr{invalid("spec.autoscaling.maxNodesTotal")}},
		{name: "negative max nodes", mutate: func(c *hcp.HCPCluster) { c.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.autoscaling.maxNodesTotal")}},
		{name: "negative grace period", mutate: func(c *hcp.HCPCluster) { c.Spec.Autoscaling.MaxPodGracePeriodSeconds = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.autoscaling.maxPodGracePeriodSeconds")}},
		{name: "negative provision time", mutate: func(c *hcp.HCPCluster) { c.Spec.Autoscaling.MaxNodeProvisionTimeSeconds = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.autoscaling.maxNodeProvisionTimeSeconds")}},

		// etcd
		{name: "unknown key management mode", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.KeyManagementMode = "PlatformManaged" }, want: []wantErr{notSupported("spec.etcd.dataEncryption.keyManagementMode")}},
		{name: "customer managed without details", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged = nil }, want: []wantErr{required("spec.etcd.dataEncryption.customerManaged")}},
		{name: "unknown encryption type", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.EncryptionType = "AES" }, want: []wantErr{notSupported("spec.etcd.dataEncryption.customerManaged.encryptionType")}},
		{name: "KMS without details", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS = nil }, want: []wantErr{required("spec.etcd.dataEncryption.customerManaged.kms")}},
		{name: "no vault name", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.VaultName = "" }, want: []wantErr{required("spec.etcd.dataEncryption.customerManaged.kms.vaultName")}},
		{name: "vault name too long", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.VaultName = strings.Repeat("v", 256)
		}, want: []wantErr{tooLong("spec.etcd.dataEncryption.customerManaged.kms.vaultName")}},
		{name: "no vault visibility", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.Visibility = "" }, want: []wantErr{required("spec.etcd.dataEncryption.customerManaged.kms.visibility")}},
		{name: "unknown vault visibility", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.Visibility = "Hidden" }, want: []wantErr{notSupported("spec.etcd.dataEncryption.customerManaged.kms.visibility")}},
		{name: "no key name", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Name = "" }, want: []wantErr{required("spec.etcd.dataEncryption.customerManaged.kms.activeKey.name")}},
		{name: "no key version", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Version = "" }, want: []wantErr{required("spec.etcd.dataEncryption.customerManaged.kms.activeKey.version")}},
		{name: "key version too long", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Version = strings.Repeat("0", 256)
		}, want: []wantErr{tooLong("spec.etcd.dataEncryption.customerManaged.kms.activeKey.version")}},

		// image digest mirrors
		{name: "240 image digest mirrors", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors = imageDigestMirrors(240) }},
		{name: "241 image digest mirrors", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors = imageDigestMirrors(241) }, want: []wantErr{tooMany("spec.imageDigestMirrors")}},
		{name: "mirror without source", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors[0].Source = "" }, want: []wantErr{required("spec.imageDigestMirrors[0].source")}},
		{name: "source too long", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors[0].Source = strings.Repeat("s", 256) }, want: []wantErr{tooLong("spec.imageDigestMirrors[0].source")}},
		{name: "source without mirrors", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors[0].Mirrors = nil }, want: []wantErr{required("spec.imageDigestMirrors[0].mirrors")}},
		{name: "256 mirrors", mutate: func(c *hcp.HCPCluster) {
			c.Spec.ImageDigestMirrors[0].Mirrors = make([]string, 256)
			for i := range c.Spec.ImageDigestMirrors[0].Mirrors {
				c.Spec.ImageDigestMirrors[0].Mirrors[i] = fmt.Sprintf("mirror%d.example.com", i)
			}
		}, want: []wantErr{tooMany("spec.imageDigestMirrors[0].mirrors")}},
		{name: "empty mirror", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors[0].Mirrors[0] = "" }, want: []wantErr{required("spec.imageDigestMirrors[0].mirrors[0]")}},
		{name: "mirror too long", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors[0].Mirrors[0] = strings.Repeat("m", 256) }, want: []wantErr{tooLong("spec.imageDigestMirrors[0].mirrors[0]")}},

		// the rest
		{name: "drain timeout one week", mutate: func(c *hcp.HCPCluster) { c.Spec.NodeDrainTimeoutMinutes = ptr.To[int32](10080) }},
		{name: "drain timeout over a week", mutate: func(c *hcp.HCPCluster) { c.Spec.NodeDrainTimeoutMinutes = ptr.To[int32](10081) }, want: []wantErr{invalid("spec.nodeDrainTimeoutMinutes")}},
		{name: "negative drain timeout", mutate: func(c *hcp.HCPCluster) { c.Spec.NodeDrainTimeoutMinutes = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.nodeDrainTimeoutMinutes")}},
		{name: "image registry disabled", mutate: func(c *hcp.HCPCluster) { c.Spec.ClusterImageRegistry.State = "Disabled" }},
		{name: "unknown image registry state", mutate: func(c *hcp.HCPCluster) { c.Spec.ClusterImageRegistry.State = "Removed" }, want: []wantErr{notSupported("spec.clusterImageRegistry.state")}},
		{name: "FIPS", mutate: func(c *hcp.HCPCluster) { c.Spec.CryptoRestrictions = "FIPS" }},
		{name: "lower case fips", mutate: func(c *hcp.HCPCluster) { c.Spec.CryptoRestrictions = "fips" }, want: []wantErr{notSupported("spec.cryptoRestrictions")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validHCPCluster()
			tc.mutate(c)
			expectErrors(t, ValidateHCPCluster(c), tc.want...)
		})
	}
}

func TestValidateHCPClusterMessages(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *hcp.HCPCluster)
		want   []string
	}{
		{"ingress types", func(c *hcp.HCPCluster) { c.Spec.Ingress.Type = "External" }, []string{`"Public", "Private", "Disabled"`}},
		{"channel groups", func(c *hcp.HCPCluster) { c.Spec.Version.ChannelGroup = "beta" }, []string{`"stable", "fast", "candidate", "nightly"`}},
		{"identity types", func(c *hcp.HCPCluster) { c.Spec.Identity.Type = "" }, []string{`"None", "SystemAssigned", "UserAssigned", "SystemAssigned,UserAssigned"`}},
		{"host prefix", func(c *hcp.HCPCluster) { c.Spec.Network.HostPrefix = 27 }, []string{"must be less than or equal to 26"}},
		{"CIDR", func(c *hcp.HCPCluster) { c.Spec.Network.PodCIDR = "10.128.0.0" }, []string{"must be an IPv4 CIDR such as 10.0.0.0/16"}},
		{"overlap", func(c *hcp.HCPCluster) { c.Spec.Network.MachineCIDR = "172.30.128.0/17" }, []string{"machine CIDR '172.30.128.0/17' and service CIDR '172.30.0.0/16' overlap"}},
		{"room for nodes", func(c *hcp.HCPCluster) { c.Spec.Network.PodCIDR = "10.128.0.0/24" }, []string{"less than spec.network.hostPrefix (23)"}},
		{"subnet type", func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = "workers" }, []string{"Microsoft.Network/virtualNetworks/subnets"}},
		{"managed resource group", func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "my-rg" }, []string{`must not be the same resource group name: "my-rg"`}},
		{"subnet in the managed resource group", func(c *hcp.HCPCluster) {
			c.Spec.Platform.ManagedResourceGroup = strings.Split(c.Spec.Platform.SubnetID, "/")[4]
			c.Spec.Platform.VnetIntegrationSubnetID = ""
		}, []string{"spec.platform.subnetID: Invalid value", "must not be the same resource group name: "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validHCPCluster()
			tc.mutate(c)
			expectDetail(t, ValidateHCPCluster(c), tc.want...)
		})
	}
}

func TestValidateHCPClusterUpdate(t *testing.T) {
	const kms = "spec.etcd.dataEncryption.customerManaged.kms"
	tests := []struct {
		name   string
		mutate func(c *hcp.HCPCluster)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(c *hcp.HCPCluster) {}},
		{name: "labels", mutate: func(c *hcp.HCPCluster) { c.Labels = map[string]string{"team": "a"} }},
		{name: "version", mutate: func(c *hcp.HCPCluster) { c.Spec.Version = hcp.VersionProfile{ID: "4.21", ChannelGroup: "fast"} }},
		{name: "authorized CIDRs", mutate: func(c *hcp.HCPCluster) { c.Spec.API.AuthorizedCIDRs = []string{"203.0.113.0/24"} }},
		{name: "operator identities", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators["ingress"] = identityID("ingress-2")
		}},
		{name: "cluster identity", mutate: func(c *hcp.HCPCluster) { c.Spec.Identity = nil }},
		{name: "autoscaling", mutate: func(c *hcp.HCPCluster) { c.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](200) }},
		{name: "key version", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Version = "fedcba9876543210"
		}},
		{name: "image digest mirrors", mutate: func(c *hcp.HCPCluster) { c.Spec.ImageDigestMirrors = nil }},
		{name: "drain timeout", mutate: func(c *hcp.HCPCluster) { c.Spec.NodeDrainTimeoutMinutes = ptr.To[int32](60) }},

		{name: "create rules still apply", mutate: func(c *hcp.HCPCluster) { c.Spec.Version.ID = "4" }, want: []wantErr{invalid("spec.version.id")}},
		{name: "no resource version", mutate: func(c *hcp.HCPCluster) { c.ResourceVersion = "" }, want: []wantErr{invalid("metadata.resourceVersion")}},
		{name: "location", mutate: func(c *hcp.HCPCluster) { c.Spec.Location = "westus" }, want: []wantErr{invalid("spec.location")}},
		{name: "resource group", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.ResourceGroup = "other-rg" }, want: []wantErr{invalid("spec.azure")}},
		{name: "tenant", mutate: func(c *hcp.HCPCluster) { c.Spec.Azure.TenantID = "" }, want: []wantErr{invalid("spec.azure")}},
		{name: "base domain prefix", mutate: func(c *hcp.HCPCluster) { c.Spec.DNS.BaseDomainPrefix = "other" }, want: []wantErr{invalid("spec.dns")}},
		{name: "pod CIDR", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.PodCIDR = "10.132.0.0/14" }, want: []wantErr{invalid("spec.network")}},
		{name: "host prefix", mutate: func(c *hcp.HCPCluster) { c.Spec.Network.HostPrefix = 24 }, want: []wantErr{invalid("spec.network")}},
		{name: "API visibility", mutate: func(c *hcp.HCPCluster) { c.Spec.API.Visibility = "Private" }, want: []wantErr{invalid("spec.api.visibility")}},
		{name: "ingress", mutate: func(c *hcp.HCPCluster) { c.Spec.Ingress.Type = "Private" }, want: []wantErr{invalid("spec.ingress")}},
		{name: "managed resource group", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "other" }, want: []wantErr{invalid("spec.platform.managedResourceGroup")}},
		{name: "subnet", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = subnetID(testSubscription, "other") }, want: []wantErr{invalid("spec.platform.subnetID")}},
		{name: "integration subnet", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.VnetIntegrationSubnetID = "" }, want: []wantErr{invalid("spec.platform.vnetIntegrationSubnetID")}},
		{name: "network security group", mutate: func(c *hcp.HCPCluster) {
			c.Spec.Platform.NetworkSecurityGroupID = armID(testSubscription, "network-rg", "Microsoft.Network/networkSecurityGroups/other")
		}, want: []wantErr{invalid("spec.platform.networkSecurityGroupID")}},
		{name: "outbound type", mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.OutboundType = "" }, want: []wantErr{required("spec.platform.outboundType"), invalid("spec.platform.outboundType")}},
		{name: "image registry", mutate: func(c *hcp.HCPCluster) { c.Spec.ClusterImageRegistry.State = "Disabled" }, want: []wantErr{invalid("spec.clusterImageRegistry")}},
		{name: "crypto restrictions", mutate: func(c *hcp.HCPCluster) { c.Spec.CryptoRestrictions = "FIPS" }, want: []wantErr{invalid("spec.cryptoRestrictions")}},
		{name: "etcd encryption removed", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption = nil }, want: []wantErr{forbidden("spec.etcd.dataEncryption")}},
		{name: "key management mode", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.KeyManagementMode = "PlatformManaged" }, want: []wantErr{
			notSupported("spec.etcd.dataEncryption.keyManagementMode"), invalid("spec.etcd.dataEncryption.keyManagementMode"),
		}},
		{name: "encryption type", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.EncryptionType = "AES" }, want: []wantErr{
			notSupported("spec.etcd.dataEncryption.customerManaged.encryptionType"), invalid("spec.etcd.dataEncryption.customerManaged.encryptionType"),
		}},
		{name: "vault", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.VaultName = "other" }, want: []wantErr{invalid(kms + ".vaultName")}},
		{name: "vault visibility", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.Visibility = "Private" }, want: []wantErr{invalid(kms + ".visibility")}},
		{name: "key name", mutate: func(c *hcp.HCPCluster) { c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Name = "other" }, want: []wantErr{invalid(kms + ".activeKey.name")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldC, newC := validHCPCluster(), validHCPCluster()
			tc.mutate(newC)
			expectErrors(t, ValidateHCPClusterUpdate(newC, oldC), tc.want...)
		})
	}

	// The identities' data plane URL is kept from the create on: set once, never changed.
	const identityURL = "https://identity.example.com/subscriptions/x/identities"
	for _, tc := range []struct {
		name, old, new string
		want           []wantErr
	}{
		{name: "set on a cluster without one", new: identityURL},
		{name: "kept", old: identityURL, new: identityURL},
		{name: "changed", old: identityURL, new: identityURL + "/other", want: []wantErr{invalid("spec.platform.operatorsAuthentication.managedIdentitiesDataPlaneIdentityURL")}},
		{name: "removed", old: identityURL, want: []wantErr{invalid("spec.platform.operatorsAuthentication.managedIdentitiesDataPlaneIdentityURL")}},
		{name: "not https", new: "http://identity.example.com", want: []wantErr{invalid("spec.platform.operatorsAuthentication.managedIdentitiesDataPlaneIdentityURL")}},
	} {
		t.Run("identity URL "+tc.name, func(t *testing.T) {
			oldC, newC := validHCPCluster(), validHCPCluster()
			oldC.Spec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL = tc.old
			newC.Spec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL = tc.new
			expectErrors(t, ValidateHCPClusterUpdate(newC, oldC), tc.want...)
		})
	}

	t.Run("etcd encryption added", func(t *testing.T) {
		oldC, newC := validHCPCluster(), validHCPCluster()
		oldC.Spec.Etcd.DataEncryption = nil
		expectErrors(t, ValidateHCPClusterUpdate(newC, oldC), forbidden("spec.etcd.dataEncryption"))
	})
	t.Run("immutable message", func(t *testing.T) {
		oldC, newC := validHCPCluster(), validHCPCluster()
		newC.Spec.Location = "westus"
		expectDetail(t, ValidateHCPClusterUpdate(newC, oldC), "field is immutable")
	})
}

func TestValidateHCPClusterStatusUpdate(t *testing.T) {
	const clusterID = "2f1f7b4c-9c1e-4c5a-8d1e-3b2a1c0d9e8f"
	withStatus := func() *hcp.HCPCluster {
		c := validHCPCluster()
		c.Status = hcp.HCPClusterStatus{
			ProvisioningState:  hcp.ProvisioningStateSucceeded,
			Conditions:         []metav1.Condition{condition("Placed", metav1.ConditionTrue), condition("Available", metav1.ConditionTrue)},
			ObservedGeneration: 1,
			ClusterID:          clusterID,
		}
		return c
	}
	tests := []struct {
		name      string
		mutateOld func(c *hcp.HCPCluster)
		mutate    func(c *hcp.HCPCluster)
		want      []wantErr
	}{
		{name: "unchanged"},
		{name: "new state", mutate: func(c *hcp.HCPCluster) { c.Status.ProvisioningState = hcp.ProvisioningStateUpdating }},
		{name: "no state", mutate: func(c *hcp.HCPCluster) { c.Status.ProvisioningState = "" }},
		{name: "unknown state", mutate: func(c *hcp.HCPCluster) { c.Status.ProvisioningState = "Done" }, want: []wantErr{notSupported("status.provisioningState")}},
		{name: "condition without reason", mutate: func(c *hcp.HCPCluster) { c.Status.Conditions[1].Reason = "" }, want: []wantErr{required("status.conditions[1].reason")}},
		{name: "duplicate condition", mutate: func(c *hcp.HCPCluster) { c.Status.Conditions[1].Type = "Placed" }, want: []wantErr{duplicate("status.conditions[1]")}},
		{name: "negative observed generation", mutate: func(c *hcp.HCPCluster) { c.Status.ObservedGeneration = -1 }, want: []wantErr{invalid("status.observedGeneration")}},
		{name: "cluster ID assigned", mutateOld: func(c *hcp.HCPCluster) { c.Status.ClusterID = "" }},
		{name: "cluster ID not a UUID", mutateOld: func(c *hcp.HCPCluster) { c.Status.ClusterID = "" }, mutate: func(c *hcp.HCPCluster) { c.Status.ClusterID = "cluster-1" }, want: []wantErr{invalid("status.clusterID")}},
		{name: "cluster ID changed", mutate: func(c *hcp.HCPCluster) { c.Status.ClusterID = testTenant }, want: []wantErr{invalid("status.clusterID")}},
		{name: "cluster ID cleared", mutate: func(c *hcp.HCPCluster) { c.Status.ClusterID = "" }, want: []wantErr{invalid("status.clusterID")}},
		{name: "name changed", mutate: func(c *hcp.HCPCluster) { c.Name = "other" }, want: []wantErr{invalid("metadata.name")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldC, newC := withStatus(), withStatus()
			if tc.mutateOld != nil {
				tc.mutateOld(oldC)
			}
			if tc.mutate != nil {
				tc.mutate(newC)
			}
			expectErrors(t, ValidateHCPClusterStatusUpdate(newC, oldC), tc.want...)
		})
	}
}

func distinctAddresses(n int) []string {
	addresses := make([]string, n)
	for i := range addresses {
		addresses[i] = fmt.Sprintf("10.1.%d.%d", i/256, i%256)
	}
	return addresses
}

func imageDigestMirrors(n int) []hcp.ImageDigestMirror {
	mirrors := make([]hcp.ImageDigestMirror, n)
	for i := range mirrors {
		mirrors[i] = hcp.ImageDigestMirror{Source: fmt.Sprintf("registry%d.example.com", i), Mirrors: []string{"mirror.example.com"}}
	}
	return mirrors
}

// BenchmarkValidateHCPCluster is what validation costs a create of a cluster that sets every field.
func BenchmarkValidateHCPCluster(b *testing.B) {
	c := validHCPCluster()
	b.ReportAllocs()
	for b.Loop() {
		if errs := ValidateHCPCluster(c); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
