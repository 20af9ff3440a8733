package generic

import (
	"context"
	"slices"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// testKind is ManagementCluster's shape with hooks that record what the strategy called.
func testKind(calls *[]string) Kind[*hcp.ManagementCluster] {
	return Kind[*hcp.ManagementCluster]{
		ClearStatus: func(obj *hcp.ManagementCluster) { obj.Status = hcp.ManagementClusterStatus{} },
		CopyStatus:  func(obj, old *hcp.ManagementCluster) { obj.Status = old.Status },
		CopySpec:    func(obj, old *hcp.ManagementCluster) { obj.Spec = old.Spec },
		SpecChanged: func(obj, old *hcp.ManagementCluster) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
		Created:     func(*hcp.ManagementCluster) { *calls = append(*calls, "Created") },
		SpecUpdated: func(*hcp.ManagementCluster, *hcp.ManagementCluster) { *calls = append(*calls, "SpecUpdated") },
		Deleting:    func(*hcp.ManagementCluster) { *calls = append(*calls, "Deleting") },
		Validate:    func(*hcp.ManagementCluster) field.ErrorList { return nil },
		ValidateUpdate: func(*hcp.ManagementCluster, *hcp.ManagementCluster) field.ErrorList {
			return nil
		},
		ValidateStatusUpdate: func(*hcp.ManagementCluster, *hcp.ManagementCluster) field.ErrorList { return nil },
	}
}

func stored() *hcp.ManagementCluster {
	return &hcp.ManagementCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "mc-1", Generation: 3},
		Spec:       hcp.ManagementClusterSpec{ConsumerName: "mc-1", Location: "eastus", Capacity: 10},
		Status:     hcp.ManagementClusterStatus{Conditions: []metav1.Condition{{Type: hcp.ConditionAgentConnected, Status: metav1.ConditionTrue}}},
	}
}

// The main resource writes spec and metadata, never status; generation starts at 1 and counts spec changes
// only; the hooks run when the write creates, changes the spec, or deletes.
func TestStrategyKeepsSpecStatusAndGenerationApart(t *testing.T) {
	var calls []string
	s := NewStrategy[*hcp.ManagementCluster](runtime.NewScheme(), testKind(&calls))
	ctx := context.Background()

	created := stored()
	s.PrepareForCreate(ctx, created)
	if created.Generation != 1 || len(created.Status.Conditions) != 0 || !slices.Equal(calls, []string{"Created"}) {
		t.Errorf("create: generation %d, status %+v, hooks %v; want 1, an empty status, Created", created.Generation, created.Status, calls)
	}

	calls = nil
	labelled := stored()
	labelled.Labels, labelled.Status = map[string]string{"team": "a"}, hcp.ManagementClusterStatus{}
	s.PrepareForUpdate(ctx, labelled, stored())
	if labelled.Generation != 3 || len(labelled.Status.Conditions) != 1 || len(calls) != 0 {
		t.Errorf("metadata-only update: generation %d, status %+v, hooks %v; want 3, the stored status, none", labelled.Generation, labelled.Status, calls)
	}

	respecced := stored()
	respecced.Spec.Capacity = 20
	s.PrepareForUpdate(ctx, respecced, stored())
	if respecced.Generation != 4 || !slices.Equal(calls, []string{"SpecUpdated"}) {
		t.Errorf("spec update: generation %d, hooks %v; want 4 and SpecUpdated", respecced.Generation, calls)
	}

	calls = nil
	if graceful := s.CheckGracefulDelete(ctx, stored(), &metav1.DeleteOptions{}); graceful || !slices.Equal(calls, []string{"Deleting"}) {
		t.Errorf("delete: graceful %v, hooks %v; want an immediate delete and Deleting", graceful, calls)
	}

	calls = nil
	plain := s.WithoutLifecycle()
	plain.PrepareForCreate(ctx, stored())
	plain.PrepareForUpdate(ctx, respecced, stored())
	plain.CheckGracefulDelete(ctx, stored(), &metav1.DeleteOptions{})
	if len(calls) != 0 {
		t.Errorf("WithoutLifecycle ran hooks %v", calls)
	}
}

// /status writes status only: the spec stays as stored, and server-side apply cannot claim the other half
// through either endpoint.
func TestStatusStrategyKeepsTheSpec(t *testing.T) {
	var calls []string
	s := NewStrategy[*hcp.ManagementCluster](runtime.NewScheme(), testKind(&calls))
	status := NewStatusStrategy(s)
	obj := stored()
	obj.Spec.Capacity, obj.Status.Conditions = 99, nil
	status.PrepareForUpdate(context.Background(), obj, stored())
	if obj.Spec.Capacity != 10 || obj.Status.Conditions != nil || obj.Generation != 3 {
		t.Errorf("after a /status write: capacity %d, conditions %v, generation %d; want the stored spec (10) and the written status", obj.Spec.Capacity, obj.Status.Conditions, obj.Generation)
	}
	if !s.GetResetFields()["hcp.aro.azure.com/v1alpha1"].Equals(mainResetPaths) || !mainResetPaths.Has(fieldpath.MakePathOrDie("status")) {
		t.Error("the main resource does not reset status")
	}
	if !status.GetResetFields()["hcp.aro.azure.com/v1alpha1"].Equals(specPath) {
		t.Error("/status does not reset spec")
	}
}

func TestStateAfterSpecChange(t *testing.T) {
	for before, want := range map[hcp.ProvisioningState]hcp.ProvisioningState{
		hcp.ProvisioningStateSucceeded:    hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateFailed:       hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateCanceled:     hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateAccepted:     hcp.ProvisioningStateAccepted,
		hcp.ProvisioningStateProvisioning: hcp.ProvisioningStateProvisioning,
		hcp.ProvisioningStateDeleting:     hcp.ProvisioningStateDeleting,
	} {
		if got := StateAfterSpecChange(before); got != want {
			t.Errorf("a spec change in %s: %s, want %s", before, got, want)
		}
	}
}

func TestAddFinalizerAddsOnce(t *testing.T) {
	obj := stored()
	AddFinalizer(obj, "a")
	AddFinalizer(obj, "a")
	AddFinalizer(obj, "b")
	if !slices.Equal(obj.Finalizers, []string{"a", "b"}) {
		t.Errorf("finalizers %v, want [a b]", obj.Finalizers)
	}
}
