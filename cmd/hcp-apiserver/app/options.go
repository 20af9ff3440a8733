// Package app holds the command line of hcp-apiserver: its flags, how they
// turn into a server configuration, and how the server runs until told to stop.
package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	admissionmetrics "k8s.io/apiserver/pkg/admission/metrics"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/util/compatibility"
	cliflag "k8s.io/component-base/cli/flag"
	basecompatibility "k8s.io/component-base/compatibility"
	netutils "k8s.io/utils/net"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	hcpadmission "github.com/aro-hcp/hcp-apiserver/pkg/admission"
	admissioninit "github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/armoperation"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/breakglasscredential"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/openapi"
	"github.com/aro-hcp/hcp-apiserver/pkg/intern"
	"github.com/aro-hcp/hcp-apiserver/pkg/listencoding"
	"github.com/aro-hcp/hcp-apiserver/pkg/localwatch"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/freshget"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
	"github.com/aro-hcp/hcp-apiserver/pkg/storagecompression"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// EtcdPathPrefix is where the server keeps its objects in etcd; each resource adds
// <group>/<resource>, as in kube-apiserver: /registry/hcp.aro.azure.com/hcpclusters/<ns>/<name>.
const EtcdPathPrefix = "/registry"

// Options are the flags of hcp-apiserver.
type Options struct {
	RecommendedOptions       *genericoptions.RecommendedOptions
	ComponentGlobalsRegistry basecompatibility.ComponentGlobalsRegistry

	// DataDir holds the embedded etcd's data and, in standalone mode, the PKI and admin.kubeconfig.
	DataDir string
	// AlternateNames are extra host names and IPs the generated serving certificate is valid for.
	AlternateNames []string
	// Versions say where the offered releases and their end of life come from.
	Versions VersionOptions
	// MaxBreakglassCredentialsPerCluster is how many unexpired break-glass credentials a cluster may have.
	MaxBreakglassCredentialsPerCluster int
	// RequestTimeout bounds every request but watches, as kube-apiserver's flag of the same name; a
	// request's body must arrive within half of it.
	RequestTimeout time.Duration
	// Maestro says how the server reaches the maestro-agents of its management clusters.
	Maestro MaestroOptions
	// Controllers tune how clusters are delivered.
	Controllers ControllerOptions
	// JSONListCacheMegabytes bounds the JSON of listed objects kept between lists, compressed; 0 keeps none.
	JSONListCacheMegabytes int
	// StorageCompression is how objects are compressed in etcd: "s2", "zstd" or "none".
	StorageCompression string
}

// NewOptions returns the default options: standalone on embedded etcd, port 6443.
func NewOptions() *Options {
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(EtcdPathPrefix,
			apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)),
		ComponentGlobalsRegistry:           compatibility.DefaultComponentGlobalsRegistry,
		DataDir:                            "hcp-data",
		MaxBreakglassCredentialsPerCluster: 10,
		RequestTimeout:                     time.Minute,
		JSONListCacheMegabytes:             1024,
		StorageCompression:                 string(storagecompression.S2),
		Versions:                           NewVersionOptions(),
		Maestro:                            MaestroOptions{Source: DefaultSource, BindAddress: "0.0.0.0:8883", LivenessInterval: time.Minute, LivenessTimeout: 3 * time.Minute},
		Controllers: ControllerOptions{
			Environment: render.DefaultEnvironment, CreateDeadline: time.Hour,
			BreakglassIssueTimeout: breakglasscredential.DefaultIssueTimeout, BreakglassRetention: breakglasscredential.DefaultRetention,
			ARMOperationRetention: armoperation.DefaultRetention, AzureRecheckInterval: 30 * time.Second,
		},
	}
	// The service's plugins run after the standard ones and are on by default.
	hcpadmission.RegisterAll(o.RecommendedOptions.Admission.Plugins)
	o.RecommendedOptions.Admission.RecommendedPluginOrder = append(o.RecommendedOptions.Admission.RecommendedPluginOrder, hcpadmission.OrderedPlugins...)
	o.RecommendedOptions.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(
		v1alpha1.SchemeGroupVersion, schema.GroupKind{Group: v1alpha1.GroupName})
	// Protobuf is several times cheaper to encode and decode than JSON, and etcd holds bytes either way.
	o.RecommendedOptions.Etcd.DefaultStorageMediaType = runtime.ContentTypeProtobuf
	o.RecommendedOptions.SecureServing.BindPort = 6443
	return o
}

