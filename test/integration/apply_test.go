package integration

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	hcpac "github.com/aro-hcp/hcp-apiserver/pkg/generated/applyconfiguration/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func nodePoolApply(ns string, replicas int32) *hcpac.NodePoolApplyConfiguration {
	return hcpac.NodePool("dev.workers", ns).
		WithLabels(map[string]string{"role": "workers"}).
		WithSpec(hcpac.NodePoolSpec().
			WithClusterName("dev").
			WithVersion(hcpac.VersionProfile().WithID("4.20.8")).
			WithPlatform(hcpac.NodePoolPlatformProfile().WithVMSize("Standard_D8s_v3")).
			WithReplicas(replicas).
			WithTaints(hcpac.Taint().WithKey("dedicated").WithValue("workers").WithEffect("NoSchedule")))
}

func TestServerSideApplyWithGeneratedApplyConfigurations(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	pools := client().HcpV1alpha1().NodePools(ns)
	createCluster(t, ns, "dev")

	applied, err := pools.Apply(ctx, nodePoolApply(ns, 3), metav1.ApplyOptions{FieldManager: "sre"})
	if err != nil {
		t.Fatalf("first apply: %v", err)
	}
	if *applied.Spec.Replicas != 3 || len(applied.Spec.Taints) != 1 || applied.Spec.UpgradeType != "Replace" {
		t.Errorf("applied spec %+v", applied.Spec)
	}
	if !managedBy(applied.ManagedFields, "sre", "Apply") {
		t.Errorf("managed fields do not record the sre manager: %+v", applied.ManagedFields)
	}

	// Applying the same configuration again changes nothing. The nodepool controller writes why the pool
	// waits first.
	applied = waitForClusterNotReady(t, ns, "dev.workers")
	again, err := pools.Apply(ctx, nodePoolApply(ns, 3), metav1.ApplyOptions{FieldManager: "sre"})
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if again.ResourceVersion != applied.ResourceVersion || again.Generation != 1 {
		t.Errorf("a no-op apply wrote the object: resourceVersion %s -> %s, generation %d", applied.ResourceVersion, again.ResourceVersion, again.Generation)
	}

	// Another manager that sets a field sre owns conflicts, unless it forces.
	_, err = pools.Apply(ctx, hcpac.NodePool("dev.workers", ns).WithSpec(hcpac.NodePoolSpec().WithReplicas(5)), metav1.ApplyOptions{FieldManager: "autoscaler"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("conflicting apply: %v, want Conflict", err)
	}
	forced, err := pools.Apply(ctx, hcpac.NodePool("dev.workers", ns).WithSpec(hcpac.NodePoolSpec().WithReplicas(5)), metav1.ApplyOptions{FieldManager: "autoscaler", Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if *forced.Spec.Replicas != 5 || forced.Spec.ClusterName != "dev" || forced.Generation != 2 {
		t.Errorf("after the forced apply: replicas %d clusterName %q generation %d", *forced.Spec.Replicas, forced.Spec.ClusterName, forced.Generation)
	}
}

func TestServerSideApplyOfStatusKeepsSpec(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	if _, err := clusters.Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := hcpac.HCPClusterStatus().
		WithProvisioningState(v1alpha1.ProvisioningStateProvisioning).
		WithConditions(metav1ac.Condition().WithType("Placed").WithStatus(metav1.ConditionTrue).
			WithReason("Placed").WithMessage("placed on mc-1").WithLastTransitionTime(metav1.Now()))
	got, err := clusters.ApplyStatus(ctx, hcpac.HCPCluster("dev", ns).WithStatus(status), metav1.ApplyOptions{FieldManager: "placement", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	placed := meta.FindStatusCondition(got.Status.Conditions, "Placed")
	if got.Status.ProvisioningState != v1alpha1.ProvisioningStateProvisioning || placed == nil || placed.Message != "placed on mc-1" {
		t.Errorf("status not applied: %+v", got.Status)
	}
	if got.Spec.Location != "eastus" || got.Spec.Version.ID != "4.20" {
		t.Errorf("applying status changed spec: %+v", got.Spec)
	}

	// Spec fields sent to /status are dropped, not applied.
	got, err = clusters.ApplyStatus(ctx, hcpac.HCPCluster("dev", ns).
		WithSpec(hcpac.HCPClusterSpec().WithVersion(hcpac.VersionProfile().WithID("4.21"))).
		WithStatus(status), metav1.ApplyOptions{FieldManager: "placement", Force: true})
	if err != nil {
		t.Fatalf("apply status with spec: %v", err)
	}
	if got.Spec.Version.ID != "4.20" {
		t.Errorf("/status applied spec.version.id %q", got.Spec.Version.ID)
	}
}

func managedBy(entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == op {
			return true
		}
	}
	return false
}
