package render

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	operatorv1 "github.com/openshift/api/operator/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"github.com/openshift/hypershift/api/util/ipnet"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	apivalidation "github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

const (
	// PullSecretName is the pull secret beside each HostedCluster.
	PullSecretName = "pull-secret"
	// ClusterResourceIDAnnotation on a HostedCluster is the ARM ID of its cluster resource, as
	// ARO HCP marks it.
	ClusterResourceIDAnnotation = "azure.microsoft.com/hcp-cluster-azure-resource-id"
)

// etcdStorageSize is HyperShift's own default, written out: the spec must be complete to be
// rendered the same way on every resync.
var etcdStorageSize = resource.MustParse("8Gi")

// ClusterInput is what a cluster bundle is made from.
type ClusterInput struct {
	// Cluster is the cluster; its status.clusterID must be set.
	Cluster *v1alpha1.HCPCluster
	// ReleaseImage is the pull spec of the release the control plane runs, the one the
	// service resolved spec.version to.
	ReleaseImage string
	// ExternalAuth is the cluster's own OIDC identity provider, which its users sign in with; nil
	// when they sign in with the cluster's built-in OAuth server.
	ExternalAuth *v1alpha1.ExternalAuth
}

// ClusterBundle renders the bundle of one cluster: its namespace, the pull secret, what the
// HostedCluster's external auth refers to (the issuer's CA ConfigMap and an empty Secret per
// confidential client) and the HostedCluster, in that order, so that each exists before what
// lives in it or refers to it. Bad input is an error naming the field, for the user to fix.
func ClusterBundle(in ClusterInput, o Options) (*protocol.ManifestBundle, error) {
	o, err := o.complete()
	if err != nil {
		return nil, err
	}
	if in.Cluster == nil {
		return nil, errors.New("no cluster to render")
	}
	c := in.Cluster.DeepCopy()
	// Objects from the API server are defaulted already; defaulting again changes nothing, and
	// lets any other object render the same way.
	v1alpha1.SetObjectDefaults_HCPCluster(c)

	errs := checkClusterID(o.Environment, c)
	errs = append(errs, checkReleaseImage(in.ReleaseImage)...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	hc, errs := hostedCluster(c, in.ReleaseImage, o)
	namespace := Namespace(o.Environment, c.Status.ClusterID)
	labels := clusterLabels(o.Environment, c)
	auth, authErrs := externalAuth(c, in.ExternalAuth, metav1.ObjectMeta{Namespace: namespace, Labels: labels})
	errs = append(errs, authErrs...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}

	var authManifests []manifest
	if auth != nil {
		hc.Annotations[ExternalAuthAnnotation] = auth.annotation
		if hc.Spec.Configuration == nil {
			hc.Spec.Configuration = &hyperv1.ClusterConfiguration{}
		}
		hc.Spec.Configuration.Authentication = auth.authentication
		if auth.caConfigMap != nil {
			authManifests = append(authManifests, manifest{object: auth.caConfigMap, resource: "configmaps"})
		}
		for _, secret := range auth.clientSecrets {
			authManifests = append(authManifests, manifest{object: secret, resource: "secrets"})
		}
	}
	manifests := []manifest{
		{
			object: &corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: labels},
			},
			resource: "namespaces",
		},
		{
			object: &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: PullSecretName, Namespace: namespace, Labels: labels},
				Type:       corev1.SecretTypeDockerConfigJson,
				Data:       map[string][]byte{corev1.DockerConfigJsonKey: o.PullSecret},
			},
			resource: "secrets",
		},
	}
	manifests = append(manifests, authManifests...)
	// The load balancers that serve the cluster's names are HyperShift's: the agent only reads their
	// addresses, which the cluster's DNS records point at, and lets go of them with the bundle. The
	// HostedCluster stays last, as the object everything before exists for.
	hcpNamespace := ControlPlaneNamespace(o.Environment, c)
	for _, svc := range []struct {
		name     string
		feedback []protocol.JSONPath
	}{{RouterServiceName, routerFeedback}, {AppsIngressServiceName, appsIngressFeedback}} {
		manifests = append(manifests, manifest{
			object: &corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: svc.name, Namespace: hcpNamespace},
			},
			resource: "services",
			feedback: svc.feedback,
		})
	}
	manifests = append(manifests, manifest{object: hc, resource: "hostedclusters", feedback: hostedClusterFeedback})
	b, err := newBundle(manifests...)
	if err != nil {
		return nil, err
	}
	for i := len(b.ManifestConfigs) - 3; i < len(b.ManifestConfigs)-1; i++ {
		b.ManifestConfigs[i].UpdateStrategy = &protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly}
	}
	return b, nil
}