// Flags returns every flag, in sections for --help: the server's own first, then those of the generic API
// server, most of which matter only when it runs aggregated behind kube-apiserver.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	fs := fss.FlagSet("hcp-apiserver")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Folder for the embedded etcd's data (when --etcd-servers is empty) and, in standalone mode, the generated certificates and admin.kubeconfig.")
	fs.StringSliceVar(&o.AlternateNames, "alternate-names", o.AlternateNames,
		"Extra DNS names and IP addresses the generated serving certificate is valid for, besides localhost, 127.0.0.1 and ::1.")
	fs.IntVar(&o.MaxBreakglassCredentialsPerCluster, "max-breakglass-credentials-per-cluster", o.MaxBreakglassCredentialsPerCluster,
		"How many unexpired (Pending or Issued) break-glass credentials one cluster may have.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout,
		"How long a request but a watch may take before it is answered 504, as kube-apiserver's flag. A request's body must arrive within half of it, or the request is answered 408.")
	fs.IntVar(&o.JSONListCacheMegabytes, "json-list-cache-megabytes", o.JSONListCacheMegabytes,
		"How many megabytes the server keeps of listed objects' JSON, compressed, per object version, so that the next JSON list copies the objects that did not change instead of encoding them again. What no list read for 20 minutes is freed. 0 keeps none.")
	fs.StringVar(&o.StorageCompression, "storage-compression", o.StorageCompression,
		"How objects are compressed in etcd: s2 (against a dictionary of what objects share, built into the server), zstd or none. Objects are read compressed either way or not at all, and written in the new way on their next write. Resources encrypted by --encryption-provider-config are written uncompressed.")
	o.Versions.AddFlags(fss.FlagSet("versions"))
	o.Maestro.AddFlags(fss.FlagSet("maestro"))
	o.Controllers.AddFlags(fss.FlagSet("controllers"))
	r := o.RecommendedOptions
	r.Etcd.AddFlags(fss.FlagSet("etcd (--etcd-servers replaces the embedded etcd)"))
	r.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	r.Admission.AddFlags(fss.FlagSet("admission"))
	r.Authentication.AddFlags(fss.FlagSet("authentication (aggregated mode only)"))
	r.Authorization.AddFlags(fss.FlagSet("authorization (aggregated mode only)"))
	r.CoreAPI.AddFlags(fss.FlagSet("kube-apiserver (aggregated mode only)"))
	r.Audit.AddFlags(fss.FlagSet("audit"))
	r.Features.AddFlags(fss.FlagSet("features"))
	r.EgressSelector.AddFlags(fss.FlagSet("egress selector"))
	r.Traces.AddFlags(fss.FlagSet("traces"))
	o.ComponentGlobalsRegistry.AddFlags(fss.FlagSet("compatibility"))
	return fss
}

// Standalone tells whether the server runs without a kube-apiserver: no delegated
// authentication or authorization is configured and it does not run in a pod.
func (o *Options) Standalone() bool {
	authn, authz := o.RecommendedOptions.Authentication, o.RecommendedOptions.Authorization
	delegated := (authn != nil && authn.RemoteKubeConfigFile != "") || (authz != nil && authz.RemoteKubeConfigFile != "")
	return !delegated && os.Getenv("KUBERNETES_SERVICE_HOST") == ""
}

