package frontend

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

func clusterKind(client versioned.Interface) *kind[*hcpv1alpha1.HCPCluster] {
	c := client.HcpV1alpha1()
	return &kind[*hcpv1alpha1.HCPCluster]{
		resource: "hcpclusters",
		get: func(ctx context.Context, ns, name string, opts metav1.GetOptions) (*hcpv1alpha1.HCPCluster, error) {
			return c.HCPClusters(ns).Get(ctx, name, opts)
		},
		create: func(ctx context.Context, obj *hcpv1alpha1.HCPCluster, opts metav1.CreateOptions) (*hcpv1alpha1.HCPCluster, error) {
			return c.HCPClusters(obj.Namespace).Create(ctx, obj, opts)
		},
		update: func(ctx context.Context, obj *hcpv1alpha1.HCPCluster, opts metav1.UpdateOptions) (*hcpv1alpha1.HCPCluster, error) {
			return c.HCPClusters(obj.Namespace).Update(ctx, obj, opts)
		},
		delete: func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return c.HCPClusters(ns).Delete(ctx, name, opts)
		},
		fromARM: func(req conversion.Request, existing *hcpv1alpha1.HCPCluster) (*hcpv1alpha1.HCPCluster, field.ErrorList) {
			return conversion.ClusterFromARM(req, existing)
		},
		toARM: func(v conversion.APIVersion, obj *hcpv1alpha1.HCPCluster, location string) (any, error) {
			out, err := conversion.ClusterToARM(v, obj)
			if err != nil {
				return nil, err
			}
			out.Location = &location
			return out, nil
		},
		meta:  func(obj *hcpv1alpha1.HCPCluster) metav1.Object { return obj },
		state: func(obj *hcpv1alpha1.HCPCluster) hcpv1alpha1.ProvisioningState { return obj.Status.ProvisioningState },
	}
}

func nodePoolKind(client versioned.Interface, clusters *kind[*hcpv1alpha1.HCPCluster]) *kind[*hcpv1alpha1.NodePool] {
	c := client.HcpV1alpha1()
	return &kind[*hcpv1alpha1.NodePool]{
		resource: "nodepools",
		get: func(ctx context.Context, ns, name string, opts metav1.GetOptions) (*hcpv1alpha1.NodePool, error) {
			return c.NodePools(ns).Get(ctx, name, opts)
		},
		create: func(ctx context.Context, obj *hcpv1alpha1.NodePool, opts metav1.CreateOptions) (*hcpv1alpha1.NodePool, error) {
			return c.NodePools(obj.Namespace).Create(ctx, obj, opts)
		},
		update: func(ctx context.Context, obj *hcpv1alpha1.NodePool, opts metav1.UpdateOptions) (*hcpv1alpha1.NodePool, error) {
			return c.NodePools(obj.Namespace).Update(ctx, obj, opts)
		},
		delete: func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return c.NodePools(ns).Delete(ctx, name, opts)
		},
		list: func(ctx context.Context, ns string, opts metav1.ListOptions) ([]*hcpv1alpha1.NodePool, string, error) {
			list, err := c.NodePools(ns).List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return itemPointers(list.Items), list.Continue, nil
		},
		fromARM: func(req conversion.Request, existing *hcpv1alpha1.NodePool) (*hcpv1alpha1.NodePool, field.ErrorList) {
			return conversion.NodePoolFromARM(req, existing)
		},
		toARM: func(v conversion.APIVersion, obj *hcpv1alpha1.NodePool, location string) (any, error) {
			out, err := conversion.NodePoolToARM(v, obj)
			if err != nil {
				return nil, err
			}
			out.Location = &location
			return out, nil
		},
		meta:  func(obj *hcpv1alpha1.NodePool) metav1.Object { return obj },
		state: func(obj *hcpv1alpha1.NodePool) hcpv1alpha1.ProvisioningState { return obj.Status.ProvisioningState },
		parentAllows: func(req *request, res *armResource, verb string) error {
			_, err := parentCluster(clusters, req, res, verb)
			return err
		},
	}
}

func externalAuthKind(client versioned.Interface, clusters *kind[*hcpv1alpha1.HCPCluster]) *kind[*hcpv1alpha1.ExternalAuth] {
	c := client.HcpV1alpha1()
	return &kind[*hcpv1alpha1.ExternalAuth]{
		resource: "externalauths",
		get: func(ctx context.Context, ns, name string, opts metav1.GetOptions) (*hcpv1alpha1.ExternalAuth, error) {
			return c.ExternalAuths(ns).Get(ctx, name, opts)
		},
		create: func(ctx context.Context, obj *hcpv1alpha1.ExternalAuth, opts metav1.CreateOptions) (*hcpv1alpha1.ExternalAuth, error) {
			return c.ExternalAuths(obj.Namespace).Create(ctx, obj, opts)
		},
		update: func(ctx context.Context, obj *hcpv1alpha1.ExternalAuth, opts metav1.UpdateOptions) (*hcpv1alpha1.ExternalAuth, error) {
			return c.ExternalAuths(obj.Namespace).Update(ctx, obj, opts)
		},
		delete: func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return c.ExternalAuths(ns).Delete(ctx, name, opts)
		},
		list: func(ctx context.Context, ns string, opts metav1.ListOptions) ([]*hcpv1alpha1.ExternalAuth, string, error) {
			list, err := c.ExternalAuths(ns).List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return itemPointers(list.Items), list.Continue, nil
		},
		fromARM: func(req conversion.Request, existing *hcpv1alpha1.ExternalAuth) (*hcpv1alpha1.ExternalAuth, field.ErrorList) {
			return conversion.ExternalAuthFromARM(req, existing)
		},
		// An external auth is a proxy resource: it has no location.
		toARM: func(v conversion.APIVersion, obj *hcpv1alpha1.ExternalAuth, _ string) (any, error) {
			return conversion.ExternalAuthToARM(v, obj)
		},
		meta:  func(obj *hcpv1alpha1.ExternalAuth) metav1.Object { return obj },
		state: func(obj *hcpv1alpha1.ExternalAuth) hcpv1alpha1.ProvisioningState { return obj.Status.ProvisioningState },
		parentAllows: func(req *request, res *armResource, verb string) error {
			_, err := parentCluster(clusters, req, res, verb)
			return err
		},
	}
}

// parentCluster reads the cluster of a node pool or external auth, which must exist and be neither
// provisioning nor being deleted for its node pools and external auths to change.
func parentCluster(clusters *kind[*hcpv1alpha1.HCPCluster], req *request, res *armResource, verb string) (*hcpv1alpha1.HCPCluster, error) {
	parent := res.clusterOf()
	cluster, found, err := clusters.getResource(req, parent)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, parent.notFound()
	}
	state := cluster.Status.ProvisioningState
	if cluster.DeletionTimestamp != nil {
		state = hcpv1alpha1.ProvisioningStateDeleting
	}
	if state == hcpv1alpha1.ProvisioningStateProvisioning || state == hcpv1alpha1.ProvisioningStateDeleting {
		return nil, resourceConflict(res, "Cannot %s resource while parent resource is %s", verb, strings.ToLower(string(state)))
	}
	return cluster, nil
}
