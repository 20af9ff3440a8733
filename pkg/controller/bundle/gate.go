package bundle

import "sync"

// OfferGate tells a Maestro source it is synced once every reconciler that publishes to it has offered
// all of its bundles since the start. Told by the first one alone, the source would have an agent's resync
// delete the bundles of the others, which they had not offered yet.
type OfferGate struct {
	mu      sync.Mutex
	waiting int
	synced  func()
}

// NewOfferGate returns a gate that calls synced once every reconciler that joined it has offered its
// bundles.
func NewOfferGate(synced func()) *OfferGate {
	return &OfferGate{synced: synced}
}

// Join counts one more reconciler; all join before any of them runs. The reconciler calls offered once it
// has offered every bundle; calls after the first count for nothing.
func (g *OfferGate) Join() (offered func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.waiting--
			last := g.waiting == 0
			g.mu.Unlock()
			if last {
				g.synced()
			}
		})
	}
}

// Gated is a publisher as one of the reconcilers behind a gate sees it: its SetSynced says this one has
// offered every bundle, and the gate tells the source once all of them have.
type Gated struct {
	Publisher
	offered func()
}

// Gate returns p as a reconciler that joined g sees it.
func Gate(p Publisher, g *OfferGate) Gated { return Gated{Publisher: p, offered: g.Join()} }

func (p Gated) SetSynced() { p.offered() }
