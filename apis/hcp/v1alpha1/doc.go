// Package v1alpha1 is the v1alpha1 version of the hcp.aro.azure.com API: the
// hosted clusters, node pools, break-glass credentials and management clusters
// of the ARO HCP service, as clients see them on the wire.
//
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=github.com/aro-hcp/hcp-apiserver/apis/hcp
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.azure.aro.hcp.v1alpha1
// +k8s:protobuf-gen=package
// +groupName=hcp.aro.azure.com
package v1alpha1
