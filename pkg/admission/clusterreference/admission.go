// Package clusterreference enforces that node pools, external auths and break-glass credentials belong
// to an HCPCluster that exists and is not going away, and that inspections name one that exists. (That a running cluster
// keeps at least one node pool is kept by the registry, pkg/registry/hcp/nodepool,
// which counts under a lock so that racing deletes cannot remove the last two.)
package clusterreference

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/refuse"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// PluginName is the name the plugin is enabled and disabled by.
const PluginName = "ClusterReference"

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks spec.clusterName on create.
type Plugin struct {
	*admission.Handler
	client   versioned.Interface
	clusters listers.HCPClusterLister
}

var (
	_ admission.ValidationInterface    = &Plugin{}
	_ initializer.WantsInformerFactory = &Plugin{}
	_ initializer.WantsClient          = &Plugin{}
)

// New returns the plugin; it needs SetInformerFactory before use.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create)}
}

// SetInformerFactory implements initializer.WantsInformerFactory.
func (p *Plugin) SetInformerFactory(f informers.SharedInformerFactory) {
	clusters := f.Hcp().V1alpha1().HCPClusters()
	p.clusters = clusters.Lister()
	p.SetReadyFunc(clusters.Informer().HasSynced)
}

// SetClient implements initializer.WantsClient.
func (p *Plugin) SetClient(c versioned.Interface) { p.client = c }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil || p.client == nil {
		return fmt.Errorf("%s needs the informer factory and a client", PluginName)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	switch obj := a.GetObject().(type) {
	case *hcp.NodePool:
		return p.validateOwner(ctx, a, obj.Spec.ClusterName, false)
	case *hcp.ExternalAuth:
		return p.validateOwner(ctx, a, obj.Spec.ClusterName, false)
	case *hcp.BreakglassCredential:
		return p.validateOwner(ctx, a, obj.Spec.ClusterName, false)
	case *hcp.ClusterInspection:
		// A cluster whose deletion is stuck is one an SRE inspects.
		return p.validateOwner(ctx, a, obj.Spec.ClusterName, true)
	}
	return nil
}

// validateOwner refuses an object whose cluster does not exist or, unless whileDeleting, is being deleted.
func (p *Plugin) validateOwner(ctx context.Context, a admission.Attributes, clusterName string, whileDeleting bool) error {
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
	if cluster.DeletionTimestamp != nil && !whileDeleting {
		return refuse.Conflict(PluginName, a, "HCPCluster %s is being deleted; nothing new can be added to it", clusterName)
	}
	return nil
}
