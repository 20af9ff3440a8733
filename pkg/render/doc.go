// Package render turns HCPClusters and NodePools into the Maestro manifest bundles that
// deliver them to a management cluster as HyperShift objects (DESIGN.md section 5).
//
// A cluster is one bundle: its namespace ocm-<env>-<clusterID>, the pull secret and the
// HostedCluster. A node pool is another bundle: the HyperShift NodePool and one ConfigMap
// per config or tuning document, in the HostedCluster's namespace. Rendering is a pure
// function of its input: the same objects always give the same bytes, so that a resync
// sends nothing new and a real change is a new generation.
//
// A cluster's ExternalAuth, when it has one, is part of the cluster's bundle, not a bundle of
// its own: the HostedCluster's spec.configuration.authentication (an OIDC provider named after
// the ExternalAuth, built with openshift/api's config/v1 types), the annotation
// ExternalAuthAnnotation with the ExternalAuth's UID and generation, a ConfigMap with the
// issuer's CA when it has one, and, per confidential client, an empty Secret that HyperShift
// takes as sourced from the hosted cluster, where the customer creates the client's secret
// (ClientSecretName). The HostedCluster's feedback reports the annotation as applied and
// HyperShift's status of the OIDC clients, which AwaitedClientSecrets reads. A change of the
// ExternalAuth alone changes the bundle's content, not the cluster's generation.
package render
