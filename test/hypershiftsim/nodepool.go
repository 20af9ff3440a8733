package hypershiftsim

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

const (
	reasonReconciliationActive        = "ReconciliationActive"
	reasonIgnitionNotReached          = "ignitionNotReached" // sic: HyperShift's spelling
	reasonWaitingForAvailableMachines = "WaitingForAvailableMachines"
)

// nodePoolStatus is the part of NodePool .status that the simulator writes.
type nodePoolStatus struct {
	Replicas   int32              `json:"replicas"`
	Version    string             `json:"version,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

var nodePoolStatusFields = []string{"replicas", "version", "conditions"}

// nodePoolInput is what the status of a NodePool is computed from.
type nodePoolInput struct {
	generation int64
	now        time.Time

	image       string
	version     string // "" when the image is not a release the simulator knows
	replicas    int32
	autoScaling bool
	autoRepair  bool

	// clusterAvailable: machines can join only a HostedCluster that is Available.
	clusterAvailable             bool
	neverReady                   bool
	provisionDelay, upgradeDelay time.Duration
}

func (s *Simulator) nodePoolInput(np *unstructured.Unstructured, now time.Time) nodePoolInput {
	in := nodePoolInput{
		generation:     np.GetGeneration(),
		now:            now,
		neverReady:     picked(s.opts.NodePoolNeverReady, np.GetNamespace(), np.GetName()),
		provisionDelay: s.opts.ProvisionDelay,
		upgradeDelay:   s.opts.UpgradeDelay,
	}
	in.image, _, _ = unstructured.NestedString(np.Object, "spec", "release", "image")
	if v, ok := s.opts.ReleaseVersion(in.image); ok {
		in.version = v
	}
	replicas, hasReplicas, _ := unstructured.NestedInt64(np.Object, "spec", "replicas")
	min, autoScaling, _ := unstructured.NestedInt64(np.Object, "spec", "autoScaling", "min")
	in.autoScaling = autoScaling
	if hasReplicas {
		in.replicas = int32(replicas)
	} else {
		in.replicas = int32(min)
	}
	in.autoRepair, _, _ = unstructured.NestedBool(np.Object, "spec", "management", "autoRepair")

	clusterName, _, _ := unstructured.NestedString(np.Object, "spec", "clusterName")
	if obj, exists, err := s.hostedClusters.GetIndexer().GetByKey(np.GetNamespace() + "/" + clusterName); err == nil && exists {
		hc := obj.(*unstructured.Unstructured)
		var st hostedClusterStatus
		if readStatus(hc, &st) == nil && hc.GetDeletionTimestamp() == nil {
			in.clusterAvailable = meta.IsStatusConditionTrue(st.Conditions, "Available")
		}
	}
	return in
}

// computeNodePoolStatus advances st by what has happened by in.now and says after
// how long the next step is due.
func computeNodePoolStatus(in nodePoolInput, st nodePoolStatus) (nodePoolStatus, time.Duration) {
	var requeue time.Duration
	set := func(t string, status metav1.ConditionStatus, reason, message string) {
		condition(&st.Conditions, in.generation, in.now, t, status, reason, message)
	}
	// Machines boot once the control plane is up and fetch their ignition
	// payload: ReachedIgnitionEndpoint's transition time is when provisioning started.
	var provisioningStarted time.Time
	ignition := meta.FindStatusCondition(st.Conditions, "ReachedIgnitionEndpoint")
	reachedIgnition := ignition != nil && ignition.Status == metav1.ConditionTrue
	if reachedIgnition {
		provisioningStarted = ignition.LastTransitionTime.Time
	} else if in.clusterAvailable && in.version != "" && !in.neverReady {
		reachedIgnition, provisioningStarted = true, stamp(in.now).Time
	}

	// status.version is set once the pool's nodes have been Ready at a version.
	ready := st.Version != "" && !in.neverReady
	if st.Version == "" && reachedIgnition && !in.neverReady {
		if left := remaining(in.now, provisioningStarted, in.provisionDelay); left > 0 {
			requeue = left
		} else {
			ready, st.Version = true, in.version
		}
	}
	updating := ready && in.version != "" && st.Version != in.version
	if updating {
		if u := meta.FindStatusCondition(st.Conditions, "UpdatingVersion"); u != nil && u.Status == metav1.ConditionTrue {
			if left := remaining(in.now, u.LastTransitionTime.Time, in.upgradeDelay); left > 0 {
				requeue = left
			} else {
				st.Version, updating = in.version, false
			}
		} else {
			requeue = remaining(in.now, stamp(in.now).Time, in.upgradeDelay)
		}
	}
	st.Replicas = 0
	if ready {
		st.Replicas = in.replicas
	}

	set("AutoscalingEnabled", conditionStatus(in.autoScaling), reasonAsExpected, "")
	set("UpdateManagementEnabled", metav1.ConditionTrue, reasonAsExpected, "")
	if in.version != "" {
		set("ValidReleaseImage", metav1.ConditionTrue, reasonAsExpected, "Using release image: "+in.image)
	} else {
		set("ValidReleaseImage", metav1.ConditionFalse, reasonInvalidImage, invalidImageMessage(in.image))
	}
	set("ValidArchPlatform", metav1.ConditionTrue, reasonAsExpected, "")
	set("ReconciliationActive", metav1.ConditionTrue, reasonReconciliationActive, "Reconciliation active on resource")
	set("SupportedVersionSkew", metav1.ConditionTrue, reasonAsExpected, "Release image version is valid")
	set("ValidMachineConfig", metav1.ConditionTrue, reasonAsExpected, "")
	set("UpdatingConfig", metav1.ConditionFalse, reasonAsExpected, "")
	if updating {
		set("UpdatingVersion", metav1.ConditionTrue, reasonAsExpected, "Updating version in progress. Target version: "+in.version)
	} else {
		set("UpdatingVersion", metav1.ConditionFalse, reasonAsExpected, "")
	}
	if reachedIgnition {
		set("ValidGeneratedPayload", metav1.ConditionTrue, reasonAsExpected, "Payload generated successfully")
		set("ReachedIgnitionEndpoint", metav1.ConditionTrue, reasonAsExpected, "")
	} else {
		set("ValidGeneratedPayload", metav1.ConditionFalse, reasonWaitingForAvailable, "Waiting for the hosted control plane to become available")
		set("ReachedIgnitionEndpoint", metav1.ConditionFalse, reasonIgnitionNotReached, "")
	}
	if ready {
		set("AllMachinesReady", metav1.ConditionTrue, reasonAsExpected, messageAllIsWell)
		set("AllNodesHealthy", metav1.ConditionTrue, reasonAsExpected, messageAllIsWell)
	} else {
		set("AllMachinesReady", metav1.ConditionFalse, reasonWaitingForAvailable, fmt.Sprintf("0 of %d machines are ready", in.replicas))
		set("AllNodesHealthy", metav1.ConditionFalse, reasonWaitingForAvailable, fmt.Sprintf("0 of %d nodes are healthy", in.replicas))
	}
	set("ValidPlatformConfig", metav1.ConditionTrue, reasonAsExpected, messageAllIsWell)
	set("ValidTuningConfig", metav1.ConditionTrue, reasonAsExpected, "")
	set("UpdatingPlatformMachineTemplate", metav1.ConditionFalse, reasonAsExpected, "")
	if ready {
		set("Ready", metav1.ConditionTrue, reasonAsExpected, "")
	} else {
		set("Ready", metav1.ConditionFalse, reasonWaitingForAvailableMachines,
			fmt.Sprintf("Minimum availability requires %d replicas, current 0 available", in.replicas))
	}
	set("AutorepairEnabled", conditionStatus(in.autoRepair), reasonAsExpected, "")
	return st, requeue
}

func (s *Simulator) syncNodePool(ctx context.Context, key cache.ObjectName) (time.Duration, error) {
	logger := klog.FromContext(ctx).WithValues("nodePool", key)
	obj, exists, err := s.nodePools.GetIndexer().GetByKey(key.String())
	if err != nil || !exists {
		return 0, err
	}
	np := obj.(*unstructured.Unstructured)
	client := s.dynamic.Resource(NodePoolResource).Namespace(key.Namespace)

	if np.GetDeletionTimestamp() != nil {
		if !hasFinalizer(np) {
			return 0, nil
		}
		if left := remaining(now(), np.GetDeletionTimestamp().Time, s.opts.DeletionDelay); left > 0 {
			return left, nil
		}
		np = np.DeepCopy()
		np.SetFinalizers(withoutFinalizer(np.GetFinalizers()))
		_, err := client.Update(ctx, np, metav1.UpdateOptions{})
		return 0, err
	}
	if !hasFinalizer(np) {
		np = np.DeepCopy()
		np.SetFinalizers(append(np.GetFinalizers(), Finalizer))
		if np, err = client.Update(ctx, np, metav1.UpdateOptions{}); err != nil {
			return 0, err
		}
	}

	var current, desired nodePoolStatus
	if err := readStatus(np, &current); err != nil {
		return 0, err
	}
	if err := readStatus(np, &desired); err != nil {
		return 0, err
	}
	desired, requeue := computeNodePoolStatus(s.nodePoolInput(np, now()), desired)
	if equality.Semantic.DeepEqual(current, desired) {
		return requeue, nil
	}
	np = np.DeepCopy()
	if err := writeStatus(np, &desired, nodePoolStatusFields...); err != nil {
		return 0, err
	}
	if _, err := client.UpdateStatus(ctx, np, metav1.UpdateOptions{}); err != nil {
		return 0, err
	}
	logger.V(2).Info("Updated NodePool status", "ready", meta.IsStatusConditionTrue(desired.Conditions, "Ready"),
		"replicas", desired.Replicas, "version", desired.Version)
	return requeue, nil
}

// indexNodePoolByCluster keys a NodePool by its HostedCluster, <namespace>/<spec.clusterName>.
func indexNodePoolByCluster(obj any) ([]string, error) {
	np, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	cluster, _, _ := unstructured.NestedString(np.Object, "spec", "clusterName")
	if cluster == "" {
		return nil, nil
	}
	return []string{np.GetNamespace() + "/" + cluster}, nil
}
