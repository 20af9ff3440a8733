package nodepool

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// FuzzApplyReport writes into a node pool what an agent reports of its bundle: the status data of a
// status event, as the source decodes it, and the generation it is about. What the controller decides
// itself passes the server's status validation.
func FuzzApplyReport(f *testing.F) {
	for _, st := range []source.BundleStatus{
		nodePoolStatus(1, true, "True", 3, "4.20.8", "False"),
		nodePoolStatus(1, true, "Maybe", -1, "", "True"),
		nodePoolStatus(2, false, "", 0, "", ""),
	} {
		f.Add(controllertest.MustJSON(f, st.Status), st.Generation)
	}
	long := nodePoolStatus(1, true, "False", 2147483648, "4.20.8", "False")
	long.Status.ResourceStatus[0].Conditions[0].Message = strings.Repeat("m", 40000)
	for i, v := range long.Status.ResourceStatus[0].StatusFeedback.Values {
		if v.Name == render.FeedbackReadyMessage {
			long.Status.ResourceStatus[0].StatusFeedback.Values[i].Value.String = &long.Status.ResourceStatus[0].Conditions[0].Message
		}
	}
	f.Add(controllertest.MustJSON(f, long.Status), int64(1))

	f.Fuzz(func(t *testing.T, data []byte, generation int64) {
		var status protocol.ManifestBundleStatus
		if err := json.Unmarshal(data, &status); err != nil || generation < 0 {
			return // the source refuses it: FromMQTT decodes the same way, and generations are not negative
		}
		np := deliveredCluster().pools[0]
		old := np.DeepCopy()
		applyReport(np, source.BundleStatus{Generation: generation, Status: &status}, true, "consumer-1", "4.20.8")

		var newInternal, oldInternal hcp.NodePool
		if err := apiserver.Scheme.Convert(np, &newInternal, nil); err != nil {
			t.Fatal(err)
		}
		if err := apiserver.Scheme.Convert(old, &oldInternal, nil); err != nil {
			t.Fatal(err)
		}
		newInternal.ResourceVersion, oldInternal.ResourceVersion = "1", "1"
		// HyperShift's messages and the management cluster's refusals go to the pool as reported.
		for _, err := range validation.ValidateNodePoolStatusUpdate(&newInternal, &oldInternal) {
			if i, ok := controllertest.ConditionIndex(err.Field); ok && strings.HasSuffix(err.Field, ".message") && reportedMessage(np.Status.Conditions[i]) {
				t.Logf("refused for what the agent reported: %v", err)
				continue
			}
			t.Errorf("the status written is refused: %v", err)
		}
	})
}

// reportedMessage tells whether a condition's message may be what the agent reported: Ready's, once the
// bundle is applied, and a refusal's.
func reportedMessage(c metav1.Condition) bool {
	return c.Type == v1alpha1.ConditionReady || c.Reason == "ApplyFailed"
}
