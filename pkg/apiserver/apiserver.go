// Package apiserver assembles hcp-apiserver: the scheme of the API, the storage
// of every resource, and the generic API server that serves them.
package apiserver

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	scalescheme "k8s.io/client-go/scale/scheme"
	scaleautoscalingv1 "k8s.io/client-go/scale/scheme/autoscalingv1"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/install"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/listencoding"
	"github.com/aro-hcp/hcp-apiserver/pkg/localwatch"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/armoperation"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/armsubscription"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/breakglasscredential"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/clusterinspection"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/externalauth"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/hcpcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/managementcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/nodepool"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/openshiftversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/routecache"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

var (
	// Scheme knows every type the server reads and writes.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes them in every media type the server speaks.
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	install.Install(Scheme)
	// Options and status types that every group shares are registered unversioned, as kube-apiserver does.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	Scheme.AddUnversionedTypes(schema.GroupVersion{Group: "", Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{},
	)
	// nodepools/scale speaks autoscaling/v1 Scale, with client-go's internal Scale as its hub.
	utilruntime.Must(scalescheme.AddToScheme(Scheme))
	utilruntime.Must(scaleautoscalingv1.AddToScheme(Scheme))
}

// Config is the configuration of an hcp-apiserver.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	// InformerFactory feeds the admission plugins; the server starts it once it serves.
	InformerFactory informers.SharedInformerFactory
	// Stores, when set, are given the server's stores, for the informers that read them (pkg/localwatch).
	Stores *localwatch.Stores
	// Rules are what the stores need to keep the rules that span several objects.
	Rules StorageRules
	// ListCache keeps the JSON of listed objects per version; nil encodes every item of every list.
	ListCache *listencoding.Cache
}

// StorageRules are what the stores need to keep the rules that span several objects while requests race:
// unique infrastructure and consumer names, the credential limit, the last node pool.
type StorageRules struct {
	// Claims holds claims and locks in the etcd the objects are in.
	Claims *claims.Store
	// MaxBreakglassCredentialsPerCluster is how many unexpired break-glass credentials a cluster may have.
	MaxBreakglassCredentialsPerCluster int
	// Catalog resolves the versions of clusters as they are stored.
	Catalog *versioncatalog.Catalog
	// Service holds the service's settings that a new cluster's addresses follow from; nil stores
	// clusters without addresses until their controller writes them.
	Service *clusterfacts.Settings
	// Authorizer decides whether the caller of a create that asks for an ARM operation may create it;
	// New sets the server's.
	Authorizer authorizer.Authorizer
}

// CompletedConfig is a Config with every default filled in.
type CompletedConfig struct {
	GenericConfig   genericapiserver.CompletedConfig
	InformerFactory informers.SharedInformerFactory
	Stores          *localwatch.Stores
	Rules           StorageRules
	ListCache       *listencoding.Cache
}

// Complete fills in the defaults of the generic server.
func (c *Config) Complete() CompletedConfig {
	// Innermost, so that only requests that passed authentication and authorization are read.
	build := c.GenericConfig.BuildHandlerChainFunc
	c.GenericConfig.BuildHandlerChainFunc = func(apiHandler http.Handler, config *genericapiserver.Config) http.Handler {
		return build(withBodyLimits(apiHandler, config.RequestTimeout/2), config)
	}
	return CompletedConfig{GenericConfig: c.GenericConfig.Complete(), InformerFactory: c.InformerFactory, Stores: c.Stores,
		Rules: c.Rules, ListCache: c.ListCache}
}

