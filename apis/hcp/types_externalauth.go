package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ExternalAuth is an OIDC identity provider the users of one HCPCluster sign in with, instead of the
// cluster's built-in OAuth server. A cluster has at most one. It is delivered in the cluster's
// HostedCluster (spec.configuration.authentication).
type ExternalAuth struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExternalAuthSpec `json:"spec"`
	// +optional
	Status ExternalAuthStatus `json:"status,omitempty"`
}

// ExternalAuthSpec mirrors the ARM externalAuths properties.
type ExternalAuthSpec struct {
	// clusterName is the name of the HCPCluster in the same namespace this identity provider signs in to.
	// Immutable.
	ClusterName string `json:"clusterName"`
	// issuer is where tokens come from and who they must be issued to.
	Issuer TokenIssuer `json:"issuer"`
	// clients are the cluster's own components (the console, the CLI) that request tokens from the
	// identity provider, at most 20, each component (name and namespace) once.
	// +optional
	// +listType=atomic
	Clients []ExternalAuthClient `json:"clients,omitempty"`
	// claim says how a token's claims become a user and its groups, and which claims a token must have.
	Claim ExternalAuthClaim `json:"claim"`
}

// TokenIssuer is the identity provider's issuer.
type TokenIssuer struct {
	// url is the issuer URL (https), matched against the tokens' "iss" claim.
	URL string `json:"url"`
	// audiences are what a token's "aud" claim must contain one of: 1 to 10 entries.
	// +listType=atomic
	Audiences []string `json:"audiences"`
	// ca is a PEM bundle of certificate authorities that the issuer's serving certificate is checked
	// against; the system's trust when empty.
	// +optional
	CA string `json:"ca,omitempty"`
}

// ExternalAuthClientType says whether a client has a secret.
type ExternalAuthClientType string

const (
	// ExternalAuthClientConfidential clients authenticate with a secret the customer creates in the
	// hosted cluster.
	ExternalAuthClientConfidential ExternalAuthClientType = "Confidential"
	// ExternalAuthClientPublic clients have no secret.
	ExternalAuthClientPublic ExternalAuthClientType = "Public"
)

// ExternalAuthClient is a platform component of the cluster that requests tokens from the identity
// provider.
type ExternalAuthClient struct {
	// component is the platform component, by name and namespace.
	Component ExternalAuthClientComponent `json:"component"`
	// clientID is the component's client ID at the identity provider; one of the issuer's audiences.
	ClientID string `json:"clientID"`
	// extraScopes are requested besides the standard OIDC scopes.
	// +optional
	// +listType=atomic
	ExtraScopes []string `json:"extraScopes,omitempty"`
	// type is Confidential (the client has a secret) or Public.
	Type ExternalAuthClientType `json:"type"`
}

// ExternalAuthClientComponent names a platform component of the cluster.
type ExternalAuthClientComponent struct {
	// name is the component's name, 1 to 256 characters (console, say).
	Name string `json:"name"`
	// authClientNamespace is the namespace the component runs in, a DNS label (openshift-console, say).
	AuthClientNamespace string `json:"authClientNamespace"`
}

// ExternalAuthClaim says how a token's claims are mapped and checked.
type ExternalAuthClaim struct {
	// mappings make a user name and groups of a token's claims.
	Mappings TokenClaimMappings `json:"mappings"`
	// validationRules are claims a token must carry, with their values.
	// +optional
	// +listType=atomic
	ValidationRules []TokenClaimValidationRule `json:"validationRules,omitempty"`
}

// TokenClaimMappings make a user of a token.
type TokenClaimMappings struct {
	// username says which claim is the user name, and its prefix.
	Username UsernameClaim `json:"username"`
	// groups says which claim lists the user's groups, and their prefix.
	// +optional
	Groups *GroupsClaim `json:"groups,omitempty"`
}

// UsernamePrefixPolicy says whether a prefix goes before the user name.
type UsernamePrefixPolicy string

const (
	// UsernamePrefixPolicyNone leaves the prefix to the platform: "<issuer URL>#" unless the claim is email.
	UsernamePrefixPolicyNone UsernamePrefixPolicy = "None"
	// UsernamePrefixPolicyPrefix puts prefix before the user name.
	UsernamePrefixPolicyPrefix UsernamePrefixPolicy = "Prefix"
	// UsernamePrefixPolicyNoPrefix puts nothing before the user name.
	UsernamePrefixPolicyNoPrefix UsernamePrefixPolicy = "NoPrefix"
)

// UsernameClaim maps a claim to the user name.
type UsernameClaim struct {
	// claim is the name of the claim, 1 to 256 characters.
	Claim string `json:"claim"`
	// prefix goes before the user name; set exactly when prefixPolicy is Prefix.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// prefixPolicy is None (the default), Prefix or NoPrefix.
	// +optional
	PrefixPolicy UsernamePrefixPolicy `json:"prefixPolicy,omitempty"`
}

// GroupsClaim maps a claim to the user's groups.
type GroupsClaim struct {
	// claim is the name of the claim, 1 to 256 characters; its value is a list of groups.
	Claim string `json:"claim"`
	// prefix goes before every group name.
	// +optional
	Prefix string `json:"prefix,omitempty"`
}

// TokenValidationRuleType is the kind of a claim validation rule.
type TokenValidationRuleType string

// TokenValidationRuleRequiredClaim requires a claim with a value.
const TokenValidationRuleRequiredClaim TokenValidationRuleType = "RequiredClaim"

// TokenClaimValidationRule is a rule a token's claims must follow.
type TokenClaimValidationRule struct {
	// type is RequiredClaim (the default).
	// +optional
	Type TokenValidationRuleType `json:"type,omitempty"`
	// requiredClaim is the claim a token must carry, and its value.
	RequiredClaim TokenRequiredClaim `json:"requiredClaim"`
}

// TokenRequiredClaim is a claim a token must carry with a value.
type TokenRequiredClaim struct {
	// claim is the claim's name.
	Claim string `json:"claim"`
	// requiredValue is the value the claim must have.
	RequiredValue string `json:"requiredValue"`
}

// ExternalAuthStatus is what the service reports of an identity provider.
type ExternalAuthStatus struct {
	// provisioningState is Accepted, Provisioning, Updating, AwaitingSecret, Deleting, Succeeded or
	// Failed. AwaitingSecret: the provider is delivered, and a confidential client's secret is not yet
	// in the hosted cluster.
	// +optional
	ProvisioningState ProvisioningState `json:"provisioningState,omitempty"`
	// conditions report the provider's state: Delivered (its generation is in the applied
	// HostedCluster), Available, Progressing and Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ExternalAuthList is a list of ExternalAuths.
type ExternalAuthList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ExternalAuth `json:"items"`
}
