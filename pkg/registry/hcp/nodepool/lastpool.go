package nodepool

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// keepLastPool refuses to delete the last node pool of a Succeeded cluster: without one the cluster
// runs no workloads. Deleting the cluster itself deletes its pools. The deletes of one cluster's pools
// count and write one at a time, under a lock in etcd, so that two pools deleted at once cannot each
// see the other as the one that stays.
func keepLastPool(store *genericregistry.Store, clusters rest.Getter, c *claims.Store) hcpregistry.DeleteGuard {
	return func(ctx context.Context, name string, del func() (runtime.Object, bool, error)) (runtime.Object, bool, error) {
		obj, err := store.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			// The store answers NotFound and its like.
			return del()
		}
		pool := obj.(*hcp.NodePool)
		if pool.DeletionTimestamp != nil {
			return del()
		}
		unlock, err := c.Lock(ctx, "nodepools/"+pool.Namespace+"/"+pool.Spec.ClusterName)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		defer unlock()
		if err := refuseLastPool(ctx, store, clusters, pool); err != nil {
			return nil, false, err
		}
		return del()
	}
}

// refuseLastPool returns a Forbidden error when pool is the last one of a Succeeded cluster that is not
// being deleted, as stored now.
func refuseLastPool(ctx context.Context, store *genericregistry.Store, clusters rest.Getter, pool *hcp.NodePool) error {
	obj, err := clusters.Get(ctx, pool.Spec.ClusterName, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	cluster := obj.(*hcp.HCPCluster)
	if cluster.DeletionTimestamp != nil || cluster.Status.ProvisioningState != hcp.ProvisioningStateSucceeded {
		return nil
	}
	list, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.clusterName", cluster.Name)})
	if err != nil {
		return err
	}
	for _, other := range list.(*hcp.NodePoolList).Items {
		if other.Name != pool.Name && other.DeletionTimestamp == nil {
			return nil
		}
	}
	return apierrors.NewForbidden(hcp.Resource("nodepools"), pool.Name, fmt.Errorf(
		"NodePool %s is the last node pool of HCPCluster %s, which is Succeeded; create another node pool first, or delete the cluster",
		pool.Name, cluster.Name))
}
