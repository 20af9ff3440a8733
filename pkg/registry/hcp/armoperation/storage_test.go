package armoperation

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

const opID = "6a1f2c8e-7b7d-4f3e-9d0c-2b1f4c3d5e6f"

func newStores(t *testing.T) (*hcpregistry.REST, *hcpregistry.StatusREST) {
	main, status, err := NewREST(registrytest.Scheme, registrytest.OptionsGetter{RESTOptions: registrytest.NewRESTOptions(t, "armoperations")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(main.Store.DestroyFunc)
	return main, status
}

func validOperation(name string, request hcp.ARMOperationRequest) *hcp.ARMOperation {
	return &hcp.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: hcp.ARMOperationSpec{
			Request:        request,
			ResourceID:     "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/Dev-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev",
			SubscriptionID: "00000000-0000-0000-0000-000000000001",
			Location:       "eastus",
			Target:         hcp.ARMOperationTarget{Resource: "hcpclusters", Namespace: "arm-dev-rg-0123456789abcdef", Name: "dev", UID: "uid-1", Generation: 1},
		},
	}
}

func create(t *testing.T, store *hcpregistry.REST, op *hcp.ARMOperation) (*hcp.ARMOperation, error) {
	t.Helper()
	out, err := store.Create(genericapirequest.WithNamespace(genericapirequest.NewContext(), metav1.NamespaceNone), op, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return out.(*hcp.ARMOperation), nil
}

// A new operation starts as ARM's do: Accepted, or Deleting for a delete, whatever status the client sent.
func TestCreateStartsAcceptedOrDeleting(t *testing.T) {
	store, _ := newStores(t)
	sent := validOperation(opID, hcp.ARMOperationCreate)
	sent.Status = hcp.ARMOperationStatus{State: hcp.ARMOperationSucceeded, Error: &hcp.ARMOperationError{Code: "x", Message: "y"}}
	created, err := create(t, store, sent)
	if err != nil {
		t.Fatal(err)
	}
	if created.Status.State != hcp.ARMOperationAccepted || created.Status.Error != nil || created.Status.LastTransitionTime == nil {
		t.Errorf("a new create operation's status = %+v, want Accepted with a transition time and no error", created.Status)
	}
	deletion, err := create(t, store, validOperation("0b8f2c8e-7b7d-4f3e-9d0c-2b1f4c3d5e6f", hcp.ARMOperationDelete))
	if err != nil {
		t.Fatal(err)
	}
	if deletion.Status.State != hcp.ARMOperationDeleting {
		t.Errorf("a new delete operation's state = %q, want Deleting", deletion.Status.State)
	}
}

func TestCreateRefusesWhatARMWouldNotSend(t *testing.T) {
	store, _ := newStores(t)
	for name, tc := range map[string]struct {
		mutate func(*hcp.ARMOperation)
		field  string
	}{
		"uppercase ID":       {func(op *hcp.ARMOperation) { op.Name = "6A1F2C8E-7B7D-4F3E-9D0C-2B1F4C3D5E6F" }, "metadata.name"},
		"not a UUID":         {func(op *hcp.ARMOperation) { op.Name = "my-operation" }, "metadata.name"},
		"unknown request":    {func(op *hcp.ARMOperation) { op.Spec.Request = "Restart" }, "spec.request"},
		"unknown target":     {func(op *hcp.ARMOperation) { op.Spec.Target.Resource = "secrets" }, "spec.target.resource"},
		"no target UID":      {func(op *hcp.ARMOperation) { op.Spec.Target.UID = "" }, "spec.target.uid"},
		"mixed-case sub":     {func(op *hcp.ARMOperation) { op.Spec.SubscriptionID = "00000000-0000-0000-0000-00000000000A" }, "spec.subscriptionID"},
		"no location":        {func(op *hcp.ARMOperation) { op.Spec.Location = "" }, "spec.location"},
		"no ARM resource ID": {func(op *hcp.ARMOperation) { op.Spec.ResourceID = "" }, "spec.resourceID"},
	} {
		t.Run(name, func(t *testing.T) {
			op := validOperation(opID, hcp.ARMOperationUpdate)
			tc.mutate(op)
			_, err := create(t, store, op)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create = %v, want 422 Invalid", err)
			}
			if causes := err.(apierrors.APIStatus).Status().Details.Causes; len(causes) == 0 || causes[0].Field != tc.field {
				t.Errorf("create's causes = %+v, want one on %s", causes, tc.field)
			}
		})
	}
}

// What an operation does never changes, and a final state stays final: ARM clients poll it to the end.
func TestSpecIsImmutableAndAnEndIsFinal(t *testing.T) {
	store, status := newStores(t)
	created, err := create(t, store, validOperation(opID, hcp.ARMOperationUpdate))
	if err != nil {
		t.Fatal(err)
	}
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), metav1.NamespaceNone)
	changed := created.DeepCopy()
	changed.Spec.Target.Generation = 7
	if _, _, err := store.Update(ctx, opID, rest.DefaultUpdatedObjectInfo(changed), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing spec.target.generation = %v, want 422 Invalid", err)
	}

	succeeded := created.DeepCopy()
	succeeded.Status.State = hcp.ARMOperationSucceeded
	out, _, err := status.Update(ctx, opID, rest.DefaultUpdatedObjectInfo(succeeded), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reopened := out.(*hcp.ARMOperation).DeepCopy()
	reopened.Status.State = hcp.ARMOperationUpdating
	if _, _, err := status.Update(ctx, opID, rest.DefaultUpdatedObjectInfo(reopened), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("moving a Succeeded operation back to Updating = %v, want 422 Invalid", err)
	}
}

// The operations controller lists the operations still running with a field selector on status.state.
func TestFieldSelectorOnState(t *testing.T) {
	store, _ := newStores(t)
	if _, err := create(t, store, validOperation(opID, hcp.ARMOperationCreate)); err != nil {
		t.Fatal(err)
	}
	for state, want := range map[string]int{"Accepted": 1, "Succeeded": 0} {
		out, err := store.List(genericapirequest.WithNamespace(genericapirequest.NewContext(), metav1.NamespaceNone), &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.state", state)})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(out.(*hcp.ARMOperationList).Items); got != want {
			t.Errorf("operations with status.state=%s: %d, want %d", state, got, want)
		}
	}
}