// Server is a running hcp-apiserver.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// New builds the server and installs the hcp.aro.azure.com API group.
func (c CompletedConfig) New() (*Server, error) {
	generic, err := c.GenericConfig.New("hcp-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	// Routes are selected as go-restful's CurlyRouter selects them, once per shape of request.
	generic.Handler.GoRestfulContainer.Router(routecache.New())
	rules := c.Rules
	rules.Authorizer = c.GenericConfig.Authorization.Authorizer
	storage, err := NewStorage(c.GenericConfig.RESTOptionsGetter, rules)
	if err != nil {
		return nil, err
	}
	if c.Stores != nil {
		c.Stores.Serve(storage)
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(hcp.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	group.NegotiatedSerializer = PrintableYAML(group.NegotiatedSerializer)
	group.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = storage
	if c.ListCache != nil {
		group.NegotiatedSerializer = listencoding.NegotiatedSerializer(group.NegotiatedSerializer, c.ListCache)
	}
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, err
	}
	if c.Rules.Claims != nil {
		// Objects stored by a server that did not claim their unique values get their claims before
		// the server is ready; this is done once for every server sharing the etcd.
		generic.AddPostStartHookOrDie("claim-unique-values", func(ctx genericapiserver.PostStartHookContext) error {
			claimExisting := func(ctx context.Context) error {
				for _, s := range storage {
					if r, ok := s.(*hcpregistry.REST); ok {
						if err := r.ClaimExisting(ctx); err != nil {
							return err
						}
					}
				}
				return nil
			}
			// A failed hook stops the server: retry what etcd may refuse for a moment.
			err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: 30 * time.Second},
				func(ctx context.Context) (bool, error) {
					if err := c.Rules.Claims.Once(ctx, "claim-unique-values", claimExisting); err != nil {
						if ctx.Err() != nil {
							return false, ctx.Err()
						}
						klog.FromContext(ctx).Error(err, "Cannot claim the unique values of stored objects; retrying")
						return false, nil
					}
					return true, nil
				})
			if ctx.Err() != nil {
				// The server is stopping, which is no failure: the next start claims them.
				return nil
			}
			return err
		})
	}
	generic.AddPostStartHookOrDie("start-informers", func(ctx genericapiserver.PostStartHookContext) error {
		if c.InformerFactory != nil {
			c.InformerFactory.Start(ctx.Done())
		}
		// In aggregated mode the standard admission plugins read kube-apiserver through these.
		if kube := c.GenericConfig.SharedInformerFactory; kube != nil {
			kube.Start(ctx.Done())
		}
		return nil
	})
	return &Server{GenericAPIServer: generic}, nil
}

// NewStorage returns the storage of every resource and subresource of v1alpha1.
func NewStorage(optsGetter generic.RESTOptionsGetter, rules StorageRules) (map[string]rest.Storage, error) {
	storage := map[string]rest.Storage{}
	// add("nodepools")(nodepool.NewREST(...)) keeps what the constructor returned.
	add := func(resource string) func(*hcpregistry.REST, *hcpregistry.StatusREST, error) error {
		return func(main *hcpregistry.REST, status *hcpregistry.StatusREST, err error) error {
			if err != nil {
				return err
			}
			storage[resource] = main
			storage[resource+"/status"] = status
			return nil
		}
	}
	// The creates the ARM frontend makes record their operation in their own write.
	var operations hcpregistry.OperationRecorder
	if rules.Claims != nil {
		recorder, err := armoperation.NewRecorder(Scheme, optsGetter, rules.Authorizer)
		if err != nil {
			return nil, err
		}
		operations = recorder
	}
	if err := add("hcpclusters")(hcpcluster.NewREST(Scheme, optsGetter, rules.Claims, operations, rules.Catalog, rules.Service)); err != nil {
		return nil, err
	}
	// Node pools read their cluster as stored, to keep the last pool of a running cluster.
	clusters := storage["hcpclusters"].(*hcpregistry.REST)
	if err := add("nodepools")(nodepool.NewREST(Scheme, optsGetter, rules.Claims, operations, clusters)); err != nil {
		return nil, err
	}
	storage["nodepools/scale"] = nodepool.NewScaleREST(storage["nodepools"].(*hcpregistry.REST).Store)
	if err := add("externalauths")(externalauth.NewREST(Scheme, optsGetter, rules.Claims, operations)); err != nil {
		return nil, err
	}
	inspections, inspectionStatus, err := clusterinspection.NewREST(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	storage["clusterinspections"], storage["clusterinspections/status"] = inspections, inspectionStatus
	keys, destroyKeys, err := breakglasscredential.NewKeys(optsGetter)
	if err != nil {
		return nil, err
	}
	if err := add("breakglasscredentials")(breakglasscredential.NewREST(Scheme, optsGetter, rules.Claims, operations, rules.MaxBreakglassCredentialsPerCluster, keys)); err != nil {
		destroyKeys()
		return nil, err
	}
	credentials := storage["breakglasscredentials"].(*hcpregistry.REST).Store
	if destroy := credentials.DestroyFunc; destroy != nil {
		credentials.DestroyFunc = func() { destroyKeys(); destroy() }
	}
	storage["hcpclusters/revokecredentials"] = hcpcluster.NewRevokeREST(storage["hcpclusters/status"].(*hcpregistry.StatusREST), Codecs.UniversalDecoder(hcp.SchemeGroupVersion))
	storage["breakglasscredentials/kubeconfig"] = breakglasscredential.NewKubeconfigREST(credentials, clusters.Store, keys)
	if err := add("managementclusters")(managementcluster.NewREST(Scheme, optsGetter, rules.Claims)); err != nil {
		return nil, err
	}
	versions, err := openshiftversion.NewREST(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	storage["openshiftversions"] = versions
	if err := add("armsubscriptions")(armsubscription.NewREST(Scheme, optsGetter)); err != nil {
		return nil, err
	}
	if err := add("armoperations")(armoperation.NewREST(Scheme, optsGetter)); err != nil {
		return nil, err
	}
	return storage, nil
}
