package hcpcluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME VERSION STATE MGMT-CLUSTER AGE, and with -o wide also
// LOCATION CHANNEL CLUSTER-ID API-URL.
var tableConvertor = hcpregistry.TableConvertor[*hcp.HCPCluster]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Version", Type: "string", Description: "The running OpenShift version, or the requested one until it runs."},
		{Name: "State", Type: "string", Description: "The provisioning state."},
		{Name: "Mgmt-Cluster", Type: "string", Description: "The management cluster the control plane runs on."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Location", Type: "string", Description: "The Azure region."},
		{Name: "Channel", Type: "string", Description: "The version channel group."},
		{Name: "Cluster-ID", Type: "string", Description: "The ID the service assigned."},
		{Name: "API-URL", Type: "string", Description: "The API server URL."},
	},
	Cells: func(c *hcp.HCPCluster) (cells, wide []interface{}) {
		version := c.Status.Version.Actual
		if version == "" {
			version = c.Spec.Version.ID
		}
		return []interface{}{
				version,
				hcpregistry.OrNone(string(c.Status.ProvisioningState)),
				hcpregistry.OrNone(c.Status.ManagementCluster),
			}, []interface{}{
				c.Spec.Location,
				c.Spec.Version.ChannelGroup,
				hcpregistry.OrNone(c.Status.ClusterID),
				hcpregistry.OrNone(c.Status.API.URL),
			}
	},
}
