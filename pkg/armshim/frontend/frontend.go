package frontend

import (
	"fmt"
	"net/http"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	hcpinformers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	hcplisters "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// Config is what a Frontend serves from.
type Config struct {
	// Client reaches hcp-apiserver.
	Client versioned.Interface
	// Location is the one Azure region this frontend serves, e.g. eastus.
	Location string
	// Versions, when set, answers hcpOpenShiftVersions from an informer's cache of the API's
	// OpenShiftVersions once it is filled; without it, or before, they are read from the API.
	Versions hcpinformers.OpenShiftVersionInformer
	// Subscriptions, when set, answers the subscription check of every request from an informer's cache
	// instead of a GET each time; a subscription the cache does not hold yet is read from the API.
	Subscriptions hcplisters.ARMSubscriptionLister
	// Namespaces, when set, makes the namespace of a resource group the first time a resource is
	// created in it, which an hcp-apiserver behind kube-apiserver needs; kube-apiserver serves them.
	Namespaces corev1client.NamespaceInterface
}

// Frontend is the ARM frontend, an http.Handler.
type Frontend struct {
	client         versioned.Interface
	location       string
	versions       hcplisters.OpenShiftVersionLister
	versionsSynced func() bool
	subs           hcplisters.ARMSubscriptionLister
	namespaces     corev1client.NamespaceInterface
	clusters       *kind[*hcpv1alpha1.HCPCluster]
	nodePools      *kind[*hcpv1alpha1.NodePool]
	auths          *kind[*hcpv1alpha1.ExternalAuth]
	routes         []*route
}

// New returns the frontend of a region.
func New(cfg Config) (*Frontend, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("a client of hcp-apiserver is required")
	}
	if cfg.Location == "" {
		return nil, fmt.Errorf("a location is required")
	}
	f := &Frontend{client: cfg.Client, location: normalizeLocation(cfg.Location), subs: cfg.Subscriptions, namespaces: cfg.Namespaces}
	if cfg.Versions != nil {
		f.versions, f.versionsSynced = cfg.Versions.Lister(), cfg.Versions.Informer().HasSynced
	}
	f.clusters = clusterKind(cfg.Client)
	f.nodePools = nodePoolKind(cfg.Client, f.clusters)
	f.auths = externalAuthKind(cfg.Client, f.clusters)
	f.routes = f.newRoutes()
	return f, nil
}

// Location is the region the frontend serves, as ARM compares it.
func (f *Frontend) Location() string { return f.location }

func (f *Frontend) newRoutes() []*route {
	const (
		sub      = "/subscriptions/{sub}"
		provider = "/providers/microsoft.redhatopenshift"
		rg       = sub + "/resourcegroups/{rg}"
		cluster  = rg + provider + "/hcpopenshiftclusters/{cluster}"
		location = sub + provider + "/locations/{location}"
	)
	const (
		clusters    = "hcpOpenShiftClusters"
		nodePools   = "hcpOpenShiftClusters/nodePools"
		auths       = "hcpOpenShiftClusters/externalAuths"
		versions    = "locations/hcpOpenShiftVersions"
		statuses    = "locations/hcpOperationStatuses"
		results     = "locations/hcpOperationResults"
		deployments = "deployments"
	)
	get, put, patch, del, post := http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost
	gated := true
	cl, np, ea := f.clusters, f.nodePools, f.auths
	return []*route{
		newRoute("/providers/microsoft.redhatopenshift/operations", anyVersion, "operations", !gated,
			map[string]handlerFunc{get: f.listProviderOperations}),
		newRoute(sub, subscriptionVersion, "subscriptions", !gated,
			map[string]handlerFunc{get: f.getSubscription, put: f.putSubscription}),
		newRoute(sub+provider+"/hcpopenshiftclusters", resourceVersions, clusters, gated,
			map[string]handlerFunc{get: f.listClusters}),
		newRoute(rg+provider+"/hcpopenshiftclusters", resourceVersions, clusters, gated,
			map[string]handlerFunc{get: f.listClusters}),
		newRoute(cluster, resourceVersions, clusters, gated, map[string]handlerFunc{
			get:   func(r *request) error { return getResource(f, cl, r) },
			put:   func(r *request) error { return putResource(f, cl, r) },
			patch: func(r *request) error { return patchResource(f, cl, r) },
			del:   func(r *request) error { return deleteResource(f, cl, r) },
		}),
		newRoute(cluster+"/requestadmincredential", resourceVersions, clusters, gated,
			map[string]handlerFunc{post: f.requestAdminCredential}),
		newRoute(cluster+"/revokecredentials", resourceVersions, clusters, gated,
			map[string]handlerFunc{post: f.revokeCredentials}),
		newRoute(cluster+"/nodepools", resourceVersions, nodePools, gated,
			map[string]handlerFunc{get: f.listNodePools}),
		newRoute(cluster+"/nodepools/{nodepool}", resourceVersions, nodePools, gated, map[string]handlerFunc{
			get:   func(r *request) error { return getResource(f, np, r) },
			put:   func(r *request) error { return putResource(f, np, r) },
			patch: func(r *request) error { return patchResource(f, np, r) },
			del:   func(r *request) error { return deleteResource(f, np, r) },
		}),
		newRoute(cluster+"/externalauths", resourceVersions, auths, gated,
			map[string]handlerFunc{get: f.listExternalAuths}),
		newRoute(cluster+"/externalauths/{auth}", resourceVersions, auths, gated, map[string]handlerFunc{
			get:   func(r *request) error { return getResource(f, ea, r) },
			put:   func(r *request) error { return putResource(f, ea, r) },
			patch: func(r *request) error { return patchResource(f, ea, r) },
			del:   func(r *request) error { return deleteResource(f, ea, r) },
		}),
		newRoute(location+"/hcpopenshiftversions", resourceVersions, versions, gated,
			map[string]handlerFunc{get: f.listVersions}),
		newRoute(location+"/hcpopenshiftversions/{version}", resourceVersions, versions, gated,
			map[string]handlerFunc{get: f.getVersion}),
		newRoute(location+"/hcpoperationstatuses/{operation}", resourceVersions, statuses, gated,
			map[string]handlerFunc{get: f.getOperationStatus}),
		newRoute(location+"/hcpoperationresults/{operation}", resourceVersions, results, gated,
			map[string]handlerFunc{get: f.getOperationResult}),
		// ARM calls preflight with its own api-version (2020-06-01), as it defines the endpoint.
		newRoute(rg+provider+"/deployments/{deployment}/preflight", anyVersion, deployments, gated,
			map[string]handlerFunc{post: f.preflight}),
		newRoute("/healthz", anyVersion, "", !gated, map[string]handlerFunc{get: f.healthz}),
		newRoute("/location", anyVersion, "", !gated, map[string]handlerFunc{get: f.getLocation}),
	}
}

func (f *Frontend) healthz(req *request) error {
	req.w.Header().Set("Content-Type", "text/plain")
	_, _ = req.w.Write([]byte("ok"))
	return nil
}

func (f *Frontend) getLocation(req *request) error {
	writeJSON(req.w, http.StatusOK, f.location)
	return nil
}
