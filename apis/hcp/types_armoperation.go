package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ARMOperationRequest is what an ARM asynchronous operation was started for.
type ARMOperationRequest string

const (
	ARMOperationCreate            ARMOperationRequest = "Create"
	ARMOperationUpdate            ARMOperationRequest = "Update"
	ARMOperationDelete            ARMOperationRequest = "Delete"
	ARMOperationRequestCredential ARMOperationRequest = "RequestCredential"
	ARMOperationRevokeCredentials ARMOperationRequest = "RevokeCredentials"
)

// ARMOperationState is an ARM asynchronous operation's status, as ARM spells it.
type ARMOperationState string

const (
	ARMOperationAccepted     ARMOperationState = "Accepted"
	ARMOperationProvisioning ARMOperationState = "Provisioning"
	ARMOperationUpdating     ARMOperationState = "Updating"
	ARMOperationDeleting     ARMOperationState = "Deleting"
	ARMOperationSucceeded    ARMOperationState = "Succeeded"
	ARMOperationFailed       ARMOperationState = "Failed"
	ARMOperationCanceled     ARMOperationState = "Canceled"
)

// Final tells whether an operation in state s has ended: Succeeded, Failed and Canceled stay as they are.
func (s ARMOperationState) Final() bool {
	return s == ARMOperationSucceeded || s == ARMOperationFailed || s == ARMOperationCanceled
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMOperation is one ARM asynchronous operation (a PUT, PATCH, DELETE or POST action of the ARM
// frontend), named after its operation ID. A controller keeps its status in step with the object it acts
// on; it is deleted 7 days after it was created, as ARM keeps operations.
type ARMOperation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ARMOperationSpec `json:"spec"`
	// +optional
	Status ARMOperationStatus `json:"status,omitempty,omitzero"`
}

// ARMOperationSpec says what the operation does and who asked. It cannot change once created.
type ARMOperationSpec struct {
	// request is Create, Update, Delete, RequestCredential or RevokeCredentials.
	Request ARMOperationRequest `json:"request"`
	// resourceID is the ARM resource ID the operation acts on, as the caller spelled it.
	ResourceID string `json:"resourceID"`
	// subscriptionID is the subscription of resourceID, lowercased.
	SubscriptionID string `json:"subscriptionID"`
	// location is the region whose operation endpoints serve it.
	Location string `json:"location"`
	// target is the object the operation follows.
	Target ARMOperationTarget `json:"target"`
	// apiVersion is the ARM api-version the operation was started with.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// tenantID is the caller's home tenant (x-ms-home-tenant-id): only it may read the operation.
	// +optional
	TenantID string `json:"tenantID,omitempty"`
	// clientObjectID is the caller's object ID (x-ms-client-object-id): only it may read the operation.
	// +optional
	ClientObjectID string `json:"clientObjectID,omitempty"`
	// clientRequestID is the caller's x-ms-client-request-id.
	// +optional
	ClientRequestID string `json:"clientRequestID,omitempty"`
	// correlationRequestID is ARM's x-ms-correlation-request-id.
	// +optional
	CorrelationRequestID string `json:"correlationRequestID,omitempty"`
	// notificationURI is ARM's Azure-AsyncNotificationUri, to be told when the operation ends.
	// +optional
	NotificationURI string `json:"notificationURI,omitempty"`
}

// ARMOperationTarget names the object an operation follows.
type ARMOperationTarget struct {
	// resource is hcpclusters, nodepools or breakglasscredentials.
	Resource string `json:"resource"`
	// namespace is the object's namespace.
	Namespace string `json:"namespace"`
	// name is the object's name.
	Name string `json:"name"`
	// uid is the object's UID: an object of the same name made later is another one.
	UID types.UID `json:"uid"`
	// generation is the object's generation the operation waits for (its metadata.generation after the write).
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// ARMOperationStatus reports an operation as ARM's operation status endpoint does.
type ARMOperationStatus struct {
	// state is Accepted, Provisioning, Updating, Deleting, Succeeded, Failed or Canceled; the last three are final.
	// +optional
	State ARMOperationState `json:"state,omitempty"`
	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// endTime is when the operation reached a final state.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// error says why a Failed or Canceled operation ended so.
	// +optional
	Error *ARMOperationError `json:"error,omitempty"`
	// notificationTime is when ARM's notification URI was told that the operation ended.
	// +optional
	NotificationTime *metav1.Time `json:"notificationTime,omitempty"`
}

// ARMOperationError is the error of a failed operation, as ARM's CloudError carries it.
type ARMOperationError struct {
	// code is the error's code, e.g. Canceled or InternalServerError.
	Code string `json:"code"`
	// message says what went wrong.
	Message string `json:"message"`
	// target is what the error is about, when it is about one field or object.
	// +optional
	Target string `json:"target,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMOperationList is a list of ARMOperations.
type ARMOperationList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ARMOperation `json:"items"`
}
