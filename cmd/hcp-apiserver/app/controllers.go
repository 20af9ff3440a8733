package app

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aro-hcp/hcp-apiserver/pkg/controller/leaderterm"

	"github.com/google/uuid"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/armnotification"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/armoperation"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/armsubscription"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/azureidentities"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/breakglasscredential"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterdns"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterinspection"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/credentialrevocation"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/externalauth"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/hcpcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/managedresourcegroup"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/managementcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/nodepool"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/openshiftversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/placement"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/sentwrites"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/versionresolution"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/localwatch"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// ControllerOptions tune the controllers that deliver clusters.
type ControllerOptions struct {
	// Environment names this service instance in the management clusters' namespaces: ocm-<env>-<clusterID>.
	Environment string
	// PullSecretFile holds the .dockerconfigjson delivered with every cluster.
	PullSecretFile string
	// DNSZone is the zone the clusters' domains are made in.
	DNSZone string
	// OIDCIssuerBaseURL is where the clusters' OIDC issuers are published.
	OIDCIssuerBaseURL string
	// ManagedIdentitiesKeyVault and ManagedIdentitiesTenantID name the management clusters' Key Vault of
	// the clusters' managed identity certificates, and its tenant.
	ManagedIdentitiesKeyVault, ManagedIdentitiesTenantID string
	// CreateDeadline is how long a cluster may take to become Succeeded before it is Failed.
	CreateDeadline time.Duration
	// BreakglassIssueTimeout is how long a break-glass credential may wait for its certificate.
	BreakglassIssueTimeout time.Duration
	// BreakglassRetention is how long an ended break-glass credential is kept.
	BreakglassRetention time.Duration
	// ARMOperationRetention is how long an ended ARMOperation is kept, from when it was created.
	ARMOperationRetention time.Duration
	// AzureConfigFile names the Azure configuration (pkg/azure.Config); empty, the server provisions
	// nothing in Azure and the clusters' Azure conditions say AzureDisabled.
	AzureConfigFile string
	// AzureRecheckInterval is how soon a cluster refused for its identities, or waiting on Azure, is
	// looked at again; a refusal that lasts is looked at less often (clusterstatus.RecheckAfter).
	AzureRecheckInterval time.Duration

	// azure are the clients of the Azure that AzureConfigFile names, made by Validate.
	azure *azure.Clients
	// dnsZoneID is the service's regional DNS zone, from AzureConfigFile.
	dnsZoneID string
}

func (c *ControllerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Environment, "environment", c.Environment,
		"The name of this service instance; a cluster's namespace on its management cluster is ocm-<environment>-<clusterID>.")
	fs.StringVar(&c.PullSecretFile, "pull-secret-file", c.PullSecretFile,
		"A .dockerconfigjson file delivered as every cluster's pull secret (default: one that pulls nothing).")
	fs.StringVar(&c.DNSZone, "dns-zone", c.DNSZone,
		"The DNS zone the clusters' domains are made in: <DNS prefix>.<shard>.<location>.<zone>. Default "+render.DefaultDNSZone+", under .example.")
	fs.StringVar(&c.OIDCIssuerBaseURL, "oidc-issuer-base-url", c.OIDCIssuerBaseURL,
		"The https URL the clusters' OIDC issuers are published under, one path per cluster ID. Default https://oidc.<dns-zone>.")
	fs.StringVar(&c.ManagedIdentitiesKeyVault, "managed-identities-key-vault", c.ManagedIdentitiesKeyVault,
		"The Azure Key Vault of the management clusters that holds the certificates of the clusters' managed identities. Default "+render.DefaultManagedIdentitiesKeyVault+".")
	fs.StringVar(&c.ManagedIdentitiesTenantID, "managed-identities-tenant-id", c.ManagedIdentitiesTenantID,
		"The Entra tenant of --managed-identities-key-vault. Default: each cluster's own tenant.")
	fs.DurationVar(&c.CreateDeadline, "cluster-create-deadline", c.CreateDeadline,
		"How long a new cluster may take to become available, from when it is placed and its version and Azure side are ready, before its provisioningState is Failed.")
	fs.DurationVar(&c.BreakglassIssueTimeout, "breakglass-issue-timeout", c.BreakglassIssueTimeout,
		"How long a break-glass credential may wait for its management cluster to sign it before it is Failed.")
	fs.DurationVar(&c.BreakglassRetention, "breakglass-retention", c.BreakglassRetention,
		"How long an Expired, Revoked or Failed break-glass credential is kept before it is deleted.")
	fs.StringVar(&c.AzureConfigFile, "azure-config", c.AzureConfigFile,
		"A YAML or JSON file saying which Azure cloud, tenant, service subscription, regional DNS zone and credential the service "+
			"provisions clusters' managed resource groups and DNS records with, and checks their managed identities against. "+
			"Without it the service touches no Azure resource and the clusters' Azure conditions say AzureDisabled.")
	fs.DurationVar(&c.AzureRecheckInterval, "azure-recheck-interval", c.AzureRecheckInterval,
		"How soon a cluster refused for its managed identities, or waiting on Azure, is checked again; a refusal that lasts is checked after a quarter of its age, at most every 16 intervals.")
	fs.DurationVar(&c.ARMOperationRetention, "arm-operation-retention", c.ARMOperationRetention,
		"How long after it was created an ended ARMOperation (Succeeded, Failed or Canceled) is deleted; ARM keeps operations 7 days.")
}

