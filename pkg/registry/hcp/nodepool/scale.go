package nodepool

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	scalescheme "k8s.io/client-go/scale/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// ScaleREST serves nodepools/scale: spec.replicas of a pool as an autoscaling/v1 Scale, for kubectl scale
// and the HorizontalPodAutoscaler. A write is an update of the pool through its own store, as kube's
// deployments/scale is: the pool's strategy bumps its generation and validates it, and admission sees the
// Scale. A pool with spec.autoScaling is sized by its autoscaler and refuses writes.
//
// status.selector is hcp.aro.azure.com/nodepool-uid=<the pool's UID>. No pod carries that label: a
// pool's replicas are nodes of the hosted cluster, not pods here. It is there because the
// HorizontalPodAutoscaler needs a selector even to scale on External or Object metrics, which are the
// ones that fit a node pool.
type ScaleREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher                  = &ScaleREST{}
	_ rest.GroupVersionKindProvider = &ScaleREST{}
)

// NewScaleREST returns the storage of nodepools/scale on the store of nodepools.
func NewScaleREST(store *genericregistry.Store) *ScaleREST {
	return &ScaleREST{store: store}
}

// replicasPaths is where a Scale's spec.replicas lives in a NodePool, to carry its field ownership over.
var replicasPaths = managedfields.ResourcePathMappings{
	v1alpha1.SchemeGroupVersion.String(): fieldpath.MakePathOrDie("spec", "replicas"),
}

// GroupVersionKind implements rest.GroupVersionKindProvider: the subresource speaks autoscaling/v1.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// New implements rest.Storage.
func (r *ScaleREST) New() runtime.Object { return &scalescheme.Scale{} }

// Destroy implements rest.Storage; the store of nodepools owns the etcd client.
func (r *ScaleREST) Destroy() {}

// Get returns the Scale of a pool.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := hcpregistry.ValidateGetOptions(ctx, r.store, options); err != nil {
		return nil, err
	}
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return scaleFromNodePool(obj.(*hcp.NodePool)), nil
}

// Update sets spec.replicas of a pool from a Scale.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, hcpregistry.ClearBadRequests(&scaleUpdatedObjectInfo{name: name, reqObjInfo: objInfo}),
		toScaleCreateValidation(createValidation), toScaleUpdateValidation(updateValidation), false, options)
	if err != nil {
		return nil, false, err
	}
	return scaleFromNodePool(obj.(*hcp.NodePool)), false, nil
}

// Admission sees the Scale the request is about, not the pool.
func toScaleCreateValidation(f rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		return f(ctx, scaleFromNodePool(obj.(*hcp.NodePool)))
	}
}

func toScaleUpdateValidation(f rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		return f(ctx, scaleFromNodePool(obj.(*hcp.NodePool)), scaleFromNodePool(old.(*hcp.NodePool)))
	}
}

// scaleFromNodePool returns the Scale of a pool. An autoscaled pool wants what its autoscaler picked,
// which is what it has.
func scaleFromNodePool(np *hcp.NodePool) *scalescheme.Scale {
	replicas := np.Status.Replicas
	if np.Spec.Replicas != nil {
		replicas = *np.Spec.Replicas
	}
	return &scalescheme.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name:              np.Name,
			Namespace:         np.Namespace,
			UID:               np.UID,
			ResourceVersion:   np.ResourceVersion,
			CreationTimestamp: np.CreationTimestamp,
		},
		Spec: scalescheme.ScaleSpec{Replicas: replicas},
		Status: scalescheme.ScaleStatus{
			Replicas: np.Status.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{hcp.NodePoolUIDLabel: string(np.UID)}},
		},
	}
}

// scaleUpdatedObjectInfo turns the stored pool into its Scale, has the request update that, and puts the
// new replicas back into the pool.
type scaleUpdatedObjectInfo struct {
	name       string
	reqObjInfo rest.UpdatedObjectInfo
}

func (i *scaleUpdatedObjectInfo) Preconditions() *metav1.Preconditions {
	return i.reqObjInfo.Preconditions()
}

func (i *scaleUpdatedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	np, ok := oldObj.DeepCopyObject().(*hcp.NodePool)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected the stored object to be a NodePool, got %T", oldObj))
	}
	// A zero resourceVersion means the pool does not exist.
	if np.ResourceVersion == "" {
		return nil, apierrors.NewNotFound(hcp.Resource("nodepools/scale"), i.name)
	}

	managedFields := managedfields.NewScaleHandler(np.ManagedFields, v1alpha1.SchemeGroupVersion, replicasPaths)
	oldScale := scaleFromNodePool(np)
	var err error
	if oldScale.ManagedFields, err = managedFields.ToSubresource(); err != nil {
		return nil, err
	}
	obj, err := i.reqObjInfo.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*scalescheme.Scale)
	if !ok || scale == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a Scale, got %T", obj))
	}
	if len(scale.UID) > 0 && scale.UID != np.UID {
		return nil, apierrors.NewConflict(hcp.Resource("nodepools/scale"), np.Name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", scale.UID, np.UID))
	}
	if a := np.Spec.AutoScaling; a != nil {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), np.Name, field.ErrorList{
			field.Forbidden(field.NewPath("spec", "replicas"), fmt.Sprintf(
				"node pool %s autoscales between %d and %d nodes (spec.autoScaling); remove spec.autoScaling from the NodePool to scale it by hand",
				np.Name, a.Min, a.Max)),
		})
	}

	np.Spec.Replicas = &scale.Spec.Replicas
	// A resourceVersion in the Scale is a precondition on the pool.
	np.ResourceVersion = scale.ResourceVersion
	if np.ManagedFields, err = managedFields.ToParent(scale.ManagedFields); err != nil {
		return nil, err
	}
	return np, nil
}
