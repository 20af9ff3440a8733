// Package versionpolicy enforces which OpenShift versions clusters and node pools
// may run: versions the catalog offers in the cluster's channel group, upgrades
// one minor at a time and never down, and node pools that lag the control plane
// by at most two minors and never lead it.
package versionpolicy

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/refuse"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// PluginName is the name the plugin is enabled and disabled by.
const PluginName = "VersionPolicy"

// MaxNodePoolSkew is how many minors a node pool may lag its control plane.
const MaxNodePoolSkew = 2

var (
	// minimumVersion is the oldest minor the service offers; 5.0 is a future major it does not.
	minimumVersion = version.MajorMinor(4, 20)
	nextMajor      = version.MajorMinor(5, 0)
	// generallyAvailable groups need nothing; the others need the experimental-features annotation.
	generallyAvailable = []string{"stable", "fast"}
	experimental       = []string{"candidate", "nightly"}
)

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks spec.version of HCPClusters and NodePools against the catalog and the policy.
type Plugin struct {
	*admission.Handler
	client  versioned.Interface
	catalog *versioncatalog.Catalog
	// now is the clock end of life is judged by.
	now      func() time.Time
	clusters listers.HCPClusterLister
}

var (
	_ admission.ValidationInterface    = &Plugin{}
	_ initializer.WantsInformerFactory = &Plugin{}
	_ initializer.WantsVersionCatalog  = &Plugin{}
	_ initializer.WantsClient          = &Plugin{}
)

// New returns the plugin; it needs SetInformerFactory and SetVersionCatalog before use.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), now: time.Now}
}

// SetInformerFactory implements initializer.WantsInformerFactory.
func (p *Plugin) SetInformerFactory(f informers.SharedInformerFactory) {
	clusters := f.Hcp().V1alpha1().HCPClusters()
	p.clusters = clusters.Lister()
	p.SetReadyFunc(clusters.Informer().HasSynced)
}

// SetClient implements initializer.WantsClient.
func (p *Plugin) SetClient(c versioned.Interface) { p.client = c }

// SetVersionCatalog implements initializer.WantsVersionCatalog.
func (p *Plugin) SetVersionCatalog(c *versioncatalog.Catalog) { p.catalog = c }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil || p.catalog == nil || p.client == nil {
		return fmt.Errorf("%s needs the informer factory, a client and the version catalog", PluginName)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	var errs field.ErrorList
	switch obj := a.GetObject().(type) {
	case *hcp.HCPCluster:
		old, _ := a.GetOldObject().(*hcp.HCPCluster)
		errs = p.validateCluster(obj, old)
	case *hcp.NodePool:
		old, _ := a.GetOldObject().(*hcp.NodePool)
		var err error
		if errs, err = p.validateNodePool(ctx, a, obj, old); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return refuse.Invalid(PluginName, a, errs)
	}
	return nil
}

func (p *Plugin) validateCluster(cluster, old *hcp.HCPCluster) field.ErrorList {
	// A cluster whose version the catalog has since dropped can still change other fields.
	if old != nil && old.Spec.Version == cluster.Spec.Version {
		return nil
	}
	fldPath := field.NewPath("spec", "version")
	group := cluster.Spec.Version.ChannelGroup
	allowedGroups := generallyAvailable
	if cluster.Annotations[hcp.ExperimentalFeaturesAnnotation] == "true" {
		allowedGroups = append(append([]string{}, generallyAvailable...), experimental...)
	}
	if !slices.Contains(allowedGroups, group) {
		detail := "must be one of " + strings.Join(allowedGroups, ", ")
		if slices.Contains(experimental, group) {
			detail += fmt.Sprintf("; %s needs the annotation %s: \"true\" on the cluster", group, hcp.ExperimentalFeaturesAnnotation)
		}
		return field.ErrorList{field.Invalid(fldPath.Child("channelGroup"), group, detail)}
	}

	idPath := fldPath.Child("id")
	requested, err := version.ParseGeneric(cluster.Spec.Version.ID)
	if err != nil {
		return nil // validation has already refused a malformed version
	}
	offered := p.catalog.Minors(group)
	if requested.LessThan(minimumVersion) || !requested.LessThan(nextMajor) || !slices.Contains(offered, cluster.Spec.Version.ID) {
		return field.ErrorList{field.Invalid(idPath, cluster.Spec.Version.ID,
			fmt.Sprintf("must be one of %s in channel group %s", strings.Join(atLeastMinimum(offered), ", "), group))}
	}
	if errs := p.pastEndOfLife(idPath, cluster.Spec.Version.ID, group); errs != nil {
		return errs
	}
	if old == nil || old.Spec.Version.ID == cluster.Spec.Version.ID {
		return nil
	}
	current, err := version.ParseGeneric(old.Spec.Version.ID)
	if err != nil {
		return nil
	}
	switch {
	case requested.LessThan(current):
		return field.ErrorList{field.Invalid(idPath, cluster.Spec.Version.ID,
			fmt.Sprintf("cannot move down from %s: a control plane is never downgraded", old.Spec.Version.ID))}
	case requested.Minor() > current.Minor()+1:
		return field.ErrorList{field.Invalid(idPath, cluster.Spec.Version.ID,
			fmt.Sprintf("can move at most one minor at a time: from %s to %d.%d", old.Spec.Version.ID, current.Major(), current.Minor()+1))}
	}
	return nil
}

