package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
)

const (
	// DefaultEnvironment names the service's environment when Options leave it out.
	DefaultEnvironment = clusterfacts.DefaultEnvironment
	// DefaultDNSZone is under .example (RFC 2606), so that a service left unconfigured never
	// claims names in a real zone.
	DefaultDNSZone = clusterfacts.DefaultDNSZone
	// DefaultManagedIdentitiesKeyVault is the Key Vault of the management cluster that holds the
	// certificates of the clusters' managed identities.
	DefaultManagedIdentitiesKeyVault = "hcp-managed-identities"
)

// emptyPullSecret pulls nothing: enough for a cluster whose images are public or mirrored.
const emptyPullSecret = `{"auths":{}}`

// Options are the settings of the service, the same for every cluster it renders.
type Options struct {
	// Environment names the service instance (dev, int, prod, ...); a cluster's namespace on its
	// management cluster is ocm-<env>-<clusterID>. DefaultEnvironment when empty.
	Environment string
	// PullSecret is the .dockerconfigjson delivered as every cluster's pull secret;
	// {"auths":{}} when empty.
	PullSecret []byte
	// DNSZone is the zone the clusters' domains are made in:
	// <hosted cluster name>.<shard>.<location>.<zone>. DefaultDNSZone when empty.
	DNSZone string
	// ManagedIdentitiesKeyVault is the management cluster's Azure Key Vault that holds the
	// certificates of the clusters' managed identities. DefaultManagedIdentitiesKeyVault when empty.
	ManagedIdentitiesKeyVault string
	// ManagedIdentitiesTenantID is the Entra tenant of that Key Vault; the cluster's own tenant
	// (spec.azure.tenantID) when empty.
	ManagedIdentitiesTenantID string
	// OIDCIssuerBaseURL is where the clusters' OIDC issuers are published, one path per cluster ID;
	// https://oidc.<DNSZone> when empty.
	OIDCIssuerBaseURL string
}

// complete fills the defaults and checks what would otherwise surface as a refused manifest.
func (o Options) complete() (Options, error) {
	facts := o.Facts().Complete()
	o.Environment, o.DNSZone, o.OIDCIssuerBaseURL = facts.Environment, facts.DNSZone, facts.OIDCIssuerBaseURL
	if o.ManagedIdentitiesKeyVault == "" {
		o.ManagedIdentitiesKeyVault = DefaultManagedIdentitiesKeyVault
	}
	if len(o.PullSecret) == 0 {
		o.PullSecret = []byte(emptyPullSecret)
	}

	var errs field.ErrorList
	opts := field.NewPath("options")
	// The environment is a label value and part of every namespace name.
	for _, msg := range validation.IsDNS1123Label(o.Environment) {
		errs = append(errs, field.Invalid(opts.Child("environment"), o.Environment, msg))
	}
	for _, msg := range validation.IsDNS1123Subdomain(o.DNSZone) {
		errs = append(errs, field.Invalid(opts.Child("dnsZone"), o.DNSZone, msg))
	}
	var auths struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(o.PullSecret, &auths); err != nil || auths.Auths == nil {
		errs = append(errs, field.Invalid(opts.Child("pullSecret"), field.OmitValueType{},
			`must be the JSON of a .dockerconfigjson, such as {"auths":{"quay.io":{"auth":"..."}}}`))
	}
	return o, errs.ToAggregate()
}

// Facts are the settings clusterfacts works out a cluster's names and addresses from.
func (o Options) Facts() clusterfacts.Settings {
	return clusterfacts.Settings{Environment: o.Environment, DNSZone: o.DNSZone, OIDCIssuerBaseURL: o.OIDCIssuerBaseURL}
}

// Namespace is the namespace of a cluster's HostedCluster and NodePools on its management
// cluster, as ARO HCP names it: ocm-<env>-<clusterID>.
func Namespace(env, clusterID string) string {
	return clusterfacts.Namespace(env, clusterID)
}

// ControlPlaneNamespace is the namespace HyperShift runs the cluster's control plane in.
func ControlPlaneNamespace(env string, c *v1alpha1.HCPCluster) string {
	return clusterfacts.ControlPlaneNamespace(env, c.Status.ClusterID, HostedClusterName(c))
}

// HostedClusterName is the name of a cluster's HostedCluster: its DNS prefix, or else the HCPCluster's name.
func HostedClusterName(c *v1alpha1.HCPCluster) string {
	return clusterfacts.HostedClusterName(c.Spec.DNS.BaseDomainPrefix, c.Name)
}

// NodePoolName is the name of a node pool's HyperShift NodePool, <hosted cluster>-<pool>. The
// pool is the ARM name, without the "<cluster>." a NodePool's own name may start with. Names
// longer than a DNS label are cut and end in a hash of the whole, so they stay unique.
func NodePoolName(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool) string {
	return shorten(HostedClusterName(c)+"-"+poolName(np), validation.DNS1123LabelMaxLength)
}

// poolName is the ARM name of a node pool.
func poolName(np *v1alpha1.NodePool) string {
	if rest, ok := strings.CutPrefix(np.Name, np.Spec.ClusterName+"."); ok {
		return rest
	}
	return np.Name
}

// shorten returns name if it fits in max characters, and otherwise its start and a hash of
// all of it.
func shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	suffix := "-" + hash(name)
	return strings.TrimRight(name[:max-len(suffix)], "-.") + suffix
}

// clusterLabels mark every object delivered for a cluster, as ARO HCP marks them, so that the
// objects of one cluster can be found on a management cluster.
func clusterLabels(env string, c *v1alpha1.HCPCluster) map[string]string {
	return map[string]string{
		"api.openshift.com/environment": env,
		"api.openshift.com/id":          c.Status.ClusterID,
		"api.openshift.com/name":        c.Name,
	}
}

// checkClusterID requires the cluster ID that names the cluster's namespaces: it is assigned on
// create, so a cluster without one is not ready to render.
func checkClusterID(env string, c *v1alpha1.HCPCluster) field.ErrorList {
	p := field.NewPath("status", "clusterID")
	id := c.Status.ClusterID
	if id == "" {
		return field.ErrorList{field.Required(p, "the service assigns it on create; render once it is set")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(Namespace(env, id)) {
		errs = append(errs, field.Invalid(p, id, fmt.Sprintf("must make a valid namespace name %s: %s", Namespace(env, id), msg)))
	}
	return errs
}
