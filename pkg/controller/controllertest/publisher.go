// Package controllertest holds what the controllers' unit tests share.
package controllertest

import (
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// RecordingPublisher stands where the Maestro source does and records what a controller asks of it.
// Applied and Deleted are keyed <consumer>/<resource ID>; Statuses are what Status answers.
type RecordingPublisher struct {
	// Lock it to read the fields while a controller runs.
	sync.Mutex
	Applied  map[string]int64
	Bundles  map[string]*protocol.ManifestBundle
	Deleted  sets.Set[string]
	Statuses map[string]source.BundleStatus
	// Offered is what was applied when SetSynced was called; nil before.
	Offered map[string]int64
}

func NewRecordingPublisher() *RecordingPublisher {
	return &RecordingPublisher{Applied: map[string]int64{}, Bundles: map[string]*protocol.ManifestBundle{},
		Deleted: sets.New[string](), Statuses: map[string]source.BundleStatus{}}
}

func (p *RecordingPublisher) Apply(consumer, id string, generation int64, bundle *protocol.ManifestBundle) error {
	p.Lock()
	defer p.Unlock()
	p.Applied[consumer+"/"+id], p.Bundles[id] = generation, bundle
	return nil
}

func (p *RecordingPublisher) Delete(consumer, id string) error {
	p.Lock()
	defer p.Unlock()
	p.Deleted.Insert(consumer + "/" + id)
	return nil
}

func (p *RecordingPublisher) Status(id string) (source.BundleStatus, bool) {
	p.Lock()
	defer p.Unlock()
	st, ok := p.Statuses[id]
	return st, ok
}

func (p *RecordingPublisher) AddStatusHandler(source.StatusHandler) {}

func (p *RecordingPublisher) SetSynced() {
	p.Lock()
	defer p.Unlock()
	p.Offered = maps.Clone(p.Applied)
}
