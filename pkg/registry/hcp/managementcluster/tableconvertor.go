package managementcluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME LOCATION HOSTED AVAILABLE NODEPOOLS SCHEDULABLE CONNECTED AGE, and with
// -o wide also CONSUMER, CONNECTED-SINCE, LAST-SEEN and LAST-RESYNC: whether its agent is there and how
// full it is, at a glance.
var tableConvertor = hcpregistry.TableConvertor[*hcp.ManagementCluster]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Location", Type: "string", Description: "The Azure region."},
		{Name: "Hosted", Type: "string", Description: "Hosted clusters placed on it, out of its capacity."},
		{Name: "Available", Type: "integer", Description: "How many more hosted clusters may be placed on it."},
		{Name: "NodePools", Type: "integer", Description: "Node pools of the hosted clusters placed on it."},
		{Name: "Schedulable", Type: "boolean", Description: "Whether new hosted clusters may be placed on it."},
		{Name: "Connected", Type: "string", Description: "Whether its Maestro agent is connected."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Consumer", Type: "string", Description: "The Maestro consumer name."},
		{Name: "Connected-Since", Type: "string", Description: "How long its agent has been connected, or gone."},
		{Name: "Last-Seen", Type: "string", Description: "When its agent was last heard from."},
		{Name: "Last-Resync", Type: "string", Description: "When its agent last asked for every bundle again."},
	},
	Cells: func(m *hcp.ManagementCluster) (cells, wide []interface{}) {
		connected, since := "Unknown", "<none>"
		if c := meta.FindStatusCondition(m.Status.Conditions, hcp.ConditionAgentConnected); c != nil {
			connected, since = string(c.Status), hcpregistry.Age(c.LastTransitionTime)
		}
		return []interface{}{
				m.Spec.Location,
				fmt.Sprintf("%d/%d", m.Status.HostedClusters, m.Spec.Capacity),
				m.Status.AvailableCapacity,
				m.Status.NodePools,
				m.Spec.Schedulable == nil || *m.Spec.Schedulable,
				connected,
			}, []interface{}{
				m.Spec.ConsumerName,
				since,
				age(m.Status.LastSeen),
				age(m.Status.LastResync),
			}
	},
}

func age(t *metav1.Time) string {
	if t == nil {
		return "<none>"
	}
	return hcpregistry.Age(*t)
}