func (c *ControllerOptions) Validate() []error {
	var errs []error
	for _, msg := range validation.IsDNS1123Label(c.Environment) {
		errs = append(errs, fmt.Errorf("--environment %q: %s", c.Environment, msg))
	}
	if c.DNSZone != "" {
		for _, msg := range validation.IsDNS1123Subdomain(c.DNSZone) {
			errs = append(errs, fmt.Errorf("--dns-zone %q: %s", c.DNSZone, msg))
		}
	}
	if u, err := url.Parse(c.OIDCIssuerBaseURL); c.OIDCIssuerBaseURL != "" && (err != nil || u.Scheme != "https" || u.Host == "") {
		errs = append(errs, fmt.Errorf("--oidc-issuer-base-url %q must be an https URL", c.OIDCIssuerBaseURL))
	}
	if id := c.ManagedIdentitiesTenantID; id != "" && uuid.Validate(id) != nil {
		errs = append(errs, fmt.Errorf("--managed-identities-tenant-id %q must be a UUID", id))
	}
	if c.CreateDeadline <= 0 {
		errs = append(errs, fmt.Errorf("--cluster-create-deadline must be positive"))
	}
	if c.BreakglassIssueTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--breakglass-issue-timeout must be positive"))
	}
	if c.BreakglassRetention <= 0 {
		errs = append(errs, fmt.Errorf("--breakglass-retention must be positive"))
	}
	if c.ARMOperationRetention <= 0 {
		errs = append(errs, fmt.Errorf("--arm-operation-retention must be positive"))
	}
	if c.AzureRecheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("--azure-recheck-interval must be positive"))
	}
	if c.AzureConfigFile != "" {
		cfg, err := azure.Load(c.AzureConfigFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--azure-config: %w", err))
		} else if zone, want := cfg.DNSZoneName(), c.serviceFacts().Complete().DNSZone; !strings.EqualFold(zone, want) {
			errs = append(errs, fmt.Errorf("--azure-config: dnsZoneResourceID names the zone %s, but the clusters' domains are made in %s (--dns-zone)", zone, want))
			cfg = nil
		}
		if cfg != nil {
			// The credential's files are read now, so that a missing one stops the server at start.
			if c.azure, err = azure.NewClients(cfg); err != nil {
				errs = append(errs, fmt.Errorf("--azure-config: %w", err))
			}
			c.dnsZoneID = cfg.DNSZoneResourceID
		}
	}
	return errs
}

// noAgents stands for the Maestro source when it is turned off: no agent is ever connected, so nothing
// is placed, and deleting a cluster that was never placed needs no agent.
type noAgents struct{}

func (noAgents) Apply(string, string, int64, *protocol.ManifestBundle) error { return nil }
func (noAgents) Delete(string, string) error                                 { return nil }
func (noAgents) Keep(string, string) error                                   { return nil }
func (noAgents) Forget(string)                                               {}
func (noAgents) AddStatusHandler(source.StatusHandler)                       {}
func (noAgents) SetSynced()                                                  {}

// protobuf returns a copy of the loopback config that speaks protobuf, as kube-apiserver's loopback does:
// the server's own informers (the controllers', the admission plugins') decode every watch event of every
// object, and protobuf decodes several times cheaper than JSON. JSON stays accepted for what has no
// protobuf. It asks for no gzip: on the loopback, compressing each watch event (the server gzips every
// flush of a watch a client accepts gzip for) and uncompressing it again only costs CPU.
func protobuf(loopback *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(loopback)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.DisableCompression = true
	return cfg
}

