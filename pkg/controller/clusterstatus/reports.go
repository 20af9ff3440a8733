package clusterstatus

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// ByUID is the informer index the source's reports are routed by: a bundle is keyed by the UID of the
// object it delivers.
const ByUID = "uid"

// IndexByUID indexes an object by its UID.
func IndexByUID(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	return []string{string(m.GetUID())}, nil
}

// Reports routes the source's reports on the bundles of one kind of object (in an informer indexed by
// ByUID) to a controller's queue, and remembers which of those bundles the agent reported deleted, until
// the controller forgets them. Reports on the bundles of other kinds are not its to note.
type Reports struct {
	indexer cache.Indexer
	queue   *Queue

	mu      sync.Mutex
	deleted sets.Set[string]
}

func NewReports(indexer cache.Indexer, queue *Queue) *Reports {
	return &Reports{indexer: indexer, queue: queue, deleted: sets.New[string]()}
}

// OnStatus is a source.StatusHandler: it runs on the MQTT reader, so it only notes a delete and queues the
// object.
func (r *Reports) OnStatus(st source.BundleStatus) {
	objs, err := r.indexer.ByIndex(ByUID, st.ResourceID)
	if err != nil || len(objs) == 0 {
		return
	}
	if st.Deleted {
		r.mu.Lock()
		r.deleted.Insert(st.ResourceID)
		r.mu.Unlock()
	}
	for _, obj := range objs {
		r.queue.Enqueue(obj)
	}
}

// Deleted says whether the agent reported the bundle of uid deleted.
func (r *Reports) Deleted(uid string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deleted.Has(uid)
}

// Forget drops what is remembered of uid, once its object is let go.
func (r *Reports) Forget(uid string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleted.Delete(uid)
}
