package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every resource this server serves.
const GroupName = "hcp.aro.azure.com"

// SchemeGroupVersion is the group and version objects are registered with.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// localSchemeBuilder lets generated defaulting and conversion register themselves in init.
	localSchemeBuilder = &SchemeBuilder
	SchemeBuilder      = runtime.NewSchemeBuilder(addKnownTypes, addFieldLabelConversionFuncs)
	AddToScheme        = localSchemeBuilder.AddToScheme
)

func init() {
	localSchemeBuilder.Register(addDefaultingFuncs)
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
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
