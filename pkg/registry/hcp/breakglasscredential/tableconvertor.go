package breakglasscredential

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME CLUSTER PHASE EXPIRES AGE, and with -o wide also the user the
// certificate is for.
var tableConvertor = hcpregistry.TableConvertor[*hcp.BreakglassCredential]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The HCPCluster the credential is for."},
		{Name: "Phase", Type: "string", Description: "Pending, Issued, Failed, Expired or Revoked."},
		{Name: "Expires", Type: "string", Description: "How long until the certificate stops being valid, or how long ago it did."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Lifetime", Type: "string", Description: "The lifetime asked for."},
	},
	Cells: func(c *hcp.BreakglassCredential) (cells, wide []interface{}) {
		expires := "<none>"
		if t := c.Status.ExpirationTimestamp; t != nil {
			if left := time.Until(t.Time); left > 0 {
				expires = "in " + duration.HumanDuration(left)
			} else {
				expires = duration.HumanDuration(-left) + " ago"
			}
		}
		lifetime := "<none>"
		if s := c.Spec.ExpirationSeconds; s != nil {
			lifetime = (time.Duration(*s) * time.Second).String()
		}
		return []interface{}{
				c.Spec.ClusterName,
				hcpregistry.OrNone(string(c.Status.Phase)),
				expires,
			}, []interface{}{
				lifetime,
			}
	},
}
