// Package clusterstatus is how the HCPCluster controllers write the cluster's status: placement and version
// resolution write it without depending on delivery.
package clusterstatus

import (
	"context"
	"reflect"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/conditions"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

// Update writes, as fieldManager, the status mutate makes of a copy of cluster, unless it changes
// nothing. A conflict comes back as an error: the caller's queue retries with the informer's newer copy.
func Update(ctx context.Context, client versioned.Interface, fieldManager string, cluster *v1alpha1.HCPCluster, mutate func(*v1alpha1.HCPCluster)) (*v1alpha1.HCPCluster, error) {
	updated := cluster.DeepCopy()
	mutate(updated)
	// Most syncs change nothing, and a copy left as it was is equal field by field, which reflect.DeepEqual
	// tells at a fifth of Semantic's cost (Semantic calls its time equality through reflect for every
	// condition; 2 against 9 µs for a status of five conditions). Semantic decides the rest: a time set
	// again to the same instant, or an empty list for none, changes nothing either.
	if reflect.DeepEqual(updated.Status, cluster.Status) || apiequality.Semantic.DeepEqual(updated.Status, cluster.Status) {
		return cluster, nil
	}
	return client.HcpV1alpha1().HCPClusters(cluster.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
}

// SetCondition sets a condition of cluster for its current generation.
func SetCondition(cluster *v1alpha1.HCPCluster, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&cluster.Status.Conditions, cluster.Generation, conditionType, status, reason, message)
}

// Published says whether the cluster's bundle was ever handed to its management cluster: an agent reported a
// generation or a version of it, or its Delivered condition has a reason only a publish leads to. What holds
// back delivery may hold back only the first one: a cluster out there gets its new generations whatever
// its later checks say.
func Published(cluster *v1alpha1.HCPCluster) bool {
	if cluster.Status.ObservedGeneration > 0 || len(cluster.Status.Version.History) > 0 {
		return true
	}
	delivered := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionDelivered)
	return delivered != nil && delivered.Reason != v1alpha1.ReasonAwaitingAzure && delivered.Reason != ReasonRenderFailed
}

// ReasonRenderFailed is the reason of Delivered when the cluster's spec cannot be rendered into manifests.
const ReasonRenderFailed = "RenderFailed"

// AzureChecked returns the cluster's condition conditionType when it is True from a check of Azure, nil
// otherwise: a True that says AzureDisabled was written when the service checked nothing.
func AzureChecked(cluster *v1alpha1.HCPCluster, conditionType string) *metav1.Condition {
	cond := meta.FindStatusCondition(cluster.Status.Conditions, conditionType)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason == v1alpha1.ReasonAzureDisabled {
		return nil
	}
	return cond
}

// maxRecheckFactor bounds RecheckAfter: a refusal is asked about again at least every 16 base intervals
// (8 minutes for the default 30 s).
const maxRecheckFactor = 16

// RecheckAfter is how soon Azure is asked again about a cluster whose conditionType it refused: base at
// first, then a quarter of how long the condition has been False, up to maxRecheckFactor times base. The
// customer may fix what was refused at any time, and one who just tried hears soon; a cluster refused
// for days does not cost Azure a request every base interval, which many such clusters would be
// throttled for.
func RecheckAfter(cluster *v1alpha1.HCPCluster, conditionType string, base time.Duration, now time.Time) time.Duration {
	cond := meta.FindStatusCondition(cluster.Status.Conditions, conditionType)
	if cond == nil || cond.Status != metav1.ConditionFalse {
		return base
	}
	return max(base, min(now.Sub(cond.LastTransitionTime.Time)/4, maxRecheckFactor*base))
}

// AddFinalizer writes, as fieldManager, the cluster with finalizer added, unless it has it: what a controller
// makes outside etcd for a cluster is made only once the cluster cannot go without it being undone.
func AddFinalizer(ctx context.Context, client versioned.Interface, fieldManager string, cluster *v1alpha1.HCPCluster, finalizer string) (*v1alpha1.HCPCluster, error) {
	if slices.Contains(cluster.Finalizers, finalizer) {
		return cluster, nil
	}
	updated := cluster.DeepCopy()
	updated.Finalizers = append(updated.Finalizers, finalizer)
	return client.HcpV1alpha1().HCPClusters(cluster.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
}

// RemoveFinalizer writes, as fieldManager, the cluster without finalizer; a cluster already gone is no error.
func RemoveFinalizer(ctx context.Context, client versioned.Interface, fieldManager string, cluster *v1alpha1.HCPCluster, finalizer string) error {
	updated := cluster.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool { return f == finalizer })
	_, err := client.HcpV1alpha1().HCPClusters(cluster.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