// newInformerFactory returns the informers of the server's own resources. With stores they list and watch
// the server's stores in its process (pkg/localwatch); without, they do through client. They keep no
// managed fields: no controller or plugin reads them, they are a good part of every object the informers
// hold, and an update without them keeps the stored ones (kube-controller-manager's informers drop them too).
func newInformerFactory(client versioned.Interface, stores *localwatch.Stores) informers.SharedInformerFactory {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(dropManagedFields))
	if stores == nil {
		return factory
	}
	// The factory keeps the first informer made for a type: these are the ones its typed informers return.
	for _, kind := range []struct {
		example  runtime.Object
		resource string
	}{
		{&v1alpha1.HCPCluster{}, "hcpclusters"},
		{&v1alpha1.NodePool{}, "nodepools"},
		{&v1alpha1.ExternalAuth{}, "externalauths"},
		{&v1alpha1.BreakglassCredential{}, "breakglasscredentials"},
		{&v1alpha1.ClusterInspection{}, "clusterinspections"},
		{&v1alpha1.ManagementCluster{}, "managementclusters"},
		{&v1alpha1.OpenShiftVersion{}, "openshiftversions"},
		{&v1alpha1.ARMSubscription{}, "armsubscriptions"},
		{&v1alpha1.ARMOperation{}, "armoperations"},
	} {
		lw := stores.ListerWatcher(apiserver.Scheme, v1alpha1.SchemeGroupVersion, kind.resource)
		factory.InformerFor(kind.example, func(_ versioned.Interface, resync time.Duration) cache.SharedIndexInformer {
			return cache.NewSharedIndexInformerWithOptions(lw, kind.example, cache.SharedIndexInformerOptions{
				ResyncPeriod: resync,
				Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
				Identifier:   factory.InformerName().WithResource(v1alpha1.SchemeGroupVersion.WithResource(kind.resource)),
			})
		})
	}
	return factory
}

func dropManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// serviceOptions are the service's settings that rendering and a new cluster's addresses follow from.
func (o *ControllerOptions) serviceOptions() render.Options {
	return render.Options{Environment: o.Environment, DNSZone: o.DNSZone, OIDCIssuerBaseURL: o.OIDCIssuerBaseURL,
		ManagedIdentitiesKeyVault: o.ManagedIdentitiesKeyVault, ManagedIdentitiesTenantID: o.ManagedIdentitiesTenantID}
}

// serviceFacts are the service's settings a new cluster's stored facts follow from.
func (o *ControllerOptions) serviceFacts() clusterfacts.Settings {
	facts := o.serviceOptions().Facts()
	facts.Azure = o.AzureConfigFile != ""
	return facts
}

