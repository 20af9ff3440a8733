// Package clusterfacts works out what follows from an HCPCluster and the service's settings alone: the
// name of its HostedCluster, the namespaces HyperShift runs it in, its addresses, its DNS prefix when the
// caller gave none, and the release its version resolves to. The registry writes these on create, the
// controllers and the renderer read them, all from here, so that storage needs neither the renderer nor
// HyperShift's types.
package clusterfacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

const (
	// DefaultEnvironment names the service's environment when the settings leave it out.
	DefaultEnvironment = "dev"
	// DefaultDNSZone is under .example (RFC 2606), so that a service left unconfigured never claims
	// names in a real zone.
	DefaultDNSZone = "hcp.aro.example"
)

// Settings are the service's settings the facts depend on.
type Settings struct {
	// Environment names the service instance (dev, int, prod, ...); a cluster's namespace on its
	// management cluster is ocm-<env>-<clusterID>. DefaultEnvironment when empty.
	Environment string
	// DNSZone is the zone the clusters' domains are made in: <hosted cluster name>.<shard>.<location>.<zone>.
	// DefaultDNSZone when empty.
	DNSZone string
	// OIDCIssuerBaseURL is where the clusters' OIDC issuers are published, one path per cluster ID;
	// https://oidc.<DNSZone> when empty.
	OIDCIssuerBaseURL string
	// Azure says the service provisions each cluster's Azure side (hcp-apiserver's --azure-config);
	// without it a new cluster's Azure conditions say AzureDisabled.
	Azure bool
}

// Complete fills what the settings leave out with the defaults.
func (s Settings) Complete() Settings {
	if s.Environment == "" {
		s.Environment = DefaultEnvironment
	}
	if s.DNSZone == "" {
		s.DNSZone = DefaultDNSZone
	}
	if s.OIDCIssuerBaseURL == "" {
		s.OIDCIssuerBaseURL = "https://oidc." + s.DNSZone
	}
	return s
}

// Namespace is the namespace of a cluster's HostedCluster and NodePools on its management cluster, as
// ARO HCP names it: ocm-<env>-<clusterID>.
func Namespace(env, clusterID string) string {
	return "ocm-" + env + "-" + clusterID
}

// HostedClusterName is the name of the HostedCluster of the cluster named name: its DNS prefix, which is
// also the first label of its domain, or else the cluster's name.
func HostedClusterName(baseDomainPrefix, name string) string {
	if baseDomainPrefix != "" {
		return baseDomainPrefix
	}
	return name
}

// ControlPlaneNamespace is the namespace HyperShift runs a control plane in: the HostedCluster's
// namespace and name joined by '-'.
func ControlPlaneNamespace(env, clusterID, hostedClusterName string) string {
	return Namespace(env, clusterID) + "-" + hostedClusterName
}

// Addresses are where a cluster's API, console and OIDC issuer are. HyperShift reports only the API, late;
// all three follow from the cluster ID and the service's settings, so the service knows them as soon as it
// accepts the cluster, as ARM expects (it requires api.url and platform.issuerUrl of every cluster).
type Addresses struct {
	// API is the URL of the cluster's API server.
	API string
	// Console is the URL of its web console.
	Console string
	// Issuer is the OIDC issuer of its service account tokens.
	Issuer string
}

// AddressesOf returns the addresses of the cluster with ID clusterID in location, whose HostedCluster is
// named hostedClusterName.
func AddressesOf(clusterID, hostedClusterName, location string, s Settings) (Addresses, error) {
	s = s.Complete()
	if clusterID == "" {
		return Addresses{}, fmt.Errorf("the cluster has no ID yet")
	}
	domain := hostedClusterName + "." + BaseDomain(clusterID, location, s)
	return Addresses{
		API:     "https://api." + domain + ":443",
		Console: "https://console-openshift-console.apps." + domain,
		Issuer:  IssuerURL(clusterID, s),
	}, nil
}

// BaseDomain is the domain a cluster's own domain is made in: <shard>.<location>.<zone>, the shard a
// hash of the cluster ID, so that two clusters with one DNS prefix never share a domain.
func BaseDomain(clusterID, location string, s Settings) string {
	return shard(clusterID) + "." + location + "." + s.Complete().DNSZone
}

// IssuerURL is the OIDC issuer of a cluster's service account tokens, which the workload identities of
// its Azure operators are federated with.
func IssuerURL(clusterID string, s Settings) string {
	return strings.TrimSuffix(s.Complete().OIDCIssuerBaseURL, "/") + "/" + clusterID
}

func shard(clusterID string) string {
	sum := sha256.Sum256([]byte(clusterID))
	return hex.EncodeToString(sum[:4])
}

// UnplacedMessage is the message of Placed, False, when no management cluster in location can take a
// cluster; placement adds which ones are there and why each cannot.
func UnplacedMessage(location string) string {
	return fmt.Sprintf("no schedulable management cluster in %s with free capacity and a connected agent", location)
}
