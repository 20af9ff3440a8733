package clusterstatus

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// TestSetConditionKeepsWhatTheAPIAccepts: feedback the API would refuse in a condition becomes a status
// and a message it accepts.
func TestSetConditionKeepsWhatTheAPIAccepts(t *testing.T) {
	cluster := &v1alpha1.HCPCluster{}
	SetCondition(cluster, v1alpha1.ConditionAvailable, "Maybe", "HostedClusterAvailable", strings.Repeat("é", 20000))
	c := cluster.Status.Conditions[0]
	if c.Status != metav1.ConditionUnknown {
		t.Errorf("status %q, want Unknown for a status that is none of True, False, Unknown", c.Status)
	}
	if errs := metav1validation.ValidateConditions(cluster.Status.Conditions, field.NewPath("conditions")); len(errs) > 0 {
		t.Errorf("the condition is refused: %v", errs)
	}
}
