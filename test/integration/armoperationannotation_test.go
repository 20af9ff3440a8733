package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// operationAnnotation is what the ARM shim puts on a create for the server to record its operation.
func operationAnnotation(t *testing.T, name, subscriptionID string) map[string]string {
	t.Helper()
	value, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": name, "labels": map[string]string{v1alpha1.ARMSubscriptionLabel: subscriptionID}},
		"spec": v1alpha1.ARMOperationSpec{
			Request:        v1alpha1.ARMOperationCreate,
			ResourceID:     fmt.Sprintf("/subscriptions/%s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/dev", subscriptionID),
			SubscriptionID: subscriptionID,
			Location:       "eastus",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{v1alpha1.ARMOperationAnnotation: string(value)}
}

// writtenWith checks that the operation opName was created in the write that created obj: it is there at
// obj's revision, and was not at the one before. (Its controller may have written it again since.)
func writtenWith(t *testing.T, opName string, obj metav1.Object) {
	t.Helper()
	revision, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for rv, want := range map[int64]int{revision - 1: 0, revision: 1} {
		list, err := client().HcpV1alpha1().ARMOperations().List(context.Background(), metav1.ListOptions{
			ResourceVersion: strconv.FormatInt(rv, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact,
			FieldSelector: "metadata.name=" + opName,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != want {
			t.Errorf("at revision %d, %d operations %s; want %d: the operation written with the %s at %d", rv, len(list.Items), opName, want,
				obj.GetName(), revision)
		}
	}
}

// TestCreateRecordsTheARMOperationItAsksFor: a create carrying hcp.aro.azure.com/arm-operation writes the
// operation in its own write, following the new object, and stores neither the annotation nor its
// ownership; what cannot be written whole is not written at all.
func TestCreateRecordsTheARMOperationItAsksFor(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	subscriptionID := uuid.NewString()
	hcp := client().HcpV1alpha1()

	opName := uuid.NewString()
	cluster := fixtures.HCPCluster(ns, "dev")
	cluster.Annotations = operationAnnotation(t, opName, subscriptionID)
	created, err := hcp.HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{FieldManager: "arm-shim"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hcp.ARMOperations().Delete(context.Background(), opName, metav1.DeleteOptions{}) })
	if _, ok := created.Annotations[v1alpha1.ARMOperationAnnotation]; ok {
		t.Errorf("the created cluster carries the annotation: %v", created.Annotations)
	}
	for _, entry := range created.ManagedFields {
		if entry.FieldsV1 != nil && strings.Contains(string(entry.FieldsV1.Raw), v1alpha1.ARMOperationAnnotation) {
			t.Errorf("%s owns the annotation, which was never stored: %s", entry.Manager, entry.FieldsV1.Raw)
		}
	}
	op, err := hcp.ARMOperations().Get(ctx, opName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the operation the create asked for: %v", err)
	}
	want := v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: ns, Name: "dev", UID: created.UID, Generation: 1}
	if op.Spec.Target != want {
		t.Errorf("the operation follows %+v, want %+v", op.Spec.Target, want)
	}
	if op.Status.State != v1alpha1.ARMOperationAccepted || op.Labels[v1alpha1.ARMSubscriptionLabel] != subscriptionID || op.UID == "" {
		t.Errorf("the operation is %s with labels %v and UID %q, want Accepted, the subscription's label and a UID", op.Status.State, op.Labels, op.UID)
	}
	writtenWith(t, opName, created)

	// followed checks that the operation opName, asked for by the create of obj, follows obj.
	followed := func(t *testing.T, opName, resource string, obj metav1.Object) {
		t.Helper()
		t.Cleanup(func() { _ = hcp.ARMOperations().Delete(context.Background(), opName, metav1.DeleteOptions{}) })
		op, err := hcp.ARMOperations().Get(ctx, opName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if op.Spec.Target.Resource != resource || op.Spec.Target.UID != obj.GetUID() {
			t.Errorf("the operation follows %+v, want the %s %s", op.Spec.Target, resource, obj.GetUID())
		}
		writtenWith(t, opName, obj)
	}

	t.Run("a node pool's create records one too", func(t *testing.T) {
		poolOp := uuid.NewString()
		pool := fixtures.NodePool(ns, "dev", "workers")
		pool.Annotations = operationAnnotation(t, poolOp, subscriptionID)
		created, err := hcp.NodePools(ns).Create(ctx, pool, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		followed(t, poolOp, "nodepools", created)
	})

	t.Run("a break-glass credential's create records one too", func(t *testing.T) {
		// Credentials are issued for Succeeded clusters only.
		if _, err := updateClusterStatus(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) {
			c.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
		}); err != nil {
			t.Fatal(err)
		}
		credOp := uuid.NewString()
		cred := fixtures.BreakglassCredential(ns, "dev", "admin")
		cred.Annotations = operationAnnotation(t, credOp, subscriptionID)
		created, err := hcp.BreakglassCredentials(ns).Create(ctx, cred, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		followed(t, credOp, "breakglasscredentials", created)
	})

	t.Run("an operation name taken already writes nothing", func(t *testing.T) {
		again := fixtures.HCPCluster(ns, "again")
		again.Annotations = operationAnnotation(t, opName, subscriptionID)
		_, err := hcp.HCPClusters(ns).Create(ctx, again, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) || !strings.Contains(err.Error(), opName) {
			t.Errorf("a create reusing operation %s: %v, want AlreadyExists naming it", opName, err)
		}
		if _, err := hcp.HCPClusters(ns).Get(ctx, "again", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the cluster whose operation could not be written: %v, want NotFound", err)
		}
	})

	t.Run("a dry run writes neither", func(t *testing.T) {
		dry := uuid.NewString()
		cluster := fixtures.HCPCluster(ns, "dry")
		cluster.Annotations = operationAnnotation(t, dry, subscriptionID)
		if _, err := hcp.HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		if _, err := hcp.ARMOperations().Get(ctx, dry, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the operation of a dry run: %v, want NotFound", err)
		}
	})

	t.Run("what is not an operation is refused with the annotation's path", func(t *testing.T) {
		for name, value := range map[string]string{
			"not JSON":      "{",
			"unknown field": `{"metadata":{"name":"` + uuid.NewString() + `"},"spec":{"colour":"blue"}}`,
			"no name":       `{"spec":{}}`,
		} {
			cluster := fixtures.HCPCluster(ns, "bad")
			cluster.Annotations = map[string]string{v1alpha1.ARMOperationAnnotation: value}
			_, err := hcp.HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{})
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "metadata.annotations[hcp.aro.azure.com/arm-operation]") {
				t.Errorf("%s: %v, want BadRequest naming the annotation", name, err)
			}
		}
		// A well-formed operation the ARMOperation store would refuse is refused so.
		value := operationAnnotation(t, uuid.NewString(), "not-a-subscription")
		cluster := fixtures.HCPCluster(ns, "bad")
		cluster.Annotations = value
		if _, err := hcp.HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.subscriptionID") {
			t.Errorf("an operation of no subscription: %v, want Invalid on spec.subscriptionID", err)
		}
		if _, err := hcp.HCPClusters(ns).Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a refused cluster: %v, want NotFound", err)
		}
	})

	t.Run("only creates of what ARM puts record operations", func(t *testing.T) {
		mc := fixtures.ManagementCluster("mc-" + ns)
		mc.Annotations = operationAnnotation(t, uuid.NewString(), subscriptionID)
		if _, err := hcp.ManagementClusters().Create(ctx, mc, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), "metadata.annotations[hcp.aro.azure.com/arm-operation]") {
			t.Errorf("a management cluster asking for an operation: %v, want Invalid on the annotation", err)
		}
		update, err := hcp.HCPClusters(ns).Get(ctx, "dev", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		update.Annotations = operationAnnotation(t, uuid.NewString(), subscriptionID)
		if _, err := hcp.HCPClusters(ns).Update(ctx, update, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), "metadata.annotations[hcp.aro.azure.com/arm-operation]") {
			t.Errorf("an update asking for an operation: %v, want Invalid on the annotation", err)
		}
	})
}

