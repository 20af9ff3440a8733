package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// TestARMOperationAndSubscriptionFollowTheCluster plays the ARM shim: it creates a cluster of a
// subscription and the Create operation that follows it, moves the cluster along through /status (this
// server has no management cluster, so nothing else would), and then deletes the subscription.
func TestARMOperationAndSubscriptionFollowTheCluster(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	subscriptionID := uuid.NewString()
	hcp := client().HcpV1alpha1()

	cluster := fixtures.HCPCluster(ns, "dev")
	cluster.Labels = map[string]string{v1alpha1.ARMSubscriptionLabel: subscriptionID}
	cluster, err := hcp.HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	op, err := hcp.ARMOperations().Create(ctx, &v1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: uuid.NewString()},
		Spec: v1alpha1.ARMOperationSpec{
			Request:        v1alpha1.ARMOperationCreate,
			ResourceID:     fmt.Sprintf("/subscriptions/%s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/dev", subscriptionID),
			SubscriptionID: subscriptionID,
			Location:       "eastus",
			Target: v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: ns, Name: "dev",
				UID: cluster.UID, Generation: cluster.Generation},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hcp.ARMOperations().Delete(context.Background(), op.Name, metav1.DeleteOptions{}) })
	if op.Status.State != v1alpha1.ARMOperationAccepted {
		t.Fatalf("a new Create operation is %s, want Accepted", op.Status.State)
	}

	waitForOperation := func(want v1alpha1.ARMOperationState) *v1alpha1.ARMOperation {
		t.Helper()
		var last *v1alpha1.ARMOperation
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := hcp.ARMOperations().Get(ctx, op.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = got
			return got.Status.State == want, nil
		})
		if err != nil {
			t.Fatalf("the operation is %+v, want %s: %v", last.Status, want, err)
		}
		return last
	}

	// The agent's first report: the control plane is being made for generation 1.
	if _, err := updateClusterStatus(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) {
		c.Status.ObservedGeneration, c.Status.ProvisioningState = c.Generation, v1alpha1.ProvisioningStateProvisioning
	}); err != nil {
		t.Fatal(err)
	}
	waitForOperation(v1alpha1.ARMOperationProvisioning)

	if _, err := updateClusterStatus(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) {
		c.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	}); err != nil {
		t.Fatal(err)
	}
	done := waitForOperation(v1alpha1.ARMOperationSucceeded)
	if done.Status.EndTime == nil || done.Status.Error != nil {
		t.Errorf("a Succeeded operation's status %+v, want an endTime and no error", done.Status)
	}

	// ARM deletes the subscription: its cluster goes. The cluster was never placed, so the delivery
	// finalizer has nothing to wait for on a management cluster and lets it go at once.
	if _, err := hcp.ARMSubscriptions().Create(ctx, &v1alpha1.ARMSubscription{
		ObjectMeta: metav1.ObjectMeta{Name: subscriptionID},
		Spec:       v1alpha1.ARMSubscriptionSpec{State: v1alpha1.ARMSubscriptionDeleted},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hcp.ARMSubscriptions().Delete(context.Background(), subscriptionID, metav1.DeleteOptions{})
	})
	waitClusterGone(t, ns, "dev")

	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		sub, err := hcp.ARMSubscriptions().Get(ctx, subscriptionID, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(sub.Status.Conditions, v1alpha1.ConditionResourcesDeleted), nil
	})
	if err != nil {
		t.Errorf("ResourcesDeleted of the subscription never True once its cluster went: %v", err)
	}

	// The operation ended before the cluster went: it stays Succeeded.
	got, err := hcp.ARMOperations().Get(ctx, op.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ended operation is gone before its retention: %v", err)
	}
	if got.Status.State != v1alpha1.ARMOperationSucceeded {
		t.Errorf("the ended operation is %s once its cluster went, want still Succeeded", got.Status.State)
	}
}