// PKI is where the server keeps the certificates of standalone mode and of the embedded MQTT broker.
func (o *Options) PKI() *standalone.PKI { return newPKI(o.DataDir) }

func newPKI(dataDir string) *standalone.PKI { return standalone.NewPKI(filepath.Join(dataDir, "pki")) }

// ensurePKI makes the CA and certificates in the data directory, or reuses them; the serving certificate
// covers the loopback names and --alternate-names.
func (o *Options) ensurePKI() (*standalone.PKI, error) {
	pki := o.PKI()
	hosts := append([]string{"localhost", "127.0.0.1", "::1"}, o.AlternateNames...)
	if err := pki.Ensure(hosts); err != nil {
		return nil, fmt.Errorf("creating the certificates in %s: %w", pki.Dir, err)
	}
	return pki, nil
}

// AdminKubeconfig is the file standalone mode writes once the server is ready.
func (o *Options) AdminKubeconfig() string { return filepath.Join(o.DataDir, "admin.kubeconfig") }

// CompletedOptions are the options with what the flags left open filled in: the version catalog read,
// the certificates made in the data directory, and standalone mode's choices made. Config reads them and
// changes nothing.
type CompletedOptions struct {
	*Options
	// Catalog is the version catalog the server and its controllers offer: live, replaced when the update
	// service's graph changes.
	Catalog *versioncatalog.Catalog
	// Lifecycle is each minor's end of life.
	Lifecycle *versioncatalog.Lifecycle
	// certs holds standalone mode's CA and certificates, and the embedded broker's; nil when neither is used.
	certs *standalone.PKI
	// standaloneAdmission are the admission flags of standalone mode, which builds its own chain.
	standaloneAdmission *genericoptions.AdmissionOptions
}

// Complete fills in what the flags left open. etcdURL is the embedded etcd's, when no --etcd-servers
// were given. It writes the certificates into the data directory: call it once the data directory is
// this server's.
func (o *Options) Complete(ctx context.Context, etcdURL string) (*CompletedOptions, error) {
	c := &CompletedOptions{Options: o}
	if etcdURL != "" {
		o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{etcdURL}
	}
	var err error
	if c.Lifecycle, err = o.Versions.lifecycle(); err != nil {
		return nil, err
	}
	if c.Catalog, err = o.Versions.catalog(ctx, c.Lifecycle); err != nil {
		return nil, err
	}
	if o.Standalone() || o.Maestro.embeddedBroker() {
		var err error
		if c.certs, err = o.ensurePKI(); err != nil {
			return nil, err
		}
	}
	if !o.Standalone() {
		o.RecommendedOptions.SecureServing.ServerCert.CertDirectory = filepath.Join(o.DataDir, "serving-certs")
		if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", o.AlternateNames,
			[]net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
			return nil, fmt.Errorf("creating self-signed serving certificates: %w", err)
		}
		return c, nil
	}
	o.RecommendedOptions.SecureServing.ServerCert.CertKey.CertFile = c.certs.ServingCert
	o.RecommendedOptions.SecureServing.ServerCert.CertKey.KeyFile = c.certs.ServingKey
	// Nothing to delegate to: this server authenticates and authorizes by itself.
	o.RecommendedOptions.Authentication = nil
	o.RecommendedOptions.Authorization = nil
	o.RecommendedOptions.CoreAPI = nil
	// Without kube-apiserver the standard plugins have nothing to read; the service's own chain is
	// built in Config from the same --enable/--disable-admission-plugins flags.
	c.standaloneAdmission = o.RecommendedOptions.Admission
	o.RecommendedOptions.Admission = nil
	o.RecommendedOptions.Features.EnablePriorityAndFairness = false
	// No garbage collector runs without kube-controller-manager: an orphan or foreground finalizer
	// would never be removed, so deletes ignore the propagation policy.
	o.RecommendedOptions.Etcd.EnableGarbageCollection = false
	return c, nil
}

