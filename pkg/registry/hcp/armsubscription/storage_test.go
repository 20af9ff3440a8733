package armsubscription

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

func TestSubscriptionWrites(t *testing.T) {
	store, _, err := NewREST(registrytest.Scheme, registrytest.OptionsGetter{RESTOptions: registrytest.NewRESTOptions(t, "armsubscriptions")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Store.DestroyFunc)
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), metav1.NamespaceNone)
	valid := func() *hcp.ARMSubscription {
		return &hcp.ARMSubscription{
			ObjectMeta: metav1.ObjectMeta{Name: "00000000-0000-0000-0000-000000000001"},
			Spec: hcp.ARMSubscriptionSpec{
				State: hcp.ARMSubscriptionRegistered, RegistrationDate: "Thu, 01 Oct 2026 12:00:00 GMT",
				Properties: &hcp.ARMSubscriptionProperties{
					TenantID:           "00000000-0000-0000-0000-00000000000a",
					RegisteredFeatures: []hcp.ARMFeature{{Name: "Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures", State: "Registered"}},
				},
			},
		}
	}
	for name, tc := range map[string]struct {
		mutate func(*hcp.ARMSubscription)
		field  string
	}{
		"unknown state":  {func(s *hcp.ARMSubscription) { s.Spec.State = "Paused" }, "spec.state"},
		"uppercase name": {func(s *hcp.ARMSubscription) { s.Name = "0000000A-0000-0000-0000-000000000001" }, "metadata.name"},
	} {
		t.Run(name, func(t *testing.T) {
			s := valid()
			tc.mutate(s)
			_, err := store.Create(ctx, s, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create = %v, want 422 Invalid", err)
			}
			if causes := err.(apierrors.APIStatus).Status().Details.Causes; len(causes) == 0 || causes[0].Field != tc.field {
				t.Errorf("create's causes = %+v, want one on %s", causes, tc.field)
			}
		})
	}

	// The rest is ARM's record, stored as ARM sends it.
	liberal := valid()
	liberal.Name = "00000000-0000-0000-0000-000000000002"
	liberal.Spec.Properties.TenantID, liberal.Spec.RegistrationDate = "contoso", "yesterday"
	liberal.Spec.Properties.RegisteredFeatures[0].Name = ""
	if _, err := store.Create(ctx, liberal, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Errorf("ARM's notification with a tenant that is not a UUID, a feature without a name and a date ARM does not write: %v", err)
	}

	// ARM sends the whole subscription again on every change of state.
	created, err := store.Create(ctx, valid(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	warned := created.(*hcp.ARMSubscription).DeepCopy()
	warned.Spec.State = hcp.ARMSubscriptionWarned
	out, _, err := store.Update(ctx, warned.Name, rest.DefaultUpdatedObjectInfo(warned), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*hcp.ARMSubscription); got.Spec.State != hcp.ARMSubscriptionWarned || got.Generation != 2 {
		t.Errorf("after the update: state %q generation %d, want Warned 2", got.Spec.State, got.Generation)
	}
}
