package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BreakglassCredentialPhase is the life stage of a break-glass credential.
type BreakglassCredentialPhase string

const (
	BreakglassCredentialPhasePending BreakglassCredentialPhase = "Pending"
	BreakglassCredentialPhaseIssued  BreakglassCredentialPhase = "Issued"
	BreakglassCredentialPhaseFailed  BreakglassCredentialPhase = "Failed"
	BreakglassCredentialPhaseExpired BreakglassCredentialPhase = "Expired"
	BreakglassCredentialPhaseRevoked BreakglassCredentialPhase = "Revoked"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredential is a short-lived cluster-admin client certificate for one HCPCluster.
type BreakglassCredential struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec BreakglassCredentialSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// +optional
	Status BreakglassCredentialStatus `json:"status,omitempty,omitzero" protobuf:"bytes,3,opt,name=status"`
}

// BreakglassCredentialSpec asks for a credential. It cannot change once created.
type BreakglassCredentialSpec struct {
	// clusterName is the HCPCluster in the same namespace the credential is for.
	ClusterName string `json:"clusterName" protobuf:"bytes,1,opt,name=clusterName"`
	// certificateSigningRequest is a PEM encoded PKCS#10 request with subject
	// CN=system:customer-break-glass:<user>, O=system:masters. When empty the server generates the key.
	// +optional
	CertificateSigningRequest string `json:"certificateSigningRequest,omitempty" protobuf:"bytes,2,opt,name=certificateSigningRequest"`
	// expirationSeconds is the credential's lifetime, 600 (10 minutes) to 86400 (24 hours, the default).
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty" protobuf:"varint,3,opt,name=expirationSeconds"`
}

// BreakglassCredentialStatus reports the credential.
type BreakglassCredentialStatus struct {
	// phase is Pending, Issued, Failed, Expired or Revoked.
	// +optional
	Phase BreakglassCredentialPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=BreakglassCredentialPhase"`
	// certificate is the PEM encoded issued client certificate.
	// +optional
	Certificate string `json:"certificate,omitempty" protobuf:"bytes,2,opt,name=certificate"`
	// expirationTimestamp is when the certificate stops being valid.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty" protobuf:"bytes,3,opt,name=expirationTimestamp"`
	// conditions report the credential's progress.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
	// certificateAuthority is the PEM encoded CA bundle the hosted cluster's API server's serving
	// certificate chains to, as the control plane reported it when the credential was issued.
	// +optional
	CertificateAuthority string `json:"certificateAuthority,omitempty" protobuf:"bytes,5,opt,name=certificateAuthority"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CredentialRevocation asks that every break-glass credential of an HCPCluster issued so far stop working:
// the body of a create on hcpclusters/<name>/revokecredentials, named after the cluster. The server
// answers 202 and reports progress in the cluster's RevokingCredentials condition.
type CredentialRevocation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredentialList is a list of BreakglassCredentials.
type BreakglassCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []BreakglassCredential `json:"items" protobuf:"bytes,2,rep,name=items"`
}