// Validate checks the flags, as completed: the etcd servers are known by then (Run starts the embedded
// etcd first when none were given), and standalone mode's admission flags are its own chain's.
func (o *CompletedOptions) Validate() error {
	errs := o.RecommendedOptions.Validate()
	if o.standaloneAdmission != nil {
		errs = append(errs, validateStandaloneAdmission(o.standaloneAdmission)...)
	}
	if o.MaxBreakglassCredentialsPerCluster < 1 {
		errs = append(errs, fmt.Errorf("--max-breakglass-credentials-per-cluster must be at least 1"))
	}
	if o.RequestTimeout < 2*time.Second {
		errs = append(errs, fmt.Errorf("--request-timeout must be at least 2s"))
	}
	if !slices.Contains(storagecompression.Methods, storagecompression.Method(o.StorageCompression)) {
		errs = append(errs, fmt.Errorf("--storage-compression must be one of %v, not %q", storagecompression.Methods, o.StorageCompression))
	}
	if o.JSONListCacheMegabytes < 0 {
		errs = append(errs, fmt.Errorf("--json-list-cache-megabytes must be 0 (no cache) or more"))
	}
	errs = append(errs, o.Versions.Validate()...)
	errs = append(errs, o.Maestro.Validate()...)
	errs = append(errs, o.Controllers.Validate()...)
	errs = append(errs, o.ComponentGlobalsRegistry.Validate()...)
	return utilerrors.NewAggregate(errs)
}

// Config turns the completed options into a server configuration.
func (o *CompletedOptions) Config() (*apiserver.Config, error) {
	standaloneMode := o.Standalone()
	pki, catalog, admissionOptions := o.certs, o.Catalog, o.standaloneAdmission
	cfg := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	namer := openapinamer.NewDefinitionNamer(apiserver.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "hcp-apiserver"
	cfg.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "hcp-apiserver"
	cfg.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	cfg.RequestTimeout = o.RequestTimeout
	cfg.FeatureGate = o.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	cfg.EffectiveVersion = withBuildVersion(o.ComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent))

	// The plugins and controllers read the server's own resources through informers on its stores.
	var hcpInformers informers.SharedInformerFactory
	stores := &localwatch.Stores{}
	newAdmissionInitializer := func(c *genericapiserver.RecommendedConfig) (admission.PluginInitializer, error) {
		client, err := versioned.NewForConfig(protobuf(c.LoopbackClientConfig))
		if err != nil {
			return nil, err
		}
		hcpInformers = newInformerFactory(client, stores)
		return admissioninit.New(client, hcpInformers, catalog), nil
	}
	// A copy, so that Config leaves the options as they were.
	recommended := *o.RecommendedOptions
	etcd := *recommended.Etcd
	recommended.Etcd = &etcd
	// The generic options store objects with the storage config's codec as it is (JSON here), whatever
	// --storage-media-type says: that flag takes effect only through a storage factory, which a server of
	// one group does not need. So the codec is made here, as kube-apiserver's storage factory makes it:
	// it writes the media type asked for and reads every one, so objects stored as JSON before still read,
	// and are written in the new media type on their next write.
	codec, versioner, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  etcd.DefaultStorageMediaType,
		StorageSerializer: apiserver.Codecs,
		StorageVersion:    v1alpha1.SchemeGroupVersion,
		MemoryVersion:     hcp.SchemeGroupVersion,
		Config:            etcd.StorageConfig,
	})
	if err != nil {
		return nil, fmt.Errorf("--storage-media-type: %w", err)
	}
	// What the storage decodes shares what repeats between objects: the watch cache holds every object.
	etcd.StorageConfig.Codec, etcd.StorageConfig.EncodeVersioner = intern.Codec(codec), versioner
	recommended.ExtraAdmissionInitializers = func(c *genericapiserver.RecommendedConfig) ([]admission.PluginInitializer, error) {
		i, err := newAdmissionInitializer(c)
		return []admission.PluginInitializer{i}, err
	}

	if err := recommended.ApplyTo(cfg); err != nil {
		return nil, err
	}
	etcdClient, err := o.newEtcdClient()
	if err != nil {
		return nil, err
	}
	cfg.RESTOptionsGetter = storagecompression.RESTOptionsGetter(cfg.RESTOptionsGetter, storagecompression.Method(o.StorageCompression))
	// A GET that must see every write before it reads the object from the watch cache when it is current.
	cfg.RESTOptionsGetter = freshget.RESTOptionsGetter(cfg.RESTOptionsGetter, etcdClient)
	// On SIGTERM: drain the requests in flight, then give the connections 2s to close. Without this the
	// connections get the whole request timeout (60s), and one opened as the server stops (a client of its
	// own that was just starting) holds the process that long.
	cfg.ShutdownSendRetryAfter = true

	if standaloneMode {
		authn, clientCA, err := pki.Authenticator()
		if err != nil {
			return nil, err
		}
		if err := cfg.Authentication.ApplyClientCert(clientCA, cfg.SecureServing); err != nil {
			return nil, err
		}
		cfg.Authentication.Authenticator = authn
		if cfg.Authorization.Authorizer, err = standalone.Authorizer(); err != nil {
			return nil, err
		}
		init, err := newAdmissionInitializer(cfg)
		if err != nil {
			return nil, err
		}
		if cfg.AdmissionControl, err = standaloneAdmissionChain(admissionOptions, init); err != nil {
			return nil, err
		}
	}
	var listCache *listencoding.Cache
	if o.JSONListCacheMegabytes > 0 {
		listCache = listencoding.NewCache(int64(o.JSONListCacheMegabytes)<<20, listCacheInterval)
		listCache.RegisterMetrics()
	}
	return &apiserver.Config{
		GenericConfig:   cfg,
		InformerFactory: hcpInformers,
		Stores:          stores,
		ListCache:       listCache,
		Rules: apiserver.StorageRules{
			Claims:                             claims.New(etcdClient),
			MaxBreakglassCredentialsPerCluster: o.MaxBreakglassCredentialsPerCluster,
			Catalog:                            catalog,
			Service:                            ptr.To(o.Controllers.serviceFacts()),
		},
	}, nil
}