const (
	// RouterServiceName is the Service of HyperShift's router in a control-plane namespace: its load
	// balancer serves the Routes of the control plane's services, the API's among them.
	RouterServiceName = "router"
	// AppsIngressServiceName is the Service whose load balancer serves the hosted cluster's applications
	// (*.apps). HyperShift's status has no address for them; the management cluster keeps this Service in
	// the control-plane namespace for the hosted cluster's default ingress.
	AppsIngressServiceName = "default-ingress"
)

// Addresses are where a cluster serves, as clusterfacts works them out.
type Addresses = clusterfacts.Addresses

// AddressesOf returns the addresses of the cluster with ID clusterID, in location, whose HostedCluster is
// named hostedClusterName (HostedClusterName).
func AddressesOf(clusterID, hostedClusterName, location string, o Options) (Addresses, error) {
	o, err := o.complete()
	if err != nil {
		return Addresses{}, err
	}
	a, err := clusterfacts.AddressesOf(clusterID, hostedClusterName, location, o.Facts())
	return a, err
}

// issuerURL is the OIDC issuer of a cluster's service account tokens.
func issuerURL(clusterID string, o Options) string {
	return clusterfacts.IssuerURL(clusterID, o.Facts())
}

// ClusterAddresses returns the addresses of c.
func ClusterAddresses(c *v1alpha1.HCPCluster, o Options) (Addresses, error) {
	if errs := checkClusterID(o.Environment, c); len(errs) > 0 {
		return Addresses{}, errs.ToAggregate()
	}
	return AddressesOf(c.Status.ClusterID, HostedClusterName(c), c.Spec.Location, o)
}

// ConsoleURL is the address of a cluster's web console: HyperShift does not report it, but it
// follows from the cluster's domain.
func ConsoleURL(c *v1alpha1.HCPCluster, o Options) (string, error) {
	a, err := ClusterAddresses(c, o)
	return a.Console, err
}

// baseDomain is the DNS domain a cluster's domain is made in. Names of hosted clusters repeat
// across customers, so a shard from the cluster ID keeps their domains apart.
func baseDomain(c *v1alpha1.HCPCluster, o Options) string {
	return baseDomainOf(c.Status.ClusterID, c.Spec.Location, o)
}

func baseDomainOf(clusterID, location string, o Options) string {
	return clusterfacts.BaseDomain(clusterID, location, o.Facts())
}

// clusterDomain is the domain HyperShift gives the cluster: the HostedCluster's name in its base
// domain. The API server is api.<domain>, applications are *.apps.<domain>.
func clusterDomain(c *v1alpha1.HCPCluster, o Options) string {
	return HostedClusterName(c) + "." + baseDomain(c, o)
}

func checkReleaseImage(image string) field.ErrorList {
	if image == "" {
		return field.ErrorList{field.Required(field.NewPath("releaseImage"), "the pull spec of the release resolved from spec.version")}
	}
	return nil
}

