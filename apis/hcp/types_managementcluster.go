package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ManagementCluster is a Kubernetes cluster that runs hosted control planes; one Maestro consumer.
type ManagementCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ManagementClusterSpec `json:"spec"`
	// +optional
	Status ManagementClusterStatus `json:"status,omitempty"`
}

// ManagementClusterSpec describes a management cluster.
type ManagementClusterSpec struct {
	// consumerName is the cluster's Maestro consumer, the topic segment its agent uses
	// (lowercase alphanumerics and '-'). Immutable.
	ConsumerName string `json:"consumerName"`
	// location is the Azure region the cluster serves. Immutable.
	Location string `json:"location"`
	// capacity is the most hosted clusters placed on it (at least 1).
	Capacity int32 `json:"capacity"`
	// schedulable lets new hosted clusters be placed on it (default true).
	// +optional
	Schedulable *bool `json:"schedulable,omitempty"`
}

// ManagementClusterStatus reports a management cluster.
type ManagementClusterStatus struct {
	// conditions report AgentConnected: True while the Maestro source hears from its agent, with the
	// time it last changed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// hostedClusters is the number of HCPClusters placed on it.
	// +optional
	HostedClusters int32 `json:"hostedClusters,omitempty"`
	// lastSeen is when its agent was last heard from.
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`
	// nodePools is the number of NodePools of the hosted clusters placed on it.
	// +optional
	NodePools int32 `json:"nodePools,omitempty"`
	// availableCapacity is how many more hosted clusters may be placed on it: capacity less hostedClusters.
	// +optional
	AvailableCapacity int32 `json:"availableCapacity,omitempty"`
	// lastResync is when its agent last asked for every bundle again, as it does whenever it (re)connects.
	// +optional
	LastResync *metav1.Time `json:"lastResync,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ManagementClusterList is a list of ManagementClusters.
type ManagementClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ManagementCluster `json:"items"`
}
