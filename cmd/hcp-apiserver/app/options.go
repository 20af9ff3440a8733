// Package app holds the command line of hcp-apiserver: its flags, how they
// turn into a server configuration, and how the server runs until told to stop.
package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	basecompatibility "k8s.io/component-base/compatibility"
	netutils "k8s.io/utils/net"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/openapi"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// EtcdPathPrefix is where the server keeps its objects in etcd.
const EtcdPathPrefix = "/registry/hcp.aro.azure.com"

// Options are the flags of hcp-apiserver.
type Options struct {
	RecommendedOptions       *genericoptions.RecommendedOptions
	ComponentGlobalsRegistry basecompatibility.ComponentGlobalsRegistry

	// DataDir holds the embedded etcd's data and, in standalone mode, the PKI and admin.kubeconfig.
	DataDir string
	// AlternateNames are extra host names and IPs the generated serving certificate is valid for.
	AlternateNames []string
}

// NewOptions returns the default options: standalone on embedded etcd, port 6443.
func NewOptions() *Options {
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(EtcdPathPrefix,
			apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)),
		ComponentGlobalsRegistry: compatibility.DefaultComponentGlobalsRegistry,
		DataDir:                  "hcp-data",
	}
	o.RecommendedOptions.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(
		v1alpha1.SchemeGroupVersion, schema.GroupKind{Group: v1alpha1.GroupName})
	// Protobuf is several times cheaper to encode and decode than JSON, and etcd holds bytes either way.
	o.RecommendedOptions.Etcd.DefaultStorageMediaType = runtime.ContentTypeProtobuf
	o.RecommendedOptions.SecureServing.BindPort = 6443
	return o
}

// AddFlags adds every flag to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.RecommendedOptions.AddFlags(fs)
	o.ComponentGlobalsRegistry.AddFlags(fs)
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Folder for the embedded etcd's data (when --etcd-servers is empty) and, in standalone mode, the generated certificates and admin.kubeconfig.")
	fs.StringSliceVar(&o.AlternateNames, "alternate-names", o.AlternateNames,
		"Extra DNS names and IP addresses the generated serving certificate is valid for, besides localhost, 127.0.0.1 and ::1.")
}

// Standalone tells whether the server runs without a kube-apiserver: no delegated
// authentication or authorization is configured and it does not run in a pod.
func (o *Options) Standalone() bool {
	authn, authz := o.RecommendedOptions.Authentication, o.RecommendedOptions.Authorization
	delegated := (authn != nil && authn.RemoteKubeConfigFile != "") || (authz != nil && authz.RemoteKubeConfigFile != "")
	return !delegated && os.Getenv("KUBERNETES_SERVICE_HOST") == ""
}

// PKI is where standalone mode keeps its certificates.
func (o *Options) PKI() *standalone.PKI { return standalone.NewPKI(filepath.Join(o.DataDir, "pki")) }

// AdminKubeconfig is the file standalone mode writes once the server is ready.
func (o *Options) AdminKubeconfig() string { return filepath.Join(o.DataDir, "admin.kubeconfig") }

// Validate checks the flags. The etcd servers must be known by then: Run starts the
// embedded etcd first when none were given.
func (o *Options) Validate() error {
	errs := o.RecommendedOptions.Validate()
	errs = append(errs, o.ComponentGlobalsRegistry.Validate()...)
	return utilerrors.NewAggregate(errs)
}

// Config turns the options into a server configuration.
func (o *Options) Config() (*apiserver.Config, error) {
	standaloneMode := o.Standalone()
	var pki *standalone.PKI
	if standaloneMode {
		pki = o.PKI()
		hosts := append([]string{"localhost", "127.0.0.1", "::1"}, o.AlternateNames...)
		if err := pki.Ensure(hosts); err != nil {
			return nil, fmt.Errorf("creating the standalone certificates in %s: %w", pki.Dir, err)
		}
		o.RecommendedOptions.SecureServing.ServerCert.CertKey.CertFile = pki.ServingCert
		o.RecommendedOptions.SecureServing.ServerCert.CertKey.KeyFile = pki.ServingKey
		// Nothing to delegate to: this server authenticates and authorizes by itself.
		o.RecommendedOptions.Authentication = nil
		o.RecommendedOptions.Authorization = nil
		o.RecommendedOptions.CoreAPI = nil
		o.RecommendedOptions.Admission = nil
		o.RecommendedOptions.Features.EnablePriorityAndFairness = false
	} else {
		o.RecommendedOptions.SecureServing.ServerCert.CertDirectory = filepath.Join(o.DataDir, "serving-certs")
		if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", o.AlternateNames,
			[]net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
			return nil, fmt.Errorf("creating self-signed serving certificates: %w", err)
		}
	}

	cfg := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	namer := openapinamer.NewDefinitionNamer(apiserver.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "hcp-apiserver"
	cfg.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "hcp-apiserver"
	cfg.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	cfg.FeatureGate = o.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	cfg.EffectiveVersion = o.ComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)

	if err := o.RecommendedOptions.ApplyTo(cfg); err != nil {
		return nil, err
	}

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
	}
	return &apiserver.Config{GenericConfig: cfg}, nil
}