func hostedCluster(c *v1alpha1.HCPCluster, releaseImage string, o Options) (*hyperv1.HostedCluster, field.ErrorList) {
	spec := &c.Spec
	specPath := field.NewPath("spec")
	var errs field.ErrorList

	if cp := ControlPlaneNamespace(o.Environment, c); len(cp) > validation.DNS1123LabelMaxLength {
		room := validation.DNS1123LabelMaxLength - len(Namespace(o.Environment, c.Status.ClusterID)) - 1
		errs = append(errs, field.Invalid(specPath.Child("dns", "baseDomainPrefix"), spec.DNS.BaseDomainPrefix,
			fmt.Sprintf("HyperShift runs the control plane in the namespace %s, which is longer than %d characters; set a prefix of at most %d characters",
				cp, validation.DNS1123LabelMaxLength, room)))
	}

	ids := newIdentities(c)
	azure, azureErrs := azurePlatform(c, ids, o)
	errs = append(errs, azureErrs...)
	networking, networkErrs := clusterNetworking(spec, specPath)
	errs = append(errs, networkErrs...)
	encryption, encryptionErrs := secretEncryption(c, ids)
	errs = append(errs, encryptionErrs...)
	errs = append(errs, ids.errs...)
	if len(errs) > 0 {
		return nil, errs
	}

	annotations := map[string]string{
		ClusterResourceIDAnnotation: clusterResourceID(spec.Azure.SubscriptionID, spec.Azure.ResourceGroup, c.Name),
	}
	hc := &hyperv1.HostedCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: hyperv1.GroupVersion.String(), Kind: "HostedCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        HostedClusterName(c),
			Namespace:   Namespace(o.Environment, c.Status.ClusterID),
			Labels:      clusterLabels(o.Environment, c),
			Annotations: annotations,
		},
		Spec: hyperv1.HostedClusterSpec{
			Release:    hyperv1.Release{Image: releaseImage},
			Platform:   hyperv1.PlatformSpec{Type: hyperv1.AzurePlatform, Azure: azure},
			DNS:        hyperv1.DNSSpec{BaseDomain: baseDomain(c, o)},
			Networking: networking,
			Autoscaling: hyperv1.ClusterAutoscaling{
				MaxNodesTotal:        spec.Autoscaling.MaxNodesTotal,
				MaxPodGracePeriod:    spec.Autoscaling.MaxPodGracePeriodSeconds,
				PodPriorityThreshold: spec.Autoscaling.PodPriorityThreshold,
			},
			// The Go type's zero value is an empty managementType, which the CRD refuses.
			Etcd: hyperv1.EtcdSpec{
				ManagementType: hyperv1.Managed,
				Managed: &hyperv1.ManagedEtcdSpec{Storage: hyperv1.ManagedEtcdStorageSpec{
					Type:             hyperv1.PersistentVolumeEtcdStorage,
					PersistentVolume: &hyperv1.PersistentVolumeEtcdStorageSpec{Size: ptr.To(etcdStorageSize)},
				}},
			},
			Services:            routes(clusterDomain(c, o)),
			PullSecret:          corev1.LocalObjectReference{Name: PullSecretName},
			SecretEncryption:    encryption,
			FIPS:                spec.CryptoRestrictions == "FIPS",
			ImageContentSources: imageContentSources(spec.ImageDigestMirrors),
			IssuerURL:           issuerURL(c.Status.ClusterID, o),
		},
	}
	if t := spec.Autoscaling.MaxNodeProvisionTimeSeconds; t != nil {
		hc.Spec.Autoscaling.MaxNodeProvisionTime = fmt.Sprintf("%ds", *t)
	}
	// HyperShift makes up a cluster ID when it has none; the service's, when it is a UUID as
	// HyperShift requires, keeps the two the same.
	if apivalidation.IsUUID(c.Status.ClusterID) {
		hc.Spec.ClusterID = c.Status.ClusterID
	}
	if spec.Version.ID != "" {
		hc.Spec.Channel = spec.Version.ChannelGroup + "-" + spec.Version.ID
	}
	if spec.Ingress.Type == "Private" {
		hc.Spec.OperatorConfiguration = &hyperv1.OperatorConfiguration{
			IngressOperator: &hyperv1.IngressOperatorSpec{
				EndpointPublishingStrategy: &operatorv1.EndpointPublishingStrategy{
					Type:         operatorv1.LoadBalancerServiceStrategyType,
					LoadBalancer: &operatorv1.LoadBalancerStrategy{Scope: operatorv1.InternalLoadBalancer},
				},
			},
		}
	}
	hc.Spec.Capabilities = capabilities(spec)
	return hc, nil
}