// start runs the cluster controllers on the server's loopback client until ctx ends, on the server's
// shared informers (see pkg/controller/leaderterm); informers that only the controllers read start with them and run
// until serverDone. src is nil when Maestro is off.
func (o *ControllerOptions) start(ctx context.Context, loopback *rest.Config, shared informers.SharedInformerFactory,
	serverDone <-chan struct{}, catalog *versioncatalog.Catalog, src *source.Source) error {
	// A write the controllers have sent gets its answer even when the term ends meanwhile (pkg/controller/sentwrites).
	client, err := versioned.NewForConfig(sentwrites.Config(protobuf(loopback)))
	if err != nil {
		return err
	}
	if shared == nil { // no admission plugin asked for informers
		shared = newInformerFactory(client, nil)
	}
	var publisher bundle.Publisher = noAgents{}
	connected := func(string) bool { return false }
	var agents managementcluster.Agents
	if src != nil {
		publisher, agents = src, src
		connected = func(consumer string) bool { return src.Consumer(consumer).Connected }
	}
	renderOptions := o.serviceOptions()
	if o.PullSecretFile != "" {
		if renderOptions.PullSecret, err = os.ReadFile(o.PullSecretFile); err != nil {
			return fmt.Errorf("--pull-secret-file: %w", err)
		}
	}
	term, hcp := leaderterm.New(ctx), shared.Hcp().V1alpha1()
	clusterInformer, poolInformer, credentialInformer := leaderterm.Lend(term, hcp.HCPClusters()), leaderterm.Lend(term, hcp.NodePools()), leaderterm.Lend(term, hcp.BreakglassCredentials())
	mcInformer, operationInformer, subscriptionInformer := leaderterm.Lend(term, hcp.ManagementClusters()), leaderterm.Lend(term, hcp.ARMOperations()), leaderterm.Lend(term, hcp.ARMSubscriptions())
	authInformer, versionInformer := leaderterm.Lend(term, hcp.ExternalAuths()), leaderterm.Lend(term, hcp.OpenShiftVersions())
	inspectionInformer := leaderterm.Lend(term, hcp.ClusterInspections())
	versions, err := versionresolution.New(client, clusterInformer, catalog)
	if err != nil {
		return err
	}
	offered, err := openshiftversion.New(client, versionInformer, catalog)
	if err != nil {
		return err
	}
	placements, err := placement.New(client, clusterInformer, mcInformer, connected)
	if err != nil {
		return err
	}
	gate := bundle.NewOfferGate(publisher.SetSynced)
	clusters, err := hcpcluster.New(client, clusterInformer, mcInformer, poolInformer, authInformer, credentialInformer,
		catalog, bundle.Gate(publisher, gate), hcpcluster.Options{Render: renderOptions, CreateDeadline: o.CreateDeadline, Azure: o.azure != nil})
	if err != nil {
		return err
	}
	// Without Azure the group controller only lets deleted clusters go that hold its finalizer from a time
	// the server provisioned Azure.
	var resourceGroups managedresourcegroup.ResourceGroups
	var dns clusterdns.DNS
	var azureControllers []func(context.Context, int)
	if o.azure != nil {
		resourceGroups, dns = o.azure.ResourceGroups, o.azure.DNS
		identities, err := azureidentities.New(client, clusterInformer, o.azure.Identities, o.AzureRecheckInterval)
		if err != nil {
			return err
		}
		azureControllers = append(azureControllers, identities.Run)
	}
	groups, err := managedresourcegroup.New(client, clusterInformer, resourceGroups, managedresourcegroup.Options{
		PollInterval: o.AzureRecheckInterval, Tags: map[string]string{"aro-hcp.environment": o.Environment},
	})
	if err != nil {
		return err
	}
	records, err := clusterdns.New(client, clusterInformer, dns, clusterdns.Options{
		ZoneID: o.dnsZoneID, Facts: o.serviceFacts(), PollInterval: o.AzureRecheckInterval,
	})
	if err != nil {
		return err
	}
	azureControllers = append(azureControllers, groups.Run, records.Run)
	pools, err := nodepool.New(client, poolInformer, clusterInformer, mcInformer, catalog,
		bundle.Gate(publisher, gate), renderOptions)
	if err != nil {
		return err
	}
	credentials, err := breakglasscredential.New(client, credentialInformer, clusterInformer, mcInformer,
		bundle.Gate(publisher, gate), breakglasscredential.Options{
			IssueTimeout: o.BreakglassIssueTimeout, Retention: o.BreakglassRetention, Environment: o.Environment,
		})
	if err != nil {
		return err
	}
	inspections, err := clusterinspection.New(client, inspectionInformer, clusterInformer, mcInformer,
		bundle.Gate(publisher, gate), clusterinspection.Options{Environment: o.Environment})
	if err != nil {
		return err
	}
	revocations, err := credentialrevocation.New(client, clusterInformer, mcInformer, bundle.Gate(publisher, gate), o.Environment)
	if err != nil {
		return err
	}
	mcStatus, err := managementcluster.New(client, mcInformer, clusterInformer, poolInformer, agents)
	if err != nil {
		return err
	}
	auths, err := externalauth.New(client, authInformer, clusterInformer, mcInformer, publisher)
	if err != nil {
		return err
	}
	operations, err := armoperation.New(client, operationInformer, clusterInformer, poolInformer, authInformer, credentialInformer,
		o.ARMOperationRetention)
	if err != nil {
		return err
	}
	subscriptions, err := armsubscription.New(client, subscriptionInformer, clusterInformer)
	if err != nil {
		return err
	}
	notifications, err := armnotification.New(client, operationInformer, nil)
	if err != nil {
		return err
	}
	shared.Start(serverDone)
	klog.FromContext(ctx).Info("Starting the cluster controllers", "environment", o.Environment)
	go versions.Run(ctx, 2)
	go offered.Run(ctx)
	go placements.Run(ctx)
	go clusters.Run(ctx, 4)
	go pools.Run(ctx, 4)
	// A new update graph may move pools along it, while this term lasts.
	context.AfterFunc(ctx, catalog.OnReplace(pools.EnqueueAll))
	go auths.Run(ctx, 2)
	go credentials.Run(ctx, 2)
	go inspections.Run(ctx, 2)
	go revocations.Run(ctx, 1)
	go mcStatus.Run(ctx, 1)
	go operations.Run(ctx, 2)
	go subscriptions.Run(ctx, 1)
	go notifications.Run(ctx, 2)
	for _, run := range azureControllers {
		go run(ctx, 2)
	}
	return nil
}
