package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
)

func TestRevocationOver(t *testing.T) {
	requested := metav1.NewTime(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	revoking := func(status metav1.ConditionStatus, at time.Duration) *metav1.Condition {
		return &metav1.Condition{Type: v1alpha1.ConditionRevokingCredentials, Status: status,
			LastTransitionTime: metav1.NewTime(requested.Add(at))}
	}
	for _, tc := range []struct {
		name string
		seen []*metav1.Condition
		want bool
	}{
		{name: "ran while watched", seen: []*metav1.Condition{revoking(metav1.ConditionFalse, -time.Hour), revoking(metav1.ConditionTrue, time.Second), revoking(metav1.ConditionFalse, 2*time.Second)}, want: true},
		{name: "ran before the first look", seen: []*metav1.Condition{revoking(metav1.ConditionFalse, time.Second)}, want: true},
		{name: "ran in the second of the request", seen: []*metav1.Condition{revoking(metav1.ConditionFalse, 0)}, want: true},
		{name: "an earlier revocation", seen: []*metav1.Condition{revoking(metav1.ConditionFalse, -time.Hour)}},
		{name: "running", seen: []*metav1.Condition{revoking(metav1.ConditionTrue, time.Second)}},
		{name: "unknown", seen: []*metav1.Condition{revoking(metav1.ConditionUnknown, time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := revocation{requested: requested}
			var got bool
			for _, c := range tc.seen {
				got = r.over(c)
			}
			if got != tc.want {
				t.Errorf("over = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRevokeWaits: revoke --wait asks for the revocation on the cluster's revokecredentials
// subresource and returns once the cluster reports it over.
func TestRevokeWaits(t *testing.T) {
	cluster := func(resourceVersion string, status metav1.ConditionStatus, reason string) *v1alpha1.HCPCluster {
		hc := &v1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Name: "dev", Namespace: "team-a", ResourceVersion: resourceVersion}}
		hc.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionRevokingCredentials, Status: status, Reason: reason,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
		return hc
	}
	client := fake.NewClientset()
	var revoked []clienttesting.CreateActionImpl
	client.PrependReactor("create", "hcpclusters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		revoked = append(revoked, action.(clienttesting.CreateActionImpl))
		return true, &v1alpha1.CredentialRevocation{}, nil
	})
	client.PrependReactor("get", "hcpclusters", func(clienttesting.Action) (bool, runtime.Object, error) {
		// What an earlier revocation left.
		return true, cluster("3", metav1.ConditionFalse, "Revoked"), nil
	})
	var watchedFrom string
	client.PrependWatchReactor("hcpclusters", func(action clienttesting.Action) (bool, watch.Interface, error) {
		watchedFrom = action.(clienttesting.WatchActionImpl).WatchRestrictions.ResourceVersion
		w := watch.NewFakeWithChanSize(2, false)
		w.Modify(cluster("4", metav1.ConditionTrue, "Revoking"))
		w.Modify(cluster("5", metav1.ConditionFalse, "Revoked"))
		return true, w, nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	o := &revokeOptions{Wait: true, Timeout: time.Minute}
	if err := o.Run(ctx, client, "team-a", "dev", &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if len(revoked) != 1 || revoked[0].Name != "dev" || revoked[0].Subresource != "revokecredentials" ||
		revoked[0].Object.(*v1alpha1.CredentialRevocation).Name != "dev" {
		t.Errorf("revocations asked for: %+v, want one of dev on revokecredentials", revoked)
	}
	if watchedFrom != "3" {
		t.Errorf("watched from resourceVersion %q, want 3, the cluster's after the request", watchedFrom)
	}
	// The state after the request, then the revocation running and over.
	const wantProgress = "hcpcluster team-a/dev: RevokingCredentials=False (Revoked)\n" +
		"hcpcluster team-a/dev: RevokingCredentials=True (Revoking)\n" +
		"hcpcluster team-a/dev: RevokingCredentials=False (Revoked)\n"
	if !strings.Contains(stderr.String(), wantProgress) {
		t.Errorf("stderr = %q, want it to contain %q", stderr.String(), wantProgress)
	}
	if !strings.Contains(stdout.String(), "revoked") {
		t.Errorf("stdout = %q, want that the credentials are revoked", stdout.String())
	}
}
