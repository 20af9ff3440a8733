package hcpcluster

import (
	"context"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

func TestCreateClearsStatusAndStartsGeneration(t *testing.T) {
	c := validCluster(t)
	c.Status.ProvisioningState = hcp.ProvisioningStateSucceeded
	NewStrategy(registrytest.Scheme).PrepareForCreate(context.Background(), c)
	if c.Status.ProvisioningState != "" || c.Generation != 1 {
		t.Errorf("after create: status %+v generation %d, want empty status and generation 1", c.Status, c.Generation)
	}
}

func TestGenerationCountsSpecChangesOnly(t *testing.T) {
	s := NewStrategy(registrytest.Scheme)
	old := validCluster(t)
	old.Generation = 4
	old.Status.ProvisioningState = hcp.ProvisioningStateSucceeded

	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"team": "sre"}
	labelled.Status = hcp.HCPClusterStatus{}
	s.PrepareForUpdate(context.Background(), labelled, old)
	if labelled.Generation != 4 {
		t.Errorf("a label change moved generation to %d", labelled.Generation)
	}
	if labelled.Status.ProvisioningState != hcp.ProvisioningStateSucceeded {
		t.Errorf("an update of the main resource changed status to %+v", labelled.Status)
	}

	upgraded := old.DeepCopy()
	upgraded.Spec.Version.ID = "4.21"
	s.PrepareForUpdate(context.Background(), upgraded, old)
	if upgraded.Generation != 5 {
		t.Errorf("a spec change left generation at %d, want 5", upgraded.Generation)
	}
}

func TestStatusUpdateKeepsSpec(t *testing.T) {
	old := validCluster(t)
	updated := old.DeepCopy()
	updated.Spec.Version.ID = "4.21"
	updated.Status.ProvisioningState = hcp.ProvisioningStateProvisioning
	NewStatusStrategy(NewStrategy(registrytest.Scheme)).PrepareForUpdate(context.Background(), updated, old)
	if updated.Spec.Version.ID != "4.20" {
		t.Errorf("a status update changed spec.version.id to %q", updated.Spec.Version.ID)
	}
	if updated.Status.ProvisioningState != hcp.ProvisioningStateProvisioning {
		t.Errorf("a status update lost the new status: %+v", updated.Status)
	}
}

func TestSelectableFields(t *testing.T) {
	c := validCluster(t)
	c.Status.ManagementCluster = "mc-1"
	c.Status.ProvisioningState = hcp.ProvisioningStateAccepted
	got := SelectableFields(c)
	for field, want := range map[string]string{
		"metadata.name": "foo", "metadata.namespace": "test",
		"status.managementCluster": "mc-1", "status.provisioningState": "Accepted",
	} {
		if got[field] != want {
			t.Errorf("field %s = %q, want %q", field, got[field], want)
		}
	}
}
