package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BreakglassUserPrefix and BreakglassGroup make the subject HyperShift's customer-break-glass signer signs,
// CN=<prefix><user>, O=<group>, and the only one a certificate request may ask for: the credential is
// cluster-admin of the hosted cluster.
const (
	BreakglassUserPrefix = "system:customer-break-glass:"
	BreakglassGroup      = "system:masters"
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

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredential is a short-lived cluster-admin client certificate for one HCPCluster.
type BreakglassCredential struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BreakglassCredentialSpec `json:"spec"`
	// +optional
	Status BreakglassCredentialStatus `json:"status,omitempty"`
}

// BreakglassCredentialSpec asks for a credential. It cannot change once created.
type BreakglassCredentialSpec struct {
	// clusterName is the HCPCluster in the same namespace the credential is for.
	ClusterName string `json:"clusterName"`
	// certificateSigningRequest is a PEM encoded PKCS#10 request with subject
	// CN=system:customer-break-glass:<user>, O=system:masters. When empty the server generates the key.
	// +optional
	CertificateSigningRequest string `json:"certificateSigningRequest,omitempty"`
	// expirationSeconds is the credential's lifetime, 600 (10 minutes) to 86400 (24 hours, the default).
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
}

// BreakglassCredentialStatus reports the credential.
type BreakglassCredentialStatus struct {
	// phase is Pending, Issued, Failed, Expired or Revoked.
	// +optional
	Phase BreakglassCredentialPhase `json:"phase,omitempty"`
	// certificate is the PEM encoded issued client certificate.
	// +optional
	Certificate string `json:"certificate,omitempty"`
	// expirationTimestamp is when the certificate stops being valid.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty"`
	// conditions report the credential's progress.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// certificateAuthority is the PEM encoded CA bundle the hosted cluster's API server's serving
	// certificate chains to, as the control plane reported it when the credential was issued.
	// +optional
	CertificateAuthority string `json:"certificateAuthority,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CredentialRevocation asks that every break-glass credential of an HCPCluster issued so far stop working:
// the body of a create on hcpclusters/<name>/revokecredentials, named after the cluster. The server
// answers 202 and reports progress in the cluster's RevokingCredentials condition.
type CredentialRevocation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BreakglassCredentialList is a list of BreakglassCredentials.
type BreakglassCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []BreakglassCredential `json:"items"`
}
