package hcpcluster

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

var platformPath = field.NewPath("spec", "platform")

// uniqueInfrastructure is the Azure infrastructure a cluster uses alone. The service programs rules
// into the subnet and the network security group and owns everything in the managed resource group,
// so two clusters sharing one would overwrite, and on deletion destroy, each other's resources.
// Azure IDs and names are case-insensitive. Subnet and network security group IDs are full ARM IDs,
// unique across subscriptions; a managed resource group's name is unique within its subscription.
// All three are immutable, so they are claimed on create and given back on delete.
var uniqueInfrastructure = []hcpregistry.UniqueValue[*hcp.HCPCluster]{
	{
		Space: "subnet", Path: platformPath.Child("subnetID"), Rule: "a subnet can serve one cluster only",
		Of: func(c *hcp.HCPCluster) (string, string) {
			return strings.ToLower(c.Spec.Platform.SubnetID), c.Spec.Platform.SubnetID
		},
	},
	{
		Space: "network-security-group", Path: platformPath.Child("networkSecurityGroupID"),
		Rule: "a network security group can serve one cluster only",
		Of: func(c *hcp.HCPCluster) (string, string) {
			return strings.ToLower(c.Spec.Platform.NetworkSecurityGroupID), c.Spec.Platform.NetworkSecurityGroupID
		},
	},
	{
		Space: "managed-resource-group", Path: platformPath.Child("managedResourceGroup"),
		Rule: "a managed resource group can serve one cluster only",
		Of: func(c *hcp.HCPCluster) (string, string) {
			mrg := c.Spec.Platform.ManagedResourceGroup
			if mrg == "" {
				return "", ""
			}
			return strings.ToLower(c.Spec.Azure.SubscriptionID + "/" + mrg), mrg
		},
	},
}
