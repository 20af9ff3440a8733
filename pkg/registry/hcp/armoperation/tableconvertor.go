package armoperation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME REQUEST STATE TARGET ERROR AGE, and with -o wide also RESOURCE-ID, ENDED and
// API-VERSION: what an operation does to which object and how it is going.
var tableConvertor = hcpregistry.TableConvertor[*hcp.ARMOperation]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Request", Type: "string", Description: "What the operation was started for."},
		{Name: "State", Type: "string", Description: "The operation's status, as ARM reports it."},
		{Name: "Target", Type: "string", Description: "The object it follows: resource/namespace/name."},
		{Name: "Error", Type: "string", Description: "The error code of a Failed or Canceled operation."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Resource-ID", Type: "string", Description: "The ARM resource ID it acts on."},
		{Name: "Ended", Type: "string", Description: "How long ago it ended."},
		{Name: "API-Version", Type: "string", Description: "The ARM api-version it was started with."},
	},
	Cells: func(op *hcp.ARMOperation) (cells, wide []interface{}) {
		errCode, ended := "<none>", "<none>"
		if op.Status.Error != nil {
			errCode = op.Status.Error.Code
		}
		if op.Status.EndTime != nil {
			ended = hcpregistry.Age(*op.Status.EndTime)
		}
		t := op.Spec.Target
		return []interface{}{string(op.Spec.Request), string(op.Status.State), t.Resource + "/" + t.Namespace + "/" + t.Name, errCode},
			[]interface{}{op.Spec.ResourceID, ended, op.Spec.APIVersion}
	},
}
