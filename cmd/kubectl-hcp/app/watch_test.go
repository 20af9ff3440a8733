package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
)

func credentialAt(resourceVersion string, phase v1alpha1.BreakglassCredentialPhase) *v1alpha1.BreakglassCredential {
	return &v1alpha1.BreakglassCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "dev-x7k2p", Namespace: "team-a", ResourceVersion: resourceVersion},
		Status:     v1alpha1.BreakglassCredentialStatus{Phase: phase},
	}
}

// TestWatchUntilGoesOn: a watch that closes, or that the server ends with 410 Gone, does not end the
// wait; it goes on from what was seen last.
func TestWatchUntilGoesOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		// first is what the first watch sends before it ends.
		first []watch.Event
		// get is the object a GET returns.
		get *v1alpha1.BreakglassCredential
		// wantResourceVersion is where the second watch starts.
		wantResourceVersion string
	}{
		{
			name:                "closed",
			first:               []watch.Event{{Type: watch.Modified, Object: credentialAt("6", v1alpha1.BreakglassCredentialPhasePending)}},
			wantResourceVersion: "6",
		},
		{
			name: "gone",
			first: []watch.Event{
				{Type: watch.Modified, Object: credentialAt("6", v1alpha1.BreakglassCredentialPhasePending)},
				{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired}},
			},
			get:                 credentialAt("9", v1alpha1.BreakglassCredentialPhasePending),
			wantResourceVersion: "9",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			var watches []clienttesting.WatchActionImpl
			client.PrependWatchReactor("breakglasscredentials", func(action clienttesting.Action) (bool, watch.Interface, error) {
				watches = append(watches, action.(clienttesting.WatchActionImpl))
				w := watch.NewFakeWithChanSize(len(tc.first), false)
				if len(watches) == 1 {
					for _, e := range tc.first {
						w.Action(e.Type, e.Object)
					}
					w.Stop()
				} else {
					w.Modify(credentialAt("10", v1alpha1.BreakglassCredentialPhaseIssued))
				}
				return true, w, nil
			})
			client.PrependReactor("get", "breakglasscredentials", func(clienttesting.Action) (bool, runtime.Object, error) {
				if tc.get == nil {
					t.Error("got the credential though the watch could go on")
				}
				return true, tc.get, nil
			})
			credentials := client.HcpV1alpha1().BreakglassCredentials("team-a")

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := watchUntil(ctx, namedObject{
				what:  "breakglasscredential team-a/dev-x7k2p",
				name:  "dev-x7k2p",
				watch: credentials.Watch,
				get: func(ctx context.Context) (runtime.Object, error) {
					return credentials.Get(ctx, "dev-x7k2p", metav1.GetOptions{})
				},
			}, "5", func(obj runtime.Object) (bool, error) {
				return obj.(*v1alpha1.BreakglassCredential).Status.Phase == v1alpha1.BreakglassCredentialPhaseIssued, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(watches) != 2 {
				t.Fatalf("watched %d times, want 2", len(watches))
			}
			for i, want := range []string{"5", tc.wantResourceVersion} {
				r := watches[i].WatchRestrictions
				if r.ResourceVersion != want || r.Fields.String() != "metadata.name=dev-x7k2p" {
					t.Errorf("watch %d: resourceVersion %q, fieldSelector %q; want %q, metadata.name=dev-x7k2p", i, r.ResourceVersion, r.Fields, want)
				}
			}
		})
	}
}

// TestWatchUntilDeleted: an object deleted while waited for ends the wait with an error.
func TestWatchUntilDeleted(t *testing.T) {
	client := fake.NewClientset()
	client.PrependWatchReactor("breakglasscredentials", func(clienttesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(1, false)
		w.Delete(credentialAt("6", v1alpha1.BreakglassCredentialPhasePending))
		return true, w, nil
	})
	credentials := client.HcpV1alpha1().BreakglassCredentials("team-a")
	err := watchUntil(context.Background(), namedObject{what: "breakglasscredential team-a/dev-x7k2p", name: "dev-x7k2p", watch: credentials.Watch},
		"5", func(runtime.Object) (bool, error) { return false, nil })
	if err == nil || err.Error() != "breakglasscredential team-a/dev-x7k2p was deleted" {
		t.Errorf("err = %v, want that it was deleted", err)
	}
}
