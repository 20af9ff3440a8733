package nodepool

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME CLUSTER VERSION REPLICAS STATE AGE, and with -o wide also
// VM-SIZE ZONE CURRENT UPGRADE-TYPE.
var tableConvertor = hcpregistry.TableConvertor[*hcp.NodePool]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The HCPCluster the pool belongs to."},
		{Name: "Version", Type: "string", Description: "The nodes' OpenShift version."},
		{Name: "Replicas", Type: "string", Description: "The node count asked for: a number, or min-max when autoscaled."},
		{Name: "State", Type: "string", Description: "The provisioning state."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "VM-Size", Type: "string", Description: "The Azure VM size."},
		{Name: "Zone", Type: "string", Description: "The availability zone."},
		{Name: "Current", Type: "integer", Description: "The node count now."},
		{Name: "Upgrade-Type", Type: "string", Description: "How nodes are upgraded."},
	},
	Cells: func(p *hcp.NodePool) (cells, wide []interface{}) {
		replicas := "<none>"
		switch {
		case p.Spec.AutoScaling != nil:
			replicas = fmt.Sprintf("%d-%d", p.Spec.AutoScaling.Min, p.Spec.AutoScaling.Max)
		case p.Spec.Replicas != nil:
			replicas = fmt.Sprint(*p.Spec.Replicas)
		}
		version := p.Status.Version
		if version == "" {
			version = p.Spec.Version.ID
		}
		return []interface{}{
				p.Spec.ClusterName,
				hcpregistry.OrNone(version),
				replicas,
				hcpregistry.OrNone(string(p.Status.ProvisioningState)),
			}, []interface{}{
				p.Spec.Platform.VMSize,
				hcpregistry.OrNone(p.Spec.Platform.AvailabilityZone),
				p.Status.Replicas,
				p.Spec.UpgradeType,
			}
	},
}
