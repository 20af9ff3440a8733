package clusterstatus

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
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

// TestUpdateWritesOnlyAChange: a status left as it was, or changed to what means the same (a time set again
// to the same instant elsewhere, no conditions for an empty list), is not written; a change is.
func TestUpdateWritesOnlyAChange(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	cluster := &v1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: 1},
		Status: v1alpha1.HCPClusterStatus{ProvisioningState: "Accepted", Conditions: []metav1.Condition{{
			Type: v1alpha1.ConditionPlaced, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(at),
			Reason: "NoManagementCluster", Message: "none yet",
		}}}}
	client := fake.NewSimpleClientset(cluster.DeepCopy())
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.HCPCluster)
		writes bool
	}{
		{"nothing", func(*v1alpha1.HCPCluster) {}, false},
		{"the same condition set again", func(c *v1alpha1.HCPCluster) {
			SetCondition(c, v1alpha1.ConditionPlaced, metav1.ConditionFalse, "NoManagementCluster", "none yet")
		}, false},
		{"the same instant in another location", func(c *v1alpha1.HCPCluster) {
			c.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.In(time.FixedZone("east", 3600)))
		}, false},
		{"an empty history for none", func(c *v1alpha1.HCPCluster) {
			c.Status.Version.History = []v1alpha1.VersionHistoryEntry{}
		}, false},
		{"a new message", func(c *v1alpha1.HCPCluster) {
			SetCondition(c, v1alpha1.ConditionPlaced, metav1.ConditionFalse, "NoManagementCluster", "still none")
		}, true},
	} {
		client.ClearActions()
		if _, err := Update(t.Context(), client, "test", cluster, tc.mutate); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if wrote := len(client.Actions()) > 0; wrote != tc.writes {
			t.Errorf("%s: wrote %v (%v), want %v", tc.name, wrote, client.Actions(), tc.writes)
		}
	}
}