// TestCreateRequiresItsSubscriptionAsChecked: a create carrying hcp.aro.azure.com/arm-subscription-version
// beside its operation is written only while the operation's ARMSubscription is at that resourceVersion,
// and otherwise refused with 409 Conflict naming the subscription, writing nothing; the annotation is never
// stored, and is refused anywhere but beside an operation on a create.
func TestCreateRequiresItsSubscriptionAsChecked(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	hcp := client().HcpV1alpha1()
	subscriptionID := uuid.NewString()
	sub, err := hcp.ARMSubscriptions().Create(ctx, &v1alpha1.ARMSubscription{
		ObjectMeta: metav1.ObjectMeta{Name: subscriptionID},
		Spec:       v1alpha1.ARMSubscriptionSpec{State: v1alpha1.ARMSubscriptionRegistered},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hcp.ARMSubscriptions().Delete(context.Background(), subscriptionID, metav1.DeleteOptions{})
	})
	// Its controller writes its status once after the create; the version to require is the one after.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		sub, err = hcp.ARMSubscriptions().Get(ctx, subscriptionID, metav1.GetOptions{})
		return err == nil && sub.Status.ObservedGeneration == sub.Generation, err
	}); err != nil {
		t.Fatalf("the subscription's status: %v", err)
	}
	asChecked := func(t *testing.T, name, opName, version string) *v1alpha1.HCPCluster {
		cluster := fixtures.HCPCluster(ns, name)
		cluster.Annotations = operationAnnotation(t, opName, subscriptionID)
		cluster.Annotations[v1alpha1.ARMSubscriptionVersionAnnotation] = version
		return cluster
	}

	opName := uuid.NewString()
	t.Cleanup(func() { _ = hcp.ARMOperations().Delete(context.Background(), opName, metav1.DeleteOptions{}) })
	created, err := hcp.HCPClusters(ns).Create(ctx, asChecked(t, "dev", opName, sub.ResourceVersion), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a create requiring the subscription at its current version: %v", err)
	}
	if _, ok := created.Annotations[v1alpha1.ARMSubscriptionVersionAnnotation]; ok {
		t.Errorf("the created cluster carries the annotation: %v", created.Annotations)
	}
	for _, entry := range created.ManagedFields {
		if entry.FieldsV1 != nil && strings.Contains(string(entry.FieldsV1.Raw), v1alpha1.ARMSubscriptionVersionAnnotation) {
			t.Errorf("%s owns the annotation, which was never stored: %s", entry.Manager, entry.FieldsV1.Raw)
		}
	}
	writtenWith(t, opName, created)

	sub.Spec.State = v1alpha1.ARMSubscriptionSuspended
	if _, err := hcp.ARMSubscriptions().Update(ctx, sub, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	staleOp := uuid.NewString()
	_, err = hcp.HCPClusters(ns).Create(ctx, asChecked(t, "late", staleOp, sub.ResourceVersion), metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil ||
		status.Status().Details.Kind != "armsubscriptions" || status.Status().Details.Name != subscriptionID ||
		!strings.Contains(err.Error(), sub.ResourceVersion) {
		t.Errorf("a create requiring the subscription at a version it has left: %v, want Conflict on armsubscriptions %s naming the version",
			err, subscriptionID)
	}
	if _, err := hcp.HCPClusters(ns).Get(ctx, "late", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused cluster: %v, want NotFound", err)
	}
	if _, err := hcp.ARMOperations().Get(ctx, staleOp, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused create's operation: %v, want NotFound", err)
	}

	for value, want := range map[string]func(error) bool{"abc": apierrors.IsBadRequest, "0": apierrors.IsBadRequest} {
		_, err := hcp.HCPClusters(ns).Create(ctx, asChecked(t, "bad", uuid.NewString(), value), metav1.CreateOptions{})
		if !want(err) || !strings.Contains(err.Error(), "metadata.annotations[hcp.aro.azure.com/arm-subscription-version]") {
			t.Errorf("a version of %q: %v, want BadRequest naming the annotation", value, err)
		}
	}
	alone := fixtures.HCPCluster(ns, "alone")
	alone.Annotations = map[string]string{v1alpha1.ARMSubscriptionVersionAnnotation: sub.ResourceVersion}
	if _, err := hcp.HCPClusters(ns).Create(ctx, alone, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "metadata.annotations[hcp.aro.azure.com/arm-subscription-version]") {
		t.Errorf("the annotation without an operation: %v, want Invalid naming it", err)
	}
	update, err := hcp.HCPClusters(ns).Get(ctx, "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	update.Annotations = map[string]string{v1alpha1.ARMSubscriptionVersionAnnotation: sub.ResourceVersion}
	if _, err := hcp.HCPClusters(ns).Update(ctx, update, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "metadata.annotations[hcp.aro.azure.com/arm-subscription-version]") {
		t.Errorf("an update carrying the annotation: %v, want Invalid naming it", err)
	}
}
