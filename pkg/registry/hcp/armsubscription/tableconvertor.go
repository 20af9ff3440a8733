package armsubscription

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME STATE TENANT RESOURCES-DELETED AGE, and with -o wide also REGISTERED and FEATURES.
var tableConvertor = hcpregistry.TableConvertor[*hcp.ARMSubscription]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "State", Type: "string", Description: "The subscription's state as ARM last registered it."},
		{Name: "Tenant", Type: "string", Description: "The subscription's home tenant."},
		{Name: "Resources-Deleted", Type: "string", Description: "For a Deleted subscription, whether its clusters are gone."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Registered", Type: "string", Description: "When the subscription registered the resource provider."},
		{Name: "Features", Type: "integer", Description: "How many preview features the subscription registered."},
	},
	Cells: func(s *hcp.ARMSubscription) (cells, wide []interface{}) {
		tenant, features, deleted := "<none>", 0, "<none>"
		if p := s.Spec.Properties; p != nil {
			if p.TenantID != "" {
				tenant = p.TenantID
			}
			features = len(p.RegisteredFeatures)
		}
		if c := meta.FindStatusCondition(s.Status.Conditions, hcp.ConditionResourcesDeleted); c != nil {
			deleted = string(c.Status)
		}
		return []interface{}{string(s.Spec.State), tenant, deleted}, []interface{}{s.Spec.RegistrationDate, features}
	},
}
