// Package controllertest holds what the controllers' unit tests share.
package controllertest

import (
	"maps"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// RecordingPublisher stands where the Maestro source does: it records what a reconciler asks of it, and
// hands the reports a test makes up to the status handlers, as the source hands an agent's.
// Applied and Deleted are keyed <consumer>/<resource ID>.
type RecordingPublisher struct {
	// Lock it to read the fields while a reconciler runs.
	sync.Mutex
	Applied map[string]int64
	Bundles map[string]*protocol.ManifestBundle
	Deleted sets.Set[string]
	// Kept are the bundles kept as the agent holds them, and not applied or deleted since.
	Kept sets.Set[string]
	// Renders counts the bundles applied, the same generation again included.
	Renders int
	// Offered is what was applied when SetSynced was called, and KeptWhenSynced what was kept; nil before.
	Offered        map[string]int64
	KeptWhenSynced sets.Set[string]
	handlers       []source.StatusHandler
}

func NewRecordingPublisher() *RecordingPublisher {
	return &RecordingPublisher{Applied: map[string]int64{}, Bundles: map[string]*protocol.ManifestBundle{}, Deleted: sets.New[string](), Kept: sets.New[string]()}
}

func (p *RecordingPublisher) Apply(consumer, id string, generation int64, bundle *protocol.ManifestBundle) error {
	p.Lock()
	defer p.Unlock()
	p.Applied[consumer+"/"+id], p.Bundles[id] = generation, bundle
	p.Kept.Delete(consumer + "/" + id)
	p.Renders++
	return nil
}

func (p *RecordingPublisher) Delete(consumer, id string) error {
	p.Lock()
	defer p.Unlock()
	p.Deleted.Insert(consumer + "/" + id)
	p.Kept.Delete(consumer + "/" + id)
	return nil
}

func (p *RecordingPublisher) Forget(id string) {
	p.Lock()
	defer p.Unlock()
	for k := range p.Kept {
		if strings.HasSuffix(k, "/"+id) {
			p.Kept.Delete(k)
		}
	}
}

func (p *RecordingPublisher) Keep(consumer, id string) error {
	p.Lock()
	defer p.Unlock()
	if _, applied := p.Applied[consumer+"/"+id]; !applied {
		p.Kept.Insert(consumer + "/" + id)
	}
	return nil
}

func (p *RecordingPublisher) AddStatusHandler(h source.StatusHandler) {
	p.Lock()
	defer p.Unlock()
	p.handlers = append(p.handlers, h)
}

// Report hands a report to the status handlers, as the source does when an agent's arrives.
func (p *RecordingPublisher) Report(report source.BundleStatus) {
	p.Lock()
	handlers := p.handlers
	p.Unlock()
	for _, h := range handlers {
		h(report)
	}
}

func (p *RecordingPublisher) SetSynced() {
	p.Lock()
	defer p.Unlock()
	p.Offered, p.KeptWhenSynced = maps.Clone(p.Applied), p.Kept.Clone()
}