// pastEndOfLife refuses a version (MAJOR.MINOR or full) whose minor reached its end of life: no new
// cluster, node pool or upgrade lands on it. Clusters already on it keep running.
func (p *Plugin) pastEndOfLife(fldPath *field.Path, v, group string) field.ErrorList {
	eol, ok := p.catalog.EndOfLife(v)
	if !ok || p.now().Before(eol) {
		return nil
	}
	var alive []string
	for _, m := range atLeastMinimum(p.catalog.Minors(group)) {
		if end, ok := p.catalog.EndOfLife(m); !ok || p.now().Before(end) {
			alive = append(alive, m)
		}
	}
	return field.ErrorList{field.Invalid(fldPath, v, fmt.Sprintf("reached its end of life on %s; channel group %s offers %s",
		eol.UTC().Format(time.DateOnly), group, strings.Join(alive, ", ")))}
}

func (p *Plugin) validateNodePool(ctx context.Context, a admission.Attributes, pool, old *hcp.NodePool) (field.ErrorList, error) {
	group := pool.Spec.Version.ChannelGroup
	if group == "" {
		group = "stable"
	}
	groupChanged := old == nil || old.Spec.Version.ChannelGroup != pool.Spec.Version.ChannelGroup
	idChanged := pool.Spec.Version.ID != "" && (old == nil || old.Spec.Version != pool.Spec.Version)
	if !groupChanged && !idChanged {
		return nil, nil
	}
	idPath := field.NewPath("spec", "version", "id")
	if _, ok := p.catalog.Find(group, pool.Spec.Version.ID); idChanged && !ok {
		return field.ErrorList{field.Invalid(idPath, pool.Spec.Version.ID,
			fmt.Sprintf("is not a release of channel group %s; it offers %s", group, strings.Join(p.catalog.Versions(group), ", ")))}, nil
	}
	if idChanged {
		if errs := p.pastEndOfLife(idPath, pool.Spec.Version.ID, group); errs != nil {
			return errs, nil
		}
	}

	if !p.WaitForReady() {
		return nil, admission.NewForbidden(a, fmt.Errorf("%s is not yet ready to handle the request", PluginName))
	}
	// A pool follows its control plane: the same channel group, and a version within the skew policy.
	check := func(cluster *v1alpha1.HCPCluster) field.ErrorList {
		var errs field.ErrorList
		if clusterGroup := cluster.Spec.Version.ChannelGroup; clusterGroup != "" && clusterGroup != group {
			errs = append(errs, field.Invalid(field.NewPath("spec", "version", "channelGroup"), group,
				fmt.Sprintf("must be the same as control plane channel group '%s'", clusterGroup)))
		}
		if requested, err := version.ParseSemantic(pool.Spec.Version.ID); idChanged && err == nil {
			errs = append(errs, skew(idPath, requested, cluster)...)
		}
		return errs
	}
	cluster, err := p.clusters.HCPClusters(pool.Namespace).Get(pool.Spec.ClusterName)
	if err == nil && check(cluster) == nil {
		return nil, nil
	}
	// The informer may lag behind a cluster created or upgraded a moment ago: a refusal is
	// rare, so confirm it with the server.
	cluster, err = p.client.HcpV1alpha1().HCPClusters(pool.Namespace).Get(ctx, pool.Spec.ClusterName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // the ClusterReference plugin refuses pools of missing clusters
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return check(cluster), nil
}

// skew refuses a node pool version newer than its control plane or more than MaxNodePoolSkew
// minors older.
func skew(idPath *field.Path, requested *version.Version, cluster *v1alpha1.HCPCluster) field.ErrorList {
	controlPlane, err := version.ParseGeneric(cluster.Spec.Version.ID)
	if err != nil {
		return nil
	}
	switch {
	case requested.Major() != controlPlane.Major() || requested.Minor() > controlPlane.Minor():
		return field.ErrorList{field.Invalid(idPath, requested.String(),
			fmt.Sprintf("must not be newer than the control plane of HCPCluster %s, which runs %s", cluster.Name, cluster.Spec.Version.ID))}
	case requested.Minor()+MaxNodePoolSkew < controlPlane.Minor():
		return field.ErrorList{field.Invalid(idPath, requested.String(),
			fmt.Sprintf("must be at most %d minors older than the control plane of HCPCluster %s, which runs %s",
				MaxNodePoolSkew, cluster.Name, cluster.Spec.Version.ID))}
	}
	return nil
}

// atLeastMinimum drops minors below the service's minimum from a list shown to users.
func atLeastMinimum(minors []string) []string {
	var out []string
	for _, m := range minors {
		if v, err := version.ParseGeneric(m); err == nil && v.AtLeast(minimumVersion) && v.LessThan(nextMajor) {
			out = append(out, m)
		}
	}
	return out
}