func azurePlatform(c *v1alpha1.HCPCluster, ids *identities, o Options) (*hyperv1.AzurePlatformSpec, field.ErrorList) {
	spec := &c.Spec
	platformPath := field.NewPath("spec", "platform")
	var errs field.ErrorList
	subnet, err := parseARMID(platformPath.Child("subnetID"), spec.Platform.SubnetID, subnetType)
	if err != nil {
		errs = append(errs, err)
	}
	nsg, err := parseARMID(platformPath.Child("networkSecurityGroupID"), spec.Platform.NetworkSecurityGroupID, networkSecurityGroupType)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}

	azure := &hyperv1.AzurePlatformSpec{
		Location:          spec.Location,
		ResourceGroupName: ManagedResourceGroup(c),
		VnetID:            subnet.ancestor(1),
		SubnetID:          subnet.String(),
		SubscriptionID:    spec.Azure.SubscriptionID,
		SecurityGroupID:   nsg.String(),
		TenantID:          spec.Azure.TenantID,
		AzureAuthenticationConfig: hyperv1.AzureAuthenticationConfiguration{
			AzureAuthenticationConfigType: hyperv1.AzureAuthenticationTypeManagedIdentities,
			ManagedIdentities:             ids.managed(o),
		},
		Topology: hyperv1.AzureTopologyPublic,
	}
	if spec.API.Visibility == "Private" {
		azure.Topology = hyperv1.AzureTopologyPrivate
		azure.Private = hyperv1.AzurePrivateSpec{Type: hyperv1.AzurePrivateTypePrivateLink}
	}
	return azure, nil
}

// ManagedResourceGroup is the resource group the cluster's Azure resources are made in. The API
// fills it on create; a cluster without one gets the name ARO HCP would give it, which depends
// on the cluster alone so that every render, and the controller that makes the group, agree.
func ManagedResourceGroup(c *v1alpha1.HCPCluster) string {
	if rg := c.Spec.Platform.ManagedResourceGroup; rg != "" {
		return rg
	}
	return shorten("aro-hcp-"+c.Name+"-"+c.Status.ClusterID, 90)
}

func clusterNetworking(spec *v1alpha1.HCPClusterSpec, specPath *field.Path) (hyperv1.ClusterNetworking, field.ErrorList) {
	networkPath := specPath.Child("network")
	var errs field.ErrorList
	cidr := func(p *field.Path, value string) ipnet.IPNet {
		parsed, err := ipnet.ParseCIDR(value)
		if err != nil {
			errs = append(errs, field.Invalid(p, value, "must be a CIDR such as 10.0.0.0/16"))
			return ipnet.IPNet{}
		}
		return *parsed
	}
	networking := hyperv1.ClusterNetworking{
		ClusterNetwork: []hyperv1.ClusterNetworkEntry{{
			CIDR:       cidr(networkPath.Child("podCIDR"), spec.Network.PodCIDR),
			HostPrefix: spec.Network.HostPrefix,
		}},
		ServiceNetwork: []hyperv1.ServiceNetworkEntry{{CIDR: cidr(networkPath.Child("serviceCIDR"), spec.Network.ServiceCIDR)}},
		MachineNetwork: []hyperv1.MachineNetworkEntry{{CIDR: cidr(networkPath.Child("machineCIDR"), spec.Network.MachineCIDR)}},
		NetworkType:    hyperv1.NetworkType(spec.Network.NetworkType),
	}
	if len(spec.API.AuthorizedCIDRs) > 0 {
		blocks := make([]hyperv1.CIDRBlock, 0, len(spec.API.AuthorizedCIDRs))
		for i, value := range spec.API.AuthorizedCIDRs {
			block, ok := cidrBlock(value)
			if !ok {
				errs = append(errs, field.Invalid(specPath.Child("api", "authorizedCIDRs").Index(i), value,
					"must be an IPv4 address such as 192.0.2.7 or a CIDR such as 192.0.2.0/24"))
				continue
			}
			blocks = append(blocks, block)
		}
		networking.APIServer = &hyperv1.APIServerNetworking{AllowedCIDRBlocks: blocks}
	}
	return networking, errs
}

