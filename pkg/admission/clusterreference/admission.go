// Package clusterreference enforces that node pools and break-glass credentials
// belong to an HCPCluster that exists and is not going away, and that a running
// cluster keeps at least one node pool.
package clusterreference

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/refuse"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// PluginName is the name the plugin is enabled and disabled by.
const PluginName = "ClusterReference"

// poolsByCluster indexes node pools by "<namespace>/<spec.clusterName>".
const poolsByCluster = PluginName + "/poolsByCluster"

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks spec.clusterName on create and the last node pool on delete.
type Plugin struct {
	*admission.Handler
	client   versioned.Interface
	clusters listers.HCPClusterLister
	pools    cache.Indexer
}

var (
	_ admission.ValidationInterface    = &Plugin{}
	_ initializer.WantsInformerFactory = &Plugin{}
	_ initializer.WantsClient          = &Plugin{}
)

// New returns the plugin; it needs SetInformerFactory before use.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Delete)}
}

// SetInformerFactory implements initializer.WantsInformerFactory.
func (p *Plugin) SetInformerFactory(f informers.SharedInformerFactory) {
	clusters, pools := f.Hcp().V1alpha1().HCPClusters(), f.Hcp().V1alpha1().NodePools()
	_ = pools.Informer().AddIndexers(cache.Indexers{poolsByCluster: func(obj interface{}) ([]string, error) {
		pool := obj.(*v1alpha1.NodePool)
		return []string{pool.Namespace + "/" + pool.Spec.ClusterName}, nil
	}})
	p.clusters, p.pools = clusters.Lister(), pools.Informer().GetIndexer()
	p.SetReadyFunc(func() bool { return clusters.Informer().HasSynced() && pools.Informer().HasSynced() })
}

// SetClient implements initializer.WantsClient.
func (p *Plugin) SetClient(c versioned.Interface) { p.client = c }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil || p.pools == nil || p.client == nil {
		return fmt.Errorf("%s needs the informer factory and a client", PluginName)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	switch a.GetOperation() {
	case admission.Create:
		switch obj := a.GetObject().(type) {
		case *hcp.NodePool:
			return p.validateOwner(ctx, a, obj.Spec.ClusterName)
		case *hcp.BreakglassCredential:
			return p.validateOwner(ctx, a, obj.Spec.ClusterName)
		}
	case admission.Delete:
		if pool, ok := a.GetOldObject().(*hcp.NodePool); ok {
			return p.validatePoolDelete(a, pool)
		}
	}
	return nil
}

// validateOwner refuses an object whose cluster does not exist or is being deleted.
func (p *Plugin) validateOwner(ctx context.Context, a admission.Attributes, clusterName string) error {
	if !p.WaitForReady() {
		return admission.NewForbidden(a, fmt.Errorf("%s is not yet ready to handle the request", PluginName))
	}
	cluster, err := p.clusters.HCPClusters(a.GetNamespace()).Get(clusterName)
	if apierrors.IsNotFound(err) {
		// A cluster created a moment ago (kubectl apply -f of a cluster and its pools) may not
		// have reached the informer yet: ask the server before refusing.
		cluster, err = p.client.HcpV1alpha1().HCPClusters(a.GetNamespace()).Get(ctx, clusterName, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		notFound := field.NotFound(field.NewPath("spec", "clusterName"), clusterName)
		notFound.Detail = fmt.Sprintf("no HCPCluster of that name in namespace %s; create the cluster first", a.GetNamespace())
		return refuse.Invalid(PluginName, a, field.ErrorList{notFound})
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if cluster.DeletionTimestamp != nil {
		return refuse.Conflict(PluginName, a, "HCPCluster %s is being deleted; nothing new can be added to it", clusterName)
	}
	return nil
}

// validatePoolDelete keeps the last node pool of a Succeeded cluster: without one the cluster
// runs no workloads. Deleting the cluster itself deletes its pools.
func (p *Plugin) validatePoolDelete(a admission.Attributes, pool *hcp.NodePool) error {
	if !p.WaitForReady() {
		return admission.NewForbidden(a, fmt.Errorf("%s is not yet ready to handle the request", PluginName))
	}
	cluster, err := p.clusters.HCPClusters(pool.Namespace).Get(pool.Spec.ClusterName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if cluster.DeletionTimestamp != nil || cluster.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded {
		return nil
	}
	siblings, err := p.pools.ByIndex(poolsByCluster, pool.Namespace+"/"+pool.Spec.ClusterName)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	for _, s := range siblings {
		if other := s.(*v1alpha1.NodePool); other.Name != pool.Name && other.DeletionTimestamp == nil {
			return nil
		}
	}
	return refuse.Forbidden(PluginName, a,
		"NodePool %s is the last node pool of HCPCluster %s, which is Succeeded; create another node pool first, or delete the cluster",
		pool.Name, cluster.Name)
}