// listCacheInterval is how often the JSON list cache drops what went unread since the time before: the
// JSON of deleted objects is freed within twice that.
const listCacheInterval = 10 * time.Minute

// standaloneAdmissionPlugins are the enabled plugins of the service, in order.
func standaloneAdmissionPlugins(a *genericoptions.AdmissionOptions) []string {
	var names []string
	for _, name := range hcpadmission.OrderedPlugins {
		if !slices.Contains(a.DisablePlugins, name) {
			names = append(names, name)
		}
	}
	return names
}

// validateStandaloneAdmission refuses plugins that need kube-apiserver, which standalone mode lacks.
func validateStandaloneAdmission(a *genericoptions.AdmissionOptions) []error {
	var errs []error
	for _, name := range a.EnablePlugins {
		if !slices.Contains(hcpadmission.OrderedPlugins, name) {
			errs = append(errs, fmt.Errorf("--enable-admission-plugins: %s needs kube-apiserver and is not available in standalone mode; available are %s",
				name, strings.Join(hcpadmission.OrderedPlugins, ", ")))
		}
	}
	return errs
}

// standaloneAdmissionChain builds the chain of the service's enabled plugins, with the same
// metrics the standard chain has.
func standaloneAdmissionChain(a *genericoptions.AdmissionOptions, init admission.PluginInitializer) (admission.Interface, error) {
	names := standaloneAdmissionPlugins(a)
	configs, err := admission.ReadAdmissionConfiguration(names, a.ConfigFile, nil)
	if err != nil {
		return nil, err
	}
	return a.Plugins.NewFromPlugins(names, configs, init, admission.DecoratorFunc(admissionmetrics.WithControllerMetrics))
}
