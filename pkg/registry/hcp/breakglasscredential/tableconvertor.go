package breakglasscredential

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// tableConvertor prints NAME CLUSTER PHASE EXPIRES AGE, and with -o wide also the user the
// certificate is for.
var tableConvertor = hcpregistry.TableConvertor[*hcp.BreakglassCredential]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The HCPCluster the credential is for."},
		{Name: "Phase", Type: "string", Description: "Pending, Issued, Failed, Expired or Revoked."},
		{Name: "Expires", Type: "string", Description: "When the certificate stops being valid."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Lifetime", Type: "string", Description: "The lifetime asked for."},
	},
	Cells: func(c *hcp.BreakglassCredential) (cells, wide []interface{}) {
		expires := "<none>"
		if t := c.Status.ExpirationTimestamp; t != nil {
			expires = t.UTC().Format("2006-01-02T15:04:05Z")
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
