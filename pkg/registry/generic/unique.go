package generic

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/util/dryrun"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
)

// UniqueValue is a value that at most one object of a kind may have, such as a cluster's subnet.
type UniqueValue[T Object] struct {
	// Space names the values in etcd ("subnet"); it must differ between unique values.
	Space string
	// Path is the field the value is in, for refusals.
	Path *field.Path
	// Rule ends a refusal: "a subnet can serve one cluster only".
	Rule string
	// Of returns the value of obj as compared (lowercased where case does not matter, scoped to a
	// subscription where the name is), and as written; "" when obj has none.
	Of func(obj T) (compared, written string)
	// Conflict refuses with 409 Conflict, for a value that stands for the object as a whole (the one
	// external auth of a cluster), rather than 422 on the field.
	Conflict bool
}

// ClaimUniqueValues returns what makes store claim each unique value of an object when it is created
// (beginCreate) and give the claims back when it is deleted (set here as store.AfterDelete, before the
// /status store is derived from store), so that two objects racing for one value cannot both be created.
// The values must be immutable. claimExisting claims the values of the objects already stored (by a
// server that did not claim them) and reports values that several of them share.
func ClaimUniqueValues[T Object](store *genericregistry.Store, c *claims.Store, kind schema.GroupKind, values ...UniqueValue[T]) (beginCreate BeginCreate, claimExisting func(context.Context) error) {
	standing := func(v UniqueValue[T], compared string) claims.StandingFunc {
		return func(ctx context.Context, h claims.Holder) (claims.Standing, error) {
			obj, err := store.Get(genericapirequest.WithNamespace(ctx, h.Namespace), h.Name, &metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return claims.Absent, nil
			}
			if err != nil {
				return 0, err
			}
			if now, _ := v.Of(obj.(T)); now == compared {
				return claims.Held, nil
			}
			return claims.Released, nil
		}
	}
	beginCreate = func(ctx context.Context, o runtime.Object, dryRun []string) (genericregistry.FinishFunc, error) {
		obj := o.(T)
		holder := claims.Holder{Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
		var undos []func(context.Context)
		undoAll := func(ctx context.Context) {
			for _, undo := range undos {
				undo(ctx)
			}
		}
		// A new object whose values nobody holds, the common case, takes them all in one write.
		if !dryrun.IsDryRun(dryRun) {
			var keys []string
			for _, v := range values {
				if compared, _ := v.Of(obj); compared != "" {
					keys = append(keys, claims.Key(v.Space, compared))
				}
			}
			if len(keys) > 0 {
				// Written with the object, when its store does that (claims.InCreate).
				deferred, err := c.Defer(ctx, keys, holder)
				if err != nil {
					return nil, apierrors.NewInternalError(err)
				}
				if deferred {
					return func(context.Context, bool) {}, nil
				}
			}
			if len(keys) > 1 {
				undo, taken, err := c.TakeAll(ctx, keys, holder)
				if err != nil {
					return nil, apierrors.NewInternalError(err)
				}
				if taken {
					return func(ctx context.Context, success bool) {
						if !success {
							undo(ctx)
						}
					}, nil
				}
			}
		}
		var refusals field.ErrorList
		for _, v := range values {
			compared, written := v.Of(obj)
			if compared == "" {
				continue
			}
			key := claims.Key(v.Space, compared)
			var refusedBy *claims.Holder
			var err error
			if dryrun.IsDryRun(dryRun) {
				refusedBy, err = c.Check(ctx, key, holder, standing(v, compared))
			} else {
				var undo func(context.Context)
				undo, refusedBy, err = c.Take(ctx, key, holder, standing(v, compared))
				if undo != nil {
					undos = append(undos, undo)
				}
			}
			if err != nil {
				undoAll(ctx)
				return nil, apierrors.NewInternalError(err)
			}
			if refusedBy != nil && v.Conflict {
				undoAll(ctx)
				return nil, apierrors.NewConflict(schema.GroupResource{Group: store.DefaultQualifiedResource.Group, Resource: store.DefaultQualifiedResource.Resource},
					obj.GetName(), fmt.Errorf("%s %s", v.Path, refusal(kind.Kind, *refusedBy, v.Rule)))
			}
			if refusedBy != nil {
				refusals = append(refusals, field.Invalid(v.Path, written, refusal(kind.Kind, *refusedBy, v.Rule)))
			}
		}
		if len(refusals) > 0 {
			undoAll(ctx)
			return nil, apierrors.NewInvalid(kind, obj.GetName(), refusals)
		}
		return func(ctx context.Context, success bool) {
			if !success {
				undoAll(ctx)
			}
		}, nil
	}

	store.AfterDelete = func(o runtime.Object, options *metav1.DeleteOptions) {
		if options != nil && dryrun.IsDryRun(options.DryRun) {
			return
		}
		obj := o.(T)
		// The request that deleted the object may be over; giving back must not depend on it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, v := range values {
			if compared, _ := v.Of(obj); compared != "" {
				c.Release(ctx, claims.Key(v.Space, compared), obj.GetUID())
			}
		}
	}

	claimExisting = func(ctx context.Context) error {
		list, err := store.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), &metainternalversion.ListOptions{})
		if err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj := item.(T)
			holder := claims.Holder{Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
			for _, v := range values {
				compared, written := v.Of(obj)
				if compared == "" {
					continue
				}
				_, refusedBy, err := c.Take(ctx, claims.Key(v.Space, compared), holder, standing(v, compared))
				if err != nil {
					return err
				}
				if refusedBy != nil {
					klog.FromContext(ctx).Error(nil, "Two stored objects share a value only one may have; delete one of them",
						"kind", kind.Kind, "field", v.Path.String(), "value", written, "object", holder.String(), "holder", refusedBy.String())
				}
			}
		}
		return nil
	}
	return beginCreate, claimExisting
}

func refusal(kind string, holder claims.Holder, rule string) string {
	return fmt.Sprintf("is already used by %s %s; %s", kind, holder.String(), rule)
}
