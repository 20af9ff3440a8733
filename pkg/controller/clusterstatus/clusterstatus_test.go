package clusterstatus

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// TestRecheckAfterGrowsWithTheRefusal: Azure is asked again soon about a fresh refusal, less often about
// one that lasts, and never less than every 16 intervals.
func TestRecheckAfterGrowsWithTheRefusal(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	refusedFor := func(d time.Duration, status metav1.ConditionStatus) *v1alpha1.HCPCluster {
		return &v1alpha1.HCPCluster{Status: v1alpha1.HCPClusterStatus{Conditions: []metav1.Condition{{
			Type: v1alpha1.ConditionAzureIdentitiesValid, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-d)),
		}}}}
	}
	for _, tc := range []struct {
		name    string
		cluster *v1alpha1.HCPCluster
		want    time.Duration
	}{
		{"not checked yet", &v1alpha1.HCPCluster{}, 30 * time.Second},
		{"refused just now", refusedFor(time.Second, metav1.ConditionFalse), 30 * time.Second},
		{"refused for a minute", refusedFor(time.Minute, metav1.ConditionFalse), 30 * time.Second},
		{"refused for 10 minutes", refusedFor(10*time.Minute, metav1.ConditionFalse), 150 * time.Second},
		{"refused for a day", refusedFor(24*time.Hour, metav1.ConditionFalse), 8 * time.Minute},
		{"could not be checked for a day", refusedFor(24*time.Hour, metav1.ConditionUnknown), 30 * time.Second},
	} {
		if got := RecheckAfter(tc.cluster, v1alpha1.ConditionAzureIdentitiesValid, 30*time.Second, now); got != tc.want {
			t.Errorf("%s: recheck after %v, want %v", tc.name, got, tc.want)
		}
	}
}

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
