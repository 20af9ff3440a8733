package nodepool

import (
	"context"
	"slices"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

func TestCreateAcceptsAndHoldsTheDelete(t *testing.T) {
	pool := validPool(t)
	pool.Status = hcp.NodePoolStatus{ProvisioningState: hcp.ProvisioningStateSucceeded, Replicas: 3, Version: "4.20.8"}
	NewStrategy(registrytest.Scheme).PrepareForCreate(context.Background(), pool)
	if want := (hcp.NodePoolStatus{ProvisioningState: hcp.ProvisioningStateAccepted}); pool.Generation != 1 || !apiequality.Semantic.DeepEqual(pool.Status, want) {
		t.Errorf("after create: status %+v generation %d, want only Accepted and generation 1", pool.Status, pool.Generation)
	}
	if !slices.Equal(pool.Finalizers, []string{hcp.DeliveryFinalizer}) {
		t.Errorf("finalizers %v, want %s", pool.Finalizers, hcp.DeliveryFinalizer)
	}
}

func TestSpecChangeOfAProvisionedPoolIsAnUpdate(t *testing.T) {
	s := NewStrategy(registrytest.Scheme)
	for before, want := range map[hcp.ProvisioningState]hcp.ProvisioningState{
		hcp.ProvisioningStateSucceeded:    hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateFailed:       hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateAccepted:     hcp.ProvisioningStateAccepted,
		hcp.ProvisioningStateProvisioning: hcp.ProvisioningStateProvisioning,
		hcp.ProvisioningStateDeleting:     hcp.ProvisioningStateDeleting,
	} {
		old := validPool(t)
		old.Generation = 2
		old.Status.ProvisioningState = before
		scaled := old.DeepCopy()
		scaled.Spec.Replicas = ptr.To[int32](5)
		s.PrepareForUpdate(context.Background(), scaled, old)
		if got := scaled.Status.ProvisioningState; got != want || scaled.Generation != 3 {
			t.Errorf("scaling a %s pool made it %s at generation %d, want %s at generation 3", before, got, scaled.Generation, want)
		}
	}
}

func TestMetadataChangeIsNoUpdate(t *testing.T) {
	old := validPool(t)
	old.Generation = 2
	old.Status.ProvisioningState = hcp.ProvisioningStateSucceeded
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"team": "sre"}
	labelled.Status = hcp.NodePoolStatus{}
	NewStrategy(registrytest.Scheme).PrepareForUpdate(context.Background(), labelled, old)
	if labelled.Generation != 2 || labelled.Status.ProvisioningState != hcp.ProvisioningStateSucceeded {
		t.Errorf("a label change: generation %d, status %+v; want generation 2 and the stored status", labelled.Generation, labelled.Status)
	}
}

func TestDeleteMarksDeleting(t *testing.T) {
	pool := validPool(t)
	pool.Status.ProvisioningState = hcp.ProvisioningStateSucceeded
	if graceful := NewStrategy(registrytest.Scheme).CheckGracefulDelete(context.Background(), pool, &metav1.DeleteOptions{}); graceful {
		t.Error("a delete asked for a grace period")
	}
	if pool.Status.ProvisioningState != hcp.ProvisioningStateDeleting {
		t.Errorf("provisioningState %s after delete, want Deleting", pool.Status.ProvisioningState)
	}
}

func TestStatusUpdateKeepsSpec(t *testing.T) {
	old := validPool(t)
	updated := old.DeepCopy()
	updated.Spec.Replicas = ptr.To[int32](7)
	updated.Status.Replicas = 3
	NewStatusStrategy(NewStrategy(registrytest.Scheme)).PrepareForUpdate(context.Background(), updated, old)
	if *updated.Spec.Replicas != 3 {
		t.Errorf("a status update changed spec.replicas to %d", *updated.Spec.Replicas)
	}
	if updated.Status.Replicas != 3 {
		t.Errorf("a status update lost the new status: %+v", updated.Status)
	}
}
