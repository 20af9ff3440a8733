package hcpcluster

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// FuzzApplyReport writes into a cluster what an agent reports of its bundle: the status data of a status
// event, as the source decodes it, and the generation it is about. What the controller decides itself
// passes the server's status validation.
func FuzzApplyReport(f *testing.F) {
	completed, err := json.Marshal([]map[string]string{{"version": "4.20.8", "state": "Completed"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, st := range []source.BundleStatus{
		hostedClusterStatus(1, true, "True", string(completed)),
		hostedClusterStatus(1, true, "Maybe", `[{"version":1},null]`),
		hostedClusterStatus(2, false, "", ""),
	} {
		f.Add(controllertest.MustJSON(f, st.Status), st.Generation)
	}
	long := hostedClusterStatus(1, true, "False", "")
	long.Status.ResourceStatus[len(long.Status.ResourceStatus)-1].StatusFeedback.Values[1].Value.String = ptr.To(strings.Repeat("m", 40000))
	f.Add(controllertest.MustJSON(f, long.Status), int64(1))
	f.Add([]byte(`{"conditions":[{"type":"Applied","status":"True"}],"resourceStatus":[{"resourceMeta":{"kind":"HostedCluster"},`+
		`"statusFeedback":{"values":[{"name":"`+render.FeedbackAPIHost+`","fieldValue":{"type":"String","string":"::1"}},`+
		`{"name":"`+render.FeedbackAPIPort+`","fieldValue":{"type":"Boolean","boolean":true}},`+
		`{"name":"`+render.FeedbackVersionHistory+`","fieldValue":{"type":"JsonRaw","jsonRaw":"[{\"startedTime\":\"x\"}]"}}]}}]}`), int64(1))

	f.Fuzz(func(t *testing.T, data []byte, generation int64) {
		var status protocol.ManifestBundleStatus
		if err := json.Unmarshal(data, &status); err != nil || generation < 0 {
			return // the source refuses it: FromMQTT decodes the same way, and generations are not negative
		}
		cluster, _ := placedCluster()
		for i := range cluster.Status.Conditions {
			cluster.Status.Conditions[i].Reason = "Resolved"
			cluster.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
		old := cluster.DeepCopy()
		applyReport(cluster, source.BundleStatus{Generation: generation, Status: &status}, true, "consumer-1", render.Options{})

		var newInternal, oldInternal hcp.HCPCluster
		if err := apiserver.Scheme.Convert(cluster, &newInternal, nil); err != nil {
			t.Fatal(err)
		}
		if err := apiserver.Scheme.Convert(old, &oldInternal, nil); err != nil {
			t.Fatal(err)
		}
		newInternal.ResourceVersion, oldInternal.ResourceVersion = "1", "1"
		// Conditions that carry the agent's words are left out: HyperShift's condition statuses and
		// messages, and the management cluster's refusals, go to the cluster as reported.
		for _, err := range validation.ValidateHCPClusterStatusUpdate(&newInternal, &oldInternal) {
			if i, ok := controllertest.ConditionIndex(err.Field); ok && reportedCondition(cluster.Status.Conditions[i]) {
				t.Logf("refused for what the agent reported: %v", err)
				continue
			}
			t.Errorf("the status written is refused: %v", err)
		}
	})
}

// reportedCondition tells whether a condition's status or message is what the agent reported.
func reportedCondition(c metav1.Condition) bool {
	switch c.Type {
	case v1alpha1.ConditionAvailable, v1alpha1.ConditionProgressing, v1alpha1.ConditionDegraded:
		return true
	}
	return c.Type == v1alpha1.ConditionDelivered && c.Reason == "ApplyFailed"
}
