package render

import (
	"fmt"
	"strings"

	certificatesv1alpha1 "github.com/openshift/hypershift/api/certificates/v1alpha1"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The names of the fields the agent reports back for a HostedCluster and a NodePool both: with them, a
// report tells whether HyperShift has looked at the object's newest spec yet (bundle.Observed).
const (
	// FeedbackGeneration is the object's metadata.generation on the management cluster.
	FeedbackGeneration = "generation"
	// FeedbackObservedGeneration is the generation HyperShift last set the object's conditions on
	// (Available's for a HostedCluster, Ready's for a NodePool).
	FeedbackObservedGeneration = "observedGeneration"
)

// The names of the status fields the agent reports back for a HostedCluster. Condition statuses
// are "True", "False" or "Unknown"; a field the object does not have yet is left out of the
// report.
const (
	FeedbackAvailable          = "available"
	FeedbackAvailableMessage   = "availableMessage"
	FeedbackProgressing        = "progressing"
	FeedbackProgressingMessage = "progressingMessage"
	FeedbackDegraded           = "degraded"
	FeedbackDegradedMessage    = "degradedMessage"
	// FeedbackVersionHistory is status.version.history (JsonRaw): the versions the cluster's
	// ClusterVersion went through, newest first, each Partial or Completed.
	FeedbackVersionHistory = "versionHistory"
	// FeedbackControlPlaneVersionHistory is status.controlPlaneVersion.history (JsonRaw): the
	// same for the control plane alone, which completes before the cluster's operators do.
	FeedbackControlPlaneVersionHistory = "controlPlaneVersionHistory"
	// FeedbackAPIHost and FeedbackAPIPort are where the cluster's API server is reached.
	FeedbackAPIHost = "apiHost"
	FeedbackAPIPort = "apiPort"
	// FeedbackAPIAddress is the IP address of the load balancer of HyperShift's control-plane router,
	// which serves the cluster's API name (RouterServiceName).
	FeedbackAPIAddress = "apiAddress"
	// FeedbackAppsAddress is the IP address of the load balancer of the cluster's default ingress, which
	// serves *.apps (AppsIngressServiceName).
	FeedbackAppsAddress = "appsAddress"
	// FeedbackExternalAuth is the HostedCluster's ExternalAuthAnnotation as applied:
	// "<UID>/<generation>" of the external auth the management cluster holds; absent when it holds
	// none.
	FeedbackExternalAuth = "externalAuth"
	// FeedbackOIDCClients is status.configuration.authentication.oidcClients (JsonRaw): HyperShift's
	// report, from the hosted cluster, of the OIDC clients its components use (AwaitedClientSecrets
	// reads it).
	FeedbackOIDCClients = "oidcClients"
)

// The names of the status fields the agent reports back for a NodePool.
const (
	FeedbackReady           = "ready"
	FeedbackReadyMessage    = "readyMessage"
	FeedbackUpdatingVersion = "updatingVersion"
	FeedbackUpdatingConfig  = "updatingConfig"
	// FeedbackReplicas is the number of nodes the pool has now (Integer).
	FeedbackReplicas = "replicas"
	// FeedbackVersion is the OpenShift version the pool's nodes run.
	FeedbackVersion = "version"
)

// The names of the fields the agent reports back for a break-glass credential. The CSR's
// conditions are there only once they happen, so an absent name means not yet.
const (
	// FeedbackCertificate is the CSR's status.certificate: the signed certificate, PEM, base64
	// encoded as the API keeps []byte.
	FeedbackCertificate      = "certificate"
	FeedbackCSRApproved      = "approved"
	FeedbackCSRDenied        = "denied"
	FeedbackCSRDeniedMessage = "deniedMessage"
	FeedbackCSRFailed        = "failed"
	FeedbackCSRFailedMessage = "failedMessage"
	// FeedbackCA is the PEM of the control plane's root CA, which signs the serving certificate
	// of the cluster's API server: the kubeconfig of the credential trusts it.
	FeedbackCA = "ca"
)

// The names of the fields the agent reports back for a CertificateRevocationRequest.
const (
	// FeedbackPreviousCertificatesRevoked is True once certificates of the old signer no longer
	// work, the last step of a revocation.
	FeedbackPreviousCertificatesRevoked        = "previousCertificatesRevoked"
	FeedbackPreviousCertificatesRevokedMessage = "previousCertificatesRevokedMessage"
	// FeedbackRevocationTimestamp is the cut-off: certificates valid before it are revoked.
	FeedbackRevocationTimestamp = "revocationTimestamp"
)

var hostedClusterFeedback = []protocol.JSONPath{
	{Name: FeedbackAvailable, Path: conditionPath("Available", "status")},
	{Name: FeedbackAvailableMessage, Path: conditionPath("Available", "message")},
	{Name: FeedbackProgressing, Path: conditionPath("Progressing", "status")},
	{Name: FeedbackProgressingMessage, Path: conditionPath("Progressing", "message")},
	{Name: FeedbackDegraded, Path: conditionPath("Degraded", "status")},
	{Name: FeedbackDegradedMessage, Path: conditionPath("Degraded", "message")},
	{Name: FeedbackVersionHistory, Path: ".status.version.history"},
	{Name: FeedbackControlPlaneVersionHistory, Path: ".status.controlPlaneVersion.history"},
	{Name: FeedbackAPIHost, Path: ".status.controlPlaneEndpoint.host"},
	{Name: FeedbackAPIPort, Path: ".status.controlPlaneEndpoint.port"},
	{Name: FeedbackExternalAuth, Path: ".metadata.annotations." + escapeDots(ExternalAuthAnnotation)},
	{Name: FeedbackOIDCClients, Path: ".status.configuration.authentication.oidcClients"},
	{Name: FeedbackGeneration, Path: ".metadata.generation"},
	{Name: FeedbackObservedGeneration, Path: conditionPath("Available", "observedGeneration")},
}

var routerFeedback = []protocol.JSONPath{
	{Name: FeedbackAPIAddress, Path: ".status.loadBalancer.ingress[0].ip"},
}

var appsIngressFeedback = []protocol.JSONPath{
	{Name: FeedbackAppsAddress, Path: ".status.loadBalancer.ingress[0].ip"},
}

var nodePoolFeedback = []protocol.JSONPath{
	{Name: FeedbackReady, Path: conditionPath("Ready", "status")},
	{Name: FeedbackReadyMessage, Path: conditionPath("Ready", "message")},
	{Name: FeedbackUpdatingVersion, Path: conditionPath("UpdatingVersion", "status")},
	{Name: FeedbackUpdatingConfig, Path: conditionPath("UpdatingConfig", "status")},
	{Name: FeedbackReplicas, Path: ".status.replicas"},
	{Name: FeedbackVersion, Path: ".status.version"},
	{Name: FeedbackGeneration, Path: ".metadata.generation"},
	{Name: FeedbackObservedGeneration, Path: conditionPath("Ready", "observedGeneration")},
}

var csrFeedback = []protocol.JSONPath{
	{Name: FeedbackCertificate, Path: ".status.certificate"},
	{Name: FeedbackCSRApproved, Path: conditionPath(string(certificatesv1.CertificateApproved), "status")},
	{Name: FeedbackCSRDenied, Path: conditionPath(string(certificatesv1.CertificateDenied), "status")},
	{Name: FeedbackCSRDeniedMessage, Path: conditionPath(string(certificatesv1.CertificateDenied), "message")},
	{Name: FeedbackCSRFailed, Path: conditionPath(string(certificatesv1.CertificateFailed), "status")},
	{Name: FeedbackCSRFailedMessage, Path: conditionPath(string(certificatesv1.CertificateFailed), "message")},
}

// rootCAFeedback reads the key ca.crt, escaping its dot, as kubectl's JSONPath wants.
var rootCAFeedback = []protocol.JSONPath{
	{Name: FeedbackCA, Path: `.data.ca\.crt`},
}

var revocationFeedback = []protocol.JSONPath{
	{Name: FeedbackPreviousCertificatesRevoked, Path: conditionPath(certificatesv1alpha1.PreviousCertificatesRevokedType, "status")},
	{Name: FeedbackPreviousCertificatesRevokedMessage, Path: conditionPath(certificatesv1alpha1.PreviousCertificatesRevokedType, "message")},
	{Name: FeedbackRevocationTimestamp, Path: ".status.revocationTimestamp"},
}

// escapeDots escapes the dots of a map key, as kubectl's JSONPath wants.
func escapeDots(key string) string {
	return strings.ReplaceAll(key, ".", `\.`)
}

// conditionPath selects one field of the condition of type conditionType.
func conditionPath(conditionType, field string) string {
	return fmt.Sprintf(`.status.conditions[?(@.type==%q)].%s`, conditionType, field)
}
