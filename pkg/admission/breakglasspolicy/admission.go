// Package breakglasspolicy enforces when a break-glass credential may be issued: only for an
// existing, Succeeded HCPCluster whose credentials are not being revoked. The request's own fields
// (the certificate signing request's subject and usages, the lifetime) are checked by validation
// (apis/hcp/validation), which runs before this plugin; the limit of unexpired credentials per
// cluster is kept by the registry (pkg/registry/hcp/breakglasscredential), which counts under a
// lock so that racing creates cannot pass it.
package breakglasspolicy

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/refuse"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// PluginName is the name the plugin is enabled and disabled by.
const PluginName = "BreakglassPolicy"

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks a BreakglassCredential against its cluster.
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

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil || p.client == nil {
		return fmt.Errorf("%s needs the informer factory and a client", PluginName)
	}
	return nil
}

// SetClient implements initializer.WantsClient.
func (p *Plugin) SetClient(c versioned.Interface) { p.client = c }

// issuable tells whether credentials can be issued for the cluster as it is.
func issuable(cluster *v1alpha1.HCPCluster) bool {
	return cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateSucceeded &&
		!meta.IsStatusConditionTrue(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	// Creates on subresources (kubeconfig) issue nothing new.
	if a.GetSubresource() != "" {
		return nil
	}
	credential, ok := a.GetObject().(*hcp.BreakglassCredential)
	if !ok {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, fmt.Errorf("%s is not yet ready to handle the request", PluginName))
	}

	cluster, err := p.clusters.HCPClusters(a.GetNamespace()).Get(credential.Spec.ClusterName)
	if err != nil || !issuable(cluster) {
		// The informer may not have seen the cluster, or its latest status, yet: a refusal is
		// rare, so confirm it with the server before answering.
		cluster, err = p.client.HcpV1alpha1().HCPClusters(a.GetNamespace()).Get(ctx, credential.Spec.ClusterName, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		notFound := field.NotFound(field.NewPath("spec", "clusterName"), credential.Spec.ClusterName)
		notFound.Detail = fmt.Sprintf("no HCPCluster of that name in namespace %s; create the cluster first", a.GetNamespace())
		return refuse.Invalid(PluginName, a, field.ErrorList{notFound})
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}

	if state := cluster.Status.ProvisioningState; state != v1alpha1.ProvisioningStateSucceeded {
		if state == "" {
			state = "not yet Accepted"
		}
		return refuse.Conflict(PluginName, a,
			"HCPCluster %s is %s; break-glass credentials can be issued only for Succeeded clusters, try again when it is Succeeded",
			cluster.Name, state)
	}
	if meta.IsStatusConditionTrue(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials) {
		return refuse.Conflict(PluginName, a,
			"HCPCluster %s: a revocation of the cluster's credentials is in progress; try again when it completes", cluster.Name)
	}

	return nil
}
