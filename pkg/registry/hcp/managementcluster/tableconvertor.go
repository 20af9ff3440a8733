package managementcluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// AgentConnected is the condition a management cluster's agent reports through.
const AgentConnected = "AgentConnected"

// tableConvertor prints NAME LOCATION HOSTED SCHEDULABLE CONNECTED AGE, and with -o wide
// also CONSUMER and LAST-SEEN.
var tableConvertor = hcpregistry.TableConvertor[*hcp.ManagementCluster]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Location", Type: "string", Description: "The Azure region."},
		{Name: "Hosted", Type: "string", Description: "Hosted clusters placed on it, out of its capacity."},
		{Name: "Schedulable", Type: "boolean", Description: "Whether new hosted clusters may be placed on it."},
		{Name: "Connected", Type: "string", Description: "Whether its Maestro agent is connected."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Consumer", Type: "string", Description: "The Maestro consumer name."},
		{Name: "Last-Seen", Type: "string", Description: "When its agent was last heard from."},
	},
	Cells: func(m *hcp.ManagementCluster) (cells, wide []interface{}) {
		connected := "Unknown"
		if c := meta.FindStatusCondition(m.Status.Conditions, AgentConnected); c != nil {
			connected = string(c.Status)
		}
		lastSeen := "<none>"
		if m.Status.LastSeen != nil {
			lastSeen = hcpregistry.Age(*m.Status.LastSeen)
		}
		return []interface{}{
				m.Spec.Location,
				fmt.Sprintf("%d/%d", m.Status.HostedClusters, m.Spec.Capacity),
				m.Spec.Schedulable == nil || *m.Spec.Schedulable,
				connected,
			}, []interface{}{
				m.Spec.ConsumerName,
				lastSeen,
			}
	},
}
