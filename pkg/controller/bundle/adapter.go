package bundle

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// Object is a delivered kind's object as its typed clients and informers hand it out (a pointer).
type Object[T any] interface {
	metav1.Object
	runtime.Object
	DeepCopy() T
}

// Client writes objects of a kind in one namespace: the typed client's Update, UpdateStatus and Delete.
type Client[T any] interface {
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// Publisher is the part of the Maestro source the reconciler uses. Reports come back through the status
// handler only: the reconciler never asks the source for a status.
type Publisher interface {
	Apply(consumer, id string, generation int64, bundle *protocol.ManifestBundle) error
	Delete(consumer, id string) error
	// Keep leaves what the agent holds of a bundle as it is while the object has nothing to publish;
	// Forget ends that for an object that is gone.
	Keep(consumer, id string) error
	Forget(id string)
	AddStatusHandler(source.StatusHandler)
	SetSynced()
}

// Adapter is what a delivered kind plugs into the reconciler: where an object goes, what it is rendered
// into, and how a report becomes its status.
type Adapter[T Object[T]] interface {
	// Consumer returns the Maestro consumer an object's bundle goes to: empty while the object is not
	// placed, and once what it delivered is gone with something else (a node pool of a deleted cluster).
	Consumer(obj T) (string, error)
	// Plan decides what to deliver of a live object placed on consumer (which may be empty).
	Plan(obj T, consumer string) (Plan[T], error)
	// Client writes the kind's objects in a namespace.
	Client(namespace string) Client[T]
}

// Cleaner is an Adapter that deletes what belongs to a deleted object before its bundle is deleted.
type Cleaner[T Object[T]] interface {
	Cleanup(ctx context.Context, obj T) error
}

// Secondary is an Adapter of a second bundle of objects another reconciler already delivers (an HCPCluster's
// credential revocation). Its bundles are keyed by the object's UID and BundleSuffix, so that reports find
// their reconciler, and the object's own reconciler owns its finalizer: when the object goes, this one
// deletes its bundle if it has one, and keeps the object no longer.
type Secondary interface {
	BundleSuffix() string
}

// Plan is what an adapter decided for one object at one sync. The status funcs change a copy of the
// object; the reconciler writes it only when they changed something.
type Plan[T any] struct {
	// Delete says the object has served its time (a credential past its retention): the reconciler
	// deletes it, and its deletion goes as any other.
	Delete bool
	// Withdraw says the object needs no bundle (any more): a credential once issued. The bundle is deleted
	// if this process published it or an agent reported holding it, the finalizer goes once the agent
	// reported it deleted, and Report still runs. Render is not called.
	Withdraw bool
	// Wait, when set, says in the object's status why nothing can be delivered yet; nothing is published,
	// what was published before stays on the agent, and no report is applied.
	Wait func(obj T)
	// Render makes the bundle; nil while there is nothing to publish yet (what was published before stays
	// on the agent, and the report is still applied).
	Render func() (*protocol.ManifestBundle, error)
	// Input names what Render reads besides the object's generation and consumer (a release image, say):
	// the bundle is rendered again only when one of the three changed since it was last published.
	Input string
	// RenderFailed says in the object's status why Render failed: its spec cannot be delivered as it is.
	RenderFailed func(obj T, err error)
	// Report writes the agent's last report into the object's status (reported is false while nothing
	// came back yet) and returns when to look again, 0 for when something changes. Nil: nothing to report.
	Report func(obj T, report source.BundleStatus, reported bool) time.Duration
}
