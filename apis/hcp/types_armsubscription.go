package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ARMSubscriptionState is the state Azure Resource Manager reports for a subscription.
type ARMSubscriptionState string

const (
	ARMSubscriptionRegistered   ARMSubscriptionState = "Registered"
	ARMSubscriptionUnregistered ARMSubscriptionState = "Unregistered"
	ARMSubscriptionWarned       ARMSubscriptionState = "Warned"
	ARMSubscriptionSuspended    ARMSubscriptionState = "Suspended"
	ARMSubscriptionDeleted      ARMSubscriptionState = "Deleted"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMSubscription is an Azure subscription as Azure Resource Manager last registered it with the service,
// named after the lowercased subscription ID. Its state decides what the ARM frontend lets the
// subscription do; a Deleted subscription's HCPClusters are deleted.
type ARMSubscription struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ARMSubscriptionSpec `json:"spec"`
	// +optional
	Status ARMSubscriptionStatus `json:"status,omitempty,omitzero"`
}

// ARMSubscriptionSpec is the body of ARM's subscription PUT.
type ARMSubscriptionSpec struct {
	// state is Registered, Unregistered, Warned, Suspended or Deleted.
	State ARMSubscriptionState `json:"state"`
	// registrationDate is when the subscription registered the resource provider, as ARM wrote it.
	// +optional
	RegistrationDate string `json:"registrationDate,omitempty"`
	// properties are the subscription's properties as ARM sent them.
	// +optional
	Properties *ARMSubscriptionProperties `json:"properties,omitempty"`
}

// ARMSubscriptionProperties are a subscription's properties as ARM sends them.
type ARMSubscriptionProperties struct {
	// tenantID is the subscription's home tenant.
	// +optional
	TenantID string `json:"tenantID,omitempty"`
	// locationPlacementID is ARM's placement of the subscription.
	// +optional
	LocationPlacementID string `json:"locationPlacementID,omitempty"`
	// quotaID is the subscription's offer.
	// +optional
	QuotaID string `json:"quotaID,omitempty"`
	// spendingLimit is On, Off or CurrentPeriodOff.
	// +optional
	SpendingLimit string `json:"spendingLimit,omitempty"`
	// registeredFeatures are the preview features (AFECs) the subscription registered.
	// +optional
	// +listType=map
	// +listMapKey=name
	RegisteredFeatures []ARMFeature `json:"registeredFeatures,omitempty"`
	// managedByTenants are the tenants that manage the subscription through Azure Lighthouse.
	// +optional
	// +listType=atomic
	ManagedByTenants []ARMManagedByTenant `json:"managedByTenants,omitempty"`
}

// ARMFeature is a preview feature registered on a subscription.
type ARMFeature struct {
	// name is the feature's name, e.g. Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures.
	Name string `json:"name"`
	// state is the feature's registration state, e.g. Registered.
	// +optional
	State string `json:"state,omitempty"`
}

// ARMManagedByTenant is a tenant that manages a subscription.
type ARMManagedByTenant struct {
	// tenantID is the managing tenant.
	TenantID string `json:"tenantID"`
}

// ARMSubscriptionStatus reports what the service did about the subscription's state.
type ARMSubscriptionStatus struct {
	// conditions report ResourcesDeleted for a Deleted subscription: True once none of its HCPClusters is left.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ARMSubscriptionList is a list of ARMSubscriptions.
type ARMSubscriptionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ARMSubscription `json:"items"`
}
