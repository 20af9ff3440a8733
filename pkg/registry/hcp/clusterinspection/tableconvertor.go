package clusterinspection

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME CLUSTER VIEW PHASE READ EXPIRES AGE, and with -o wide also who asked and why.
var tableConvertor = hcpregistry.TableConvertor[*hcp.ClusterInspection]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The HCPCluster inspected."},
		{Name: "View", Type: "string", Description: "What is read: hostedcluster, nodepools, controlplane-pods, events or logs."},
		{Name: "Phase", Type: "string", Description: "Pending, Answered or Failed."},
		{Name: "Read", Type: "string", Description: "How long ago the management cluster was read."},
		{Name: "Expires", Type: "string", Description: "How long until the inspection is deleted."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "User", Type: "string", Description: "Who asked."},
		{Name: "Reason", Type: "string", Description: "Why."},
	},
	Cells: func(c *hcp.ClusterInspection) (cells, wide []interface{}) {
		read := "<none>"
		if t := c.Status.ReadAt; t != nil {
			read = duration.HumanDuration(time.Since(t.Time)) + " ago"
		}
		expires := "<none>"
		if t := c.Status.ExpirationTimestamp; t != nil {
			if left := time.Until(t.Time); left > 0 {
				expires = "in " + duration.HumanDuration(left)
			} else {
				expires = duration.HumanDuration(-left) + " ago"
			}
		}
		return []interface{}{
				c.Spec.ClusterName,
				string(c.Spec.View),
				hcpregistry.OrNone(string(c.Status.Phase)),
				read,
				expires,
			}, []interface{}{
				c.Spec.Username,
				c.Spec.Reason,
			}
	},
}
