package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePool is a pool of worker virtual machines of one HCPCluster.
type NodePool struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec NodePoolSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status NodePoolStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// NodePoolSpec mirrors the ARM nodePools properties.
type NodePoolSpec struct {
	// clusterName is the name of the HCPCluster in the same namespace this pool belongs to. Immutable.
	ClusterName string `json:"clusterName" protobuf:"bytes,1,opt,name=clusterName"`
	// version is the OpenShift version (MAJOR.MINOR.PATCH) of the pool's nodes.
	// +optional
	Version VersionProfile `json:"version,omitempty,omitzero" protobuf:"bytes,2,opt,name=version"`
	// platform is the Azure configuration of the pool's VMs. Immutable.
	Platform NodePoolPlatformProfile `json:"platform" protobuf:"bytes,3,opt,name=platform"`
	// replicas is the fixed number of nodes; set it or autoScaling, not both.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,4,opt,name=replicas"`
	// autoScaling lets the autoscaler move the node count between min and max; set it or replicas, not both.
	// +optional
	AutoScaling *NodePoolAutoScaling `json:"autoScaling,omitempty" protobuf:"bytes,5,opt,name=autoScaling"`
	// autoRepair replaces unhealthy nodes (default true). Immutable.
	// +optional
	AutoRepair *bool `json:"autoRepair,omitempty" protobuf:"varint,6,opt,name=autoRepair"`
	// labels are put on every node of the pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,7,rep,name=labels"`
	// taints are put on every node of the pool.
	// +optional
	// +listType=atomic
	Taints []Taint `json:"taints,omitempty" protobuf:"bytes,8,rep,name=taints"`
	// nodeDrainTimeoutMinutes is how long node drains may take before they are forced, 0 to 10080.
	// +optional
	NodeDrainTimeoutMinutes *int32 `json:"nodeDrainTimeoutMinutes,omitempty" protobuf:"varint,9,opt,name=nodeDrainTimeoutMinutes"`
	// upgradeType is Replace (the default: new nodes replace old ones) or InPlace. Immutable.
	// +optional
	UpgradeType string `json:"upgradeType,omitempty" protobuf:"bytes,10,opt,name=upgradeType"`
	// config are MachineConfig, KubeletConfig, ContainerRuntimeConfig or ImageDigestMirrorSet
	// documents applied to the pool's nodes, at most 10.
	// +optional
	// +listType=atomic
	Config []runtime.RawExtension `json:"config,omitempty" protobuf:"bytes,11,rep,name=config"`
	// tuningConfig are Tuned or PerformanceProfile documents applied to the pool's nodes, at most 10.
	// +optional
	// +listType=atomic
	TuningConfig []runtime.RawExtension `json:"tuningConfig,omitempty" protobuf:"bytes,12,rep,name=tuningConfig"`
}

// NodePoolPlatformProfile is the Azure configuration of a node pool's VMs.
type NodePoolPlatformProfile struct {
	// subnetID is the ARM ID of the subnet of the pool's VMs; the cluster's subnet when empty.
	// +optional
	SubnetID string `json:"subnetID,omitempty" protobuf:"bytes,1,opt,name=subnetID"`
	// vmSize is the Azure VM size, for example Standard_D8s_v3.
	VMSize string `json:"vmSize" protobuf:"bytes,2,opt,name=vmSize"`
	// enableEncryptionAtHost encrypts the VMs' temporary disks and caches (default false).
	// +optional
	EnableEncryptionAtHost bool `json:"enableEncryptionAtHost,omitempty" protobuf:"varint,3,opt,name=enableEncryptionAtHost"`
	// osDisk configures the VMs' OS disk.
	// +optional
	OSDisk OSDiskProfile `json:"osDisk,omitempty,omitzero" protobuf:"bytes,4,opt,name=osDisk"`
	// availabilityZone pins the pool to one zone of the region.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty" protobuf:"bytes,5,opt,name=availabilityZone"`
}

// OSDiskProfile configures the OS disk of a node pool's VMs.
type OSDiskProfile struct {
	// sizeGiB is the disk size, 64 (the default) to 4095.
	// +optional
	SizeGiB int32 `json:"sizeGiB,omitempty" protobuf:"varint,1,opt,name=sizeGiB"`
	// diskStorageAccountType is Premium_LRS (the default), StandardSSD_LRS or Standard_LRS.
	// +optional
	DiskStorageAccountType string `json:"diskStorageAccountType,omitempty" protobuf:"bytes,2,opt,name=diskStorageAccountType"`
	// encryptionSetID is the ARM ID of a disk encryption set (Microsoft.Compute/diskEncryptionSets).
	// +optional
	EncryptionSetID string `json:"encryptionSetID,omitempty" protobuf:"bytes,3,opt,name=encryptionSetID"`
	// diskType is Managed (the default) or Ephemeral.
	// +optional
	DiskType string `json:"diskType,omitempty" protobuf:"bytes,4,opt,name=diskType"`
}

// NodePoolAutoScaling bounds the node count of an autoscaled pool.
type NodePoolAutoScaling struct {
	// min is the fewest nodes.
	Min int32 `json:"min" protobuf:"varint,1,opt,name=min"`
	// max is the most nodes; at least min.
	Max int32 `json:"max" protobuf:"varint,2,opt,name=max"`
}

// Taint is a Kubernetes taint put on a pool's nodes.
type Taint struct {
	// key is a qualified name (an optional DNS subdomain prefix and '/', then at most 63 characters).
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// value is at most 63 characters.
	// +optional
	Value string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	// effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect" protobuf:"bytes,3,opt,name=effect"`
}

// NodePoolStatus is what the service reports of a node pool.
type NodePoolStatus struct {
	// provisioningState is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled.
	// +optional
	ProvisioningState ProvisioningState `json:"provisioningState,omitempty" protobuf:"bytes,1,opt,name=provisioningState,casttype=ProvisioningState"`
	// conditions report the pool's state (Ready, Progressing, Degraded, ...).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	// replicas is the number of nodes the pool has now.
	// +optional
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,4,opt,name=replicas"`
	// version is the OpenShift version the pool's nodes run.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,5,opt,name=version"`
	// desiredVersion is the version the service delivers to a pool that names one: spec.version.id, or a
	// newer patch of its minor that the update graph moved it to while its cluster's upgradePolicy is
	// Automatic, never ahead of its control plane.
	// +optional
	DesiredVersion string `json:"desiredVersion,omitempty" protobuf:"bytes,6,opt,name=desiredVersion"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []NodePool `json:"items" protobuf:"bytes,2,rep,name=items"`
}
