package externalauth

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME CLUSTER ISSUER STATE AGE, and with -o wide also CLIENTS.
var tableConvertor = hcpregistry.TableConvertor[*hcp.ExternalAuth]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The HCPCluster its users sign in to."},
		{Name: "Issuer", Type: "string", Description: "The identity provider's issuer URL."},
		{Name: "State", Type: "string", Description: "The provisioning state."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Clients", Type: "integer", Description: "The number of platform components that request tokens."},
	},
	Cells: func(ea *hcp.ExternalAuth) (cells, wide []interface{}) {
		return []interface{}{
				ea.Spec.ClusterName,
				ea.Spec.Issuer.URL,
				hcpregistry.OrNone(string(ea.Status.ProvisioningState)),
			}, []interface{}{
				len(ea.Spec.Clients),
			}
	},
}
