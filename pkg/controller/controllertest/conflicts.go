package controllertest

import (
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// FakeClient is what a generated fake clientset offers to have its writes checked.
type FakeClient interface {
	PrependReactor(verb, resource string, reaction k8stesting.ReactionFunc)
	Tracker() k8stesting.ObjectTracker
}

// ConflictOnStaleWrites makes a fake clientset refuse an update whose resourceVersion is not the stored
// one, as the API server does. The fake alone takes any update whole, so a status write from a copy read
// before a delete would take the deletionTimestamp away: no real server does that, and a controller
// test must not pass or fail on it.
func ConflictOnStaleWrites(client FakeClient) {
	var version int64
	client.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		// Create and update actions look alike to a type switch: both carry an object.
		withObject, ok := action.(k8stesting.UpdateAction)
		if !ok || action.GetVerb() != "create" && action.GetVerb() != "update" {
			return false, nil, nil
		}
		obj := withObject.GetObject()
		if action.GetVerb() == "update" {
			written, err := meta.Accessor(obj)
			if err != nil {
				return false, nil, nil
			}
			current, err := client.Tracker().Get(action.GetResource(), action.GetNamespace(), written.GetName())
			if err != nil {
				return false, nil, nil
			}
			stored, err := meta.Accessor(current)
			if err != nil {
				return false, nil, nil
			}
			if written.GetResourceVersion() != stored.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), written.GetName(),
					errStale{written.GetResourceVersion(), stored.GetResourceVersion()})
			}
		}
		if m, err := meta.Accessor(obj); err == nil {
			version++
			m.SetResourceVersion(strconv.FormatInt(version, 10))
		}
		return false, nil, nil
	})
}

type errStale struct{ written, stored string }

func (e errStale) Error() string {
	return "the object has been modified; written at resourceVersion " + strconv.Quote(e.written) + ", stored " + strconv.Quote(e.stored)
}