// cidrBlock turns an address into the CIDR of that one address: ARM takes both, HyperShift only
// CIDRs.
func cidrBlock(value string) (hyperv1.CIDRBlock, bool) {
	if addr, err := netip.ParseAddr(value); err == nil {
		return hyperv1.CIDRBlock(netip.PrefixFrom(addr, addr.BitLen()).String()), true
	}
	if _, err := netip.ParsePrefix(value); err == nil {
		return hyperv1.CIDRBlock(value), true
	}
	return "", false
}

// routes publishes every control plane service through a Route of the management cluster's
// ingress, as ARO HCP does, at a name in the cluster's domain.
func routes(domain string) []hyperv1.ServicePublishingStrategyMapping {
	route := func(service hyperv1.ServiceType, host string) hyperv1.ServicePublishingStrategyMapping {
		return hyperv1.ServicePublishingStrategyMapping{
			Service: service,
			ServicePublishingStrategy: hyperv1.ServicePublishingStrategy{
				Type:  hyperv1.Route,
				Route: &hyperv1.RoutePublishingStrategy{Hostname: host + "." + domain},
			},
		}
	}
	return []hyperv1.ServicePublishingStrategyMapping{
		route(hyperv1.APIServer, "api"),
		route(hyperv1.OAuthServer, "oauth"),
		route(hyperv1.Konnectivity, "konnectivity"),
		route(hyperv1.Ignition, "ignition"),
	}
}

// secretEncryption encrypts etcd with the customer's Key Vault key, when the cluster asks for it.
func secretEncryption(c *v1alpha1.HCPCluster, ids *identities) (*hyperv1.SecretEncryptionSpec, field.ErrorList) {
	encryption := c.Spec.Etcd.DataEncryption
	if encryption == nil {
		return nil, nil
	}
	kmsPath := field.NewPath("spec", "etcd", "dataEncryption", "customerManaged", "kms")
	if encryption.CustomerManaged == nil || encryption.CustomerManaged.KMS == nil {
		return nil, field.ErrorList{field.Required(kmsPath, "the Key Vault key that encrypts etcd, for keyManagementMode "+encryption.KeyManagementMode)}
	}
	kms := encryption.CustomerManaged.KMS
	azure := &hyperv1.AzureKMSSpec{
		ActiveKey:      hyperv1.AzureKMSKey{KeyVaultName: kms.VaultName, KeyName: kms.ActiveKey.Name, KeyVersion: kms.ActiveKey.Version},
		KMS:            ids.controlPlane(operatorKMS),
		KeyVaultAccess: hyperv1.AzureKeyVaultAccessType(kms.Visibility),
	}
	return &hyperv1.SecretEncryptionSpec{
		Type: hyperv1.KMS,
		KMS:  &hyperv1.KMSSpec{Provider: hyperv1.AZURE, Azure: azure},
	}, nil
}

func imageContentSources(mirrors []v1alpha1.ImageDigestMirror) []hyperv1.ImageContentSource {
	var sources []hyperv1.ImageContentSource
	for _, m := range mirrors {
		sources = append(sources, hyperv1.ImageContentSource{Source: m.Source, Mirrors: slices.Clone(m.Mirrors)})
	}
	return sources
}

// capabilities turns off the parts of OpenShift the cluster does without. Without the default
// ingress controller, the console cannot be reached, and HyperShift requires it off too.
func capabilities(spec *v1alpha1.HCPClusterSpec) *hyperv1.Capabilities {
	var disabled []hyperv1.OptionalCapability
	if spec.ClusterImageRegistry.State == "Disabled" {
		disabled = append(disabled, hyperv1.ImageRegistryCapability)
	}
	if spec.Ingress.Type == "Disabled" {
		disabled = append(disabled, hyperv1.IngressCapability, hyperv1.ConsoleCapability)
	}
	if len(disabled) == 0 {
		return nil
	}
	slices.SortFunc(disabled, func(a, b hyperv1.OptionalCapability) int { return strings.Compare(string(a), string(b)) })
	return &hyperv1.Capabilities{Disabled: disabled}
}
