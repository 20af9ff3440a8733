package app

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// namedObject is how watchUntil reaches one object of a typed client.
type namedObject struct {
	// what names the object in errors: breakglasscredential ns/name.
	what  string
	name  string
	watch func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	get   func(ctx context.Context) (runtime.Object, error)
}

// watchUntil watches the object from resourceVersion until done returns true or an error, or ctx ends.
// A watch that closes is opened again where it left off. When the server no longer has the history
// from there (410 Gone), watchUntil gets the object and goes on from it: done looks at states, not
// at every change between them.
func watchUntil(ctx context.Context, o namedObject, resourceVersion string, done func(runtime.Object) (bool, error)) error {
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.name).String()
		return o.watch(ctx, opts)
	}}
	for {
		_, err := watchtools.Until(ctx, resourceVersion, lw, func(event watch.Event) (bool, error) {
			switch event.Type {
			case watch.Deleted:
				return false, fmt.Errorf("%s was deleted", o.what)
			case watch.Error:
				return false, apierrors.FromObject(event.Object)
			}
			return done(event.Object)
		})
		if err != nil && ctx.Err() != nil && (wait.Interrupted(err) || errors.Is(err, watchtools.ErrWatchClosed)) {
			// The caller tells a timeout from an interrupt.
			return ctx.Err()
		}
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return err
		}
		obj, err := o.get(ctx)
		if err != nil {
			return err
		}
		if ok, err := done(obj); ok || err != nil {
			return err
		}
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		resourceVersion = accessor.GetResourceVersion()
	}
}
