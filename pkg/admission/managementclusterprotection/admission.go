// Package managementclusterprotection enforces that a ManagementCluster with hosted clusters
// placed on it cannot be deleted. Its hosted control planes run there; deleting the object
// would leave them running with no Maestro consumer to deliver to, so the service could
// neither update nor delete them.
package managementclusterprotection

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/refuse"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
)

// PluginName is the name the plugin is enabled and disabled by.
const PluginName = "ManagementClusterProtection"

// clustersByManagementCluster indexes HCPClusters by status.managementCluster.
const clustersByManagementCluster = PluginName + "/clustersByManagementCluster"

// listed is how many hosted clusters a refusal names; the count covers the rest.
const listed = 5

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin refuses to delete a ManagementCluster that hosts clusters.
type Plugin struct {
	*admission.Handler
	client   versioned.Interface
	clusters cache.Indexer
	// indexErr is why the index could not be added; ValidateInitialization reports it.
	indexErr error
}

var (
	_ admission.ValidationInterface    = &Plugin{}
	_ initializer.WantsInformerFactory = &Plugin{}
	_ initializer.WantsClient          = &Plugin{}
)

// SetClient implements initializer.WantsClient.
func (p *Plugin) SetClient(c versioned.Interface) { p.client = c }

// New returns the plugin; it needs SetInformerFactory before use.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Delete)}
}

// SetInformerFactory implements initializer.WantsInformerFactory.
func (p *Plugin) SetInformerFactory(f informers.SharedInformerFactory) {
	informer := f.Hcp().V1alpha1().HCPClusters().Informer()
	// Another instance of this plugin on the same factory has added the same index already.
	if _, found := informer.GetIndexer().GetIndexers()[clustersByManagementCluster]; !found {
		p.indexErr = informer.AddIndexers(cache.Indexers{clustersByManagementCluster: indexManagementCluster})
	}
	p.clusters = informer.GetIndexer()
	p.SetReadyFunc(informer.HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil || p.client == nil {
		return fmt.Errorf("%s needs the informer factory and a client", PluginName)
	}
	if p.indexErr != nil {
		return fmt.Errorf("%s could not index HCPClusters: %w", PluginName, p.indexErr)
	}
	return nil
}

// indexManagementCluster indexes a placed cluster, being deleted or not: until it is gone its
// control plane still runs on the management cluster.
func indexManagementCluster(obj interface{}) ([]string, error) {
	cluster, ok := obj.(*v1alpha1.HCPCluster)
	if !ok {
		return nil, fmt.Errorf("expected *v1alpha1.HCPCluster, got %T", obj)
	}
	if cluster.Status.ManagementCluster == "" {
		return nil, nil
	}
	return []string{cluster.Status.ManagementCluster}, nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != hcp.Resource("managementclusters") || a.GetSubresource() != "" {
		return nil
	}
	// A delete-collection runs admission once per item with the item as the old object and no
	// name in the attributes, so the name comes from the object when there is one.
	name := a.GetName()
	if mc, ok := a.GetOldObject().(*hcp.ManagementCluster); ok {
		name = mc.Name
	}
	if name == "" {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, fmt.Errorf("%s is not yet ready to handle the request", PluginName))
	}

	objs, err := p.clusters.ByIndex(clustersByManagementCluster, name)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	hosted := make([]string, 0, len(objs))
	for _, obj := range objs {
		c := obj.(*v1alpha1.HCPCluster)
		hosted = append(hosted, c.Namespace+"/"+c.Name)
	}
	if len(hosted) == 0 {
		// A placement made a moment ago may not have reached the informer; deleting a management
		// cluster is rare and cannot be undone, so ask the server before letting it go.
		live, err := p.client.HcpV1alpha1().HCPClusters(metav1.NamespaceAll).List(ctx,
			metav1.ListOptions{FieldSelector: "status.managementCluster=" + name})
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		for _, c := range live.Items {
			hosted = append(hosted, c.Namespace+"/"+c.Name)
		}
	}
	if len(hosted) == 0 {
		return nil
	}
	slices.Sort(hosted)
	names := strings.Join(hosted[:min(len(hosted), listed)], ", ")
	if len(hosted) > listed {
		names += fmt.Sprintf(" and %d more", len(hosted)-listed)
	}
	kind := "HCPCluster"
	if len(hosted) > 1 {
		kind = "HCPClusters"
	}
	return refuse.Forbidden(PluginName, a,
		"ManagementCluster %s hosts %d %s (%s); set spec.schedulable=false to stop new placements and move or delete the hosted clusters first",
		name, len(hosted), kind, names)
}
