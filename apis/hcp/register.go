package hcp

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every resource this server serves.
const GroupName = "hcp.aro.azure.com"

// SchemeGroupVersion is the internal version objects are registered with.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

var (
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

// Kind takes an unqualified kind and returns a group-qualified one.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource and returns a group-qualified one.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&HCPCluster{}, &HCPClusterList{},
		&NodePool{}, &NodePoolList{},
		&ExternalAuth{}, &ExternalAuthList{},
		&ClusterInspection{}, &ClusterInspectionList{},
		&OpenShiftVersion{}, &OpenShiftVersionList{},
		&BreakglassCredential{}, &BreakglassCredentialList{}, &CredentialRevocation{},
		&ManagementCluster{}, &ManagementClusterList{},
		&ARMSubscription{}, &ARMSubscriptionList{},
		&ARMOperation{}, &ARMOperationList{},
	)
	return nil
}
