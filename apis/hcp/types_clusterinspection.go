package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// InspectionView is one of the fixed, documented views of a hosted control plane an inspection reads.
type InspectionView string

const (
	InspectionViewHostedCluster    InspectionView = "hostedcluster"
	InspectionViewNodePools        InspectionView = "nodepools"
	InspectionViewControlPlanePods InspectionView = "controlplane-pods"
	InspectionViewEvents           InspectionView = "events"
	InspectionViewLogs             InspectionView = "logs"
)

// ClusterInspectionPhase is the life stage of an inspection.
type ClusterInspectionPhase string

const (
	ClusterInspectionPhasePending  ClusterInspectionPhase = "Pending"
	ClusterInspectionPhaseAnswered ClusterInspectionPhase = "Answered"
	ClusterInspectionPhaseFailed   ClusterInspectionPhase = "Failed"
)

// ConditionAnswered is the condition of an inspection that says whether the management cluster's agent
// answered it, and why not.
const ConditionAnswered = "Answered"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterInspection is a read-only, time-limited look at an HCPCluster's hosted control plane on its
// management cluster, for SREs: one of a fixed set of views, read by the management cluster's agent and
// returned in status. It is deleted when its time to live is over.
type ClusterInspection struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterInspectionSpec `json:"spec"`
	// +optional
	Status ClusterInspectionStatus `json:"status,omitempty"`
}

// ClusterInspectionSpec says what to read and why. It cannot change once created.
type ClusterInspectionSpec struct {
	// clusterName is the HCPCluster in the same namespace to inspect.
	ClusterName string `json:"clusterName"`
	// view is what to read: hostedcluster, nodepools, controlplane-pods, events or logs.
	View InspectionView `json:"view"`
	// container is the control-plane container whose log the logs view reads.
	// +optional
	Container string `json:"container,omitempty"`
	// pod is the control-plane pod the logs view reads; the first pod with the container when empty.
	// +optional
	Pod string `json:"pod,omitempty"`
	// tailLines is how many of the log's last lines the logs view reads, 1 to 10000 (100 by default).
	// +optional
	TailLines *int64 `json:"tailLines,omitempty"`
	// reason says why the control plane is inspected; it is kept in the audit log.
	Reason string `json:"reason"`
	// ttlSeconds is how long the inspection and its answer live, 10 to 3600 (900 by default).
	// +optional
	TTLSeconds *int64 `json:"ttlSeconds,omitempty"`
	// username is who asked, set by the server from the request.
	// +optional
	Username string `json:"username,omitempty"`
}

// ClusterInspectionStatus is the answer.
type ClusterInspectionStatus struct {
	// phase is Pending, Answered or Failed.
	// +optional
	Phase ClusterInspectionPhase `json:"phase,omitempty"`
	// conditions report the inspection's progress.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// expirationTimestamp is when the inspection is deleted.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty"`
	// readAt is when the agent read the management cluster.
	// +optional
	ReadAt *metav1.Time `json:"readAt,omitempty"`
	// items are the objects read, trimmed to what an inspection needs.
	// +optional
	// +listType=atomic
	Items []runtime.RawExtension `json:"items,omitempty"`
	// log is the tail of the container's log the logs view read.
	// +optional
	Log string `json:"log,omitempty"`
	// truncated says the answer did not fit the limit of what an agent reports: omitted items (or log
	// bytes, from the start of the log) were left out.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
	// omitted counts what was left out of a truncated answer.
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterInspectionList is a list of ClusterInspections.
type ClusterInspectionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterInspection `json:"items"`
}
