// Package uniqueinfrastructure enforces that an HCPCluster's Azure infrastructure serves that
// cluster alone: no other HCPCluster, in any namespace, may use the same worker subnet, network
// security group or managed resource group. The service programs rules into the subnet and the
// network security group and owns everything in the managed resource group, so two clusters
// sharing one would overwrite, and on deletion destroy, each other's resources.
package uniqueinfrastructure

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/refuse"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
)

// PluginName is the name the plugin is enabled and disabled by.
const PluginName = "UniqueInfrastructure"

// clustersByInfrastructure indexes HCPClusters by infrastructureKey of each resource they use,
// so a create looks up only the clusters that could collide with it.
const clustersByInfrastructure = PluginName + "/clustersByInfrastructure"

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin refuses an HCPCluster whose subnet, network security group or managed resource group
// another HCPCluster already uses.
type Plugin struct {
	*admission.Handler
	clusters cache.Indexer
	// indexErr is why the index could not be added; ValidateInitialization reports it.
	indexErr error
}

var (
	_ admission.ValidationInterface    = &Plugin{}
	_ initializer.WantsInformerFactory = &Plugin{}
)

// New returns the plugin; it needs SetInformerFactory before use. It handles Create only:
// the fields it checks are immutable.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create)}
}

// SetInformerFactory implements initializer.WantsInformerFactory.
func (p *Plugin) SetInformerFactory(f informers.SharedInformerFactory) {
	informer := f.Hcp().V1alpha1().HCPClusters().Informer()
	// Another instance of this plugin on the same factory has added the same index already.
	if _, found := informer.GetIndexer().GetIndexers()[clustersByInfrastructure]; !found {
		p.indexErr = informer.AddIndexers(cache.Indexers{clustersByInfrastructure: indexInfrastructure})
	}
	p.clusters = informer.GetIndexer()
	p.SetReadyFunc(informer.HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil {
		return fmt.Errorf("%s needs the informer factory", PluginName)
	}
	if p.indexErr != nil {
		return fmt.Errorf("%s could not index HCPClusters: %w", PluginName, p.indexErr)
	}
	return nil
}

// resource is one kind of infrastructure a cluster must not share.
type resource struct {
	kind string
	// what names it in refusals: "a subnet can serve one cluster only".
	what string
	path *field.Path
	// id reads the resource from a spec; "" means the cluster names none.
	id func(*hcp.HCPClusterSpec) string
	// idV1alpha1 reads it from a cached cluster.
	idV1alpha1 func(*v1alpha1.HCPClusterSpec) string
	// perSubscription is set for names that are unique only within a subscription. Subnet and
	// network security group IDs are full ARM IDs, unique across subscriptions, so a match is a
	// collision even when the clusters live in different subscriptions.
	perSubscription bool
}

var platformPath = field.NewPath("spec", "platform")

var resources = []resource{
	{
		kind: "subnet", what: "a subnet", path: platformPath.Child("subnetID"),
		id:         func(s *hcp.HCPClusterSpec) string { return s.Platform.SubnetID },
		idV1alpha1: func(s *v1alpha1.HCPClusterSpec) string { return s.Platform.SubnetID },
	},
	{
		kind: "nsg", what: "a network security group", path: platformPath.Child("networkSecurityGroupID"),
		id:         func(s *hcp.HCPClusterSpec) string { return s.Platform.NetworkSecurityGroupID },
		idV1alpha1: func(s *v1alpha1.HCPClusterSpec) string { return s.Platform.NetworkSecurityGroupID },
	},
	{
		kind: "mrg", what: "a managed resource group", path: platformPath.Child("managedResourceGroup"),
		id:              func(s *hcp.HCPClusterSpec) string { return s.Platform.ManagedResourceGroup },
		idV1alpha1:      func(s *v1alpha1.HCPClusterSpec) string { return s.Platform.ManagedResourceGroup },
		perSubscription: true,
	},
}

// infrastructureKey is the index key of one resource; Azure IDs and names are case-insensitive.
func infrastructureKey(r resource, subscriptionID, id string) string {
	if r.perSubscription {
		return strings.ToLower(r.kind + "/" + subscriptionID + "/" + id)
	}
	return strings.ToLower(r.kind + "/" + id)
}

// indexInfrastructure indexes a cluster under every resource it names. A cluster being deleted
// is indexed too: it holds its infrastructure until it is gone.
func indexInfrastructure(obj interface{}) ([]string, error) {
	cluster, ok := obj.(*v1alpha1.HCPCluster)
	if !ok {
		return nil, fmt.Errorf("expected *v1alpha1.HCPCluster, got %T", obj)
	}
	var keys []string
	for _, r := range resources {
		if id := r.idV1alpha1(&cluster.Spec); id != "" {
			keys = append(keys, infrastructureKey(r, cluster.Spec.Azure.SubscriptionID, id))
		}
	}
	return keys, nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	cluster, ok := a.GetObject().(*hcp.HCPCluster)
	if !ok {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, fmt.Errorf("%s is not yet ready to handle the request", PluginName))
	}

	var allErrs field.ErrorList
	// Validation refuses this too; checking here as well costs nothing and keeps the rule whole.
	if mrg, rg := cluster.Spec.Platform.ManagedResourceGroup, cluster.Spec.Azure.ResourceGroup; mrg != "" && strings.EqualFold(mrg, rg) {
		allErrs = append(allErrs, field.Invalid(platformPath.Child("managedResourceGroup"), mrg,
			fmt.Sprintf("must differ from spec.azure.resourceGroup (%s): the service owns everything in the managed resource group", rg)))
	}
	for _, r := range resources {
		id := r.id(&cluster.Spec)
		if id == "" {
			continue
		}
		holder, err := p.holder(r, cluster, id)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if holder != nil {
			allErrs = append(allErrs, field.Invalid(r.path, id,
				fmt.Sprintf("is already used by HCPCluster %s/%s in subscription %s; %s can serve one cluster only",
					holder.Namespace, holder.Name, holder.Spec.Azure.SubscriptionID, r.what)))
		}
	}
	if len(allErrs) > 0 {
		return refuse.Invalid(PluginName, a, allErrs)
	}
	return nil
}

// holder returns another cluster that uses the resource, the first by namespace/name when
// several do, or nil.
func (p *Plugin) holder(r resource, cluster *hcp.HCPCluster, id string) (*v1alpha1.HCPCluster, error) {
	objs, err := p.clusters.ByIndex(clustersByInfrastructure, infrastructureKey(r, cluster.Spec.Azure.SubscriptionID, id))
	if err != nil {
		return nil, err
	}
	var holders []*v1alpha1.HCPCluster
	for _, obj := range objs {
		other := obj.(*v1alpha1.HCPCluster)
		// The cache may already hold the object being written.
		if other.Namespace == cluster.Namespace && other.Name == cluster.Name {
			continue
		}
		holders = append(holders, other)
	}
	if len(holders) == 0 {
		return nil, nil
	}
	return slices.MinFunc(holders, func(x, y *v1alpha1.HCPCluster) int {
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	}), nil
}
