// Package breakglasspolicy enforces when a break-glass credential may be issued: only for an
// existing, Succeeded HCPCluster whose credentials are not being revoked, and only up to a limit
// of unexpired credentials per cluster. A break-glass credential is cluster-admin that bypasses
// the cluster's identity provider, so few are kept at a time. The request's own fields (the
// certificate signing request's subject and usages, the lifetime) are checked by validation
// (apis/hcp/validation), which runs before this plugin.
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
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

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

// credentialsByCluster indexes BreakglassCredentials by "<namespace>/<spec.clusterName>".
const credentialsByCluster = PluginName + "/credentialsByCluster"

// DefaultMaxCredentialsPerCluster applies when the policy sets no limit.
const DefaultMaxCredentialsPerCluster = 10

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks a BreakglassCredential against its cluster and the per-cluster limit.
type Plugin struct {
	*admission.Handler
	client      versioned.Interface
	clusters    listers.HCPClusterLister
	credentials cache.Indexer
	// indexErr is why the index could not be added; ValidateInitialization reports it.
	indexErr       error
	maxCredentials int
	clock          clock.PassiveClock
}

var (
	_ admission.ValidationInterface    = &Plugin{}
	_ initializer.WantsInformerFactory = &Plugin{}
	_ initializer.WantsClient          = &Plugin{}
	_ initializer.WantsPolicy          = &Plugin{}
)

// New returns the plugin; it needs SetInformerFactory before use.
func New() *Plugin {
	return &Plugin{
		Handler:        admission.NewHandler(admission.Create),
		maxCredentials: DefaultMaxCredentialsPerCluster,
		clock:          clock.RealClock{},
	}
}

// SetInformerFactory implements initializer.WantsInformerFactory.
func (p *Plugin) SetInformerFactory(f informers.SharedInformerFactory) {
	clusters, credentials := f.Hcp().V1alpha1().HCPClusters(), f.Hcp().V1alpha1().BreakglassCredentials()
	informer := credentials.Informer()
	// Another instance of this plugin on the same factory has added the same index already.
	if _, found := informer.GetIndexer().GetIndexers()[credentialsByCluster]; !found {
		p.indexErr = informer.AddIndexers(cache.Indexers{credentialsByCluster: indexCluster})
	}
	p.clusters, p.credentials = clusters.Lister(), informer.GetIndexer()
	p.SetReadyFunc(func() bool { return clusters.Informer().HasSynced() && informer.HasSynced() })
}

// SetPolicy implements initializer.WantsPolicy.
func (p *Plugin) SetPolicy(policy initializer.Policy) {
	p.maxCredentials = policy.MaxBreakglassCredentialsPerCluster
	if p.maxCredentials <= 0 {
		p.maxCredentials = DefaultMaxCredentialsPerCluster
	}
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil || p.credentials == nil || p.client == nil {
		return fmt.Errorf("%s needs the informer factory and a client", PluginName)
	}
	if p.indexErr != nil {
		return fmt.Errorf("%s could not index BreakglassCredentials: %w", PluginName, p.indexErr)
	}
	return nil
}

func indexCluster(obj interface{}) ([]string, error) {
	credential, ok := obj.(*v1alpha1.BreakglassCredential)
	if !ok {
		return nil, fmt.Errorf("expected *v1alpha1.BreakglassCredential, got %T", obj)
	}
	return []string{credential.Namespace + "/" + credential.Spec.ClusterName}, nil
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

	unexpired, err := p.unexpired(a.GetNamespace(), credential.Spec.ClusterName)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if unexpired >= p.maxCredentials {
		return refuse.Forbidden(PluginName, a,
			"HCPCluster %s already has %d unexpired break-glass credentials and at most %d are allowed; delete one or wait for one to expire",
			cluster.Name, unexpired, p.maxCredentials)
	}
	return nil
}

// unexpired counts the cluster's credentials that are, or may become, valid certificates.
func (p *Plugin) unexpired(namespace, clusterName string) (int, error) {
	objs, err := p.credentials.ByIndex(credentialsByCluster, namespace+"/"+clusterName)
	if err != nil {
		return 0, err
	}
	now := metav1.NewTime(p.clock.Now())
	n := 0
	for _, obj := range objs {
		status := obj.(*v1alpha1.BreakglassCredential).Status
		switch status.Phase {
		case v1alpha1.BreakglassCredentialPhaseExpired, v1alpha1.BreakglassCredentialPhaseRevoked, v1alpha1.BreakglassCredentialPhaseFailed:
			continue
		}
		if status.ExpirationTimestamp != nil && !now.Before(status.ExpirationTimestamp) {
			continue
		}
		n++
	}
	return n, nil
}
