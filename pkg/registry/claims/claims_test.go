package claims

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	return New(testserver.RunEtcd(t, nil).Client)
}

// standingIs answers every standing question with st.
func standingIs(st Standing) StandingFunc {
	return func(context.Context, Holder) (Standing, error) { return st, nil }
}

func exists(t *testing.T, s *Store, key string) bool {
	t.Helper()
	resp, err := s.client.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Kvs) == 1
}

func TestTakeAndGiveBack(t *testing.T) {
	ctx, s := context.Background(), newStore(t)
	key := Key("subnet", "/subscriptions/x/subnets/a")
	a := Holder{Namespace: "ns", Name: "a", UID: "uid-a"}
	b := Holder{Namespace: "ns", Name: "b", UID: "uid-b"}

	undo, refusedBy, err := s.Take(ctx, key, a, standingIs(Held))
	if err != nil || refusedBy != nil {
		t.Fatalf("a free value: refused by %v, %v", refusedBy, err)
	}
	if _, refusedBy, _ = s.Take(ctx, key, b, standingIs(Held)); refusedBy == nil || refusedBy.String() != "ns/a" {
		t.Fatalf("a held value was taken, or refused by %v instead of ns/a", refusedBy)
	}
	if refusedBy, _ := s.Check(ctx, key, b, standingIs(Held)); refusedBy == nil {
		t.Fatal("Check says a held value is free")
	}
	// A failed create gives its claim back; then b may have it.
	undo(ctx)
	if exists(t, s, key) {
		t.Fatal("the claim stayed after undo")
	}
	if _, refusedBy, err := s.Take(ctx, key, b, standingIs(Held)); refusedBy != nil || err != nil {
		t.Fatalf("a given back value: refused by %v, %v", refusedBy, err)
	}
	// Release gives back only its own object's claim.
	s.Release(ctx, key, a.UID)
	if !exists(t, s, key) {
		t.Fatal("another object's release took b's claim")
	}
	s.Release(ctx, key, b.UID)
	if exists(t, s, key) {
		t.Fatal("b's release left its claim")
	}
}

// TakeAll takes every key in one write when all are free, and none when one is held: the caller then
// decides key by key.
func TestTakeAllTakesAllOrNone(t *testing.T) {
	ctx, s := context.Background(), newStore(t)
	subnet, group := Key("subnet", "/subscriptions/x/subnets/a"), Key("managed-resource-group", "rg-a")
	a := Holder{Namespace: "ns", Name: "a", UID: "uid-a"}
	b := Holder{Namespace: "ns", Name: "b", UID: "uid-b"}

	undo, taken, err := s.TakeAll(ctx, []string{subnet, group}, a)
	if err != nil || !taken || !exists(t, s, subnet) || !exists(t, s, group) {
		t.Fatalf("free values: taken %v, %v; subnet claimed %v, group claimed %v", taken, err, exists(t, s, subnet), exists(t, s, group))
	}
	if refusedBy, _ := s.Check(ctx, subnet, b, standingIs(Held)); refusedBy == nil || refusedBy.String() != "ns/a" {
		t.Errorf("the subnet TakeAll claimed is refused by %v, want ns/a", refusedBy)
	}
	undo(ctx)
	if exists(t, s, subnet) || exists(t, s, group) {
		t.Fatal("the claims stayed after undo")
	}

	if _, _, err := s.Take(ctx, subnet, a, standingIs(Held)); err != nil {
		t.Fatal(err)
	}
	if _, taken, err := s.TakeAll(ctx, []string{subnet, group}, b); err != nil || taken {
		t.Fatalf("one value held: taken %v, %v; want nothing taken", taken, err)
	}
	if exists(t, s, group) {
		t.Error("TakeAll claimed the free value although another was held")
	}
}

func TestStaleClaimsAreTakenOver(t *testing.T) {
	ctx := context.Background()
	key := Key("consumer-name", "mc-1")
	a := Holder{Name: "a", UID: "uid-a"}
	b := Holder{Name: "b", UID: "uid-b"}

	t.Run("holder no longer uses the value", func(t *testing.T) {
		s := newStore(t)
		mustTake(t, s, key, a)
		if _, refusedBy, err := s.Take(ctx, key, b, standingIs(Released)); refusedBy != nil || err != nil {
			t.Fatalf("refused by %v, %v", refusedBy, err)
		}
	})
	t.Run("holder absent: a create in flight, until the grace ends", func(t *testing.T) {
		s := newStore(t)
		mustTake(t, s, key, a)
		if _, refusedBy, _ := s.Take(ctx, key, b, standingIs(Absent)); refusedBy == nil {
			t.Fatal("a claim of a create in flight was taken over")
		}
		s.now = func() time.Time { return time.Now().Add(Grace + time.Second) }
		undo, refusedBy, err := s.Take(ctx, key, b, standingIs(Absent))
		if refusedBy != nil || err != nil {
			t.Fatalf("a claim older than the grace was kept: refused by %v, %v", refusedBy, err)
		}
		undo(ctx)
		if exists(t, s, key) {
			t.Fatal("undo of a taken-over claim left it")
		}
	})
	t.Run("same name: a retry, or a racing create of which storage keeps one", func(t *testing.T) {
		s := newStore(t)
		mustTake(t, s, key, a)
		retry := Holder{Name: "a", UID: "uid-a2"}
		undo, refusedBy, err := s.Take(ctx, key, retry, standingIs(Held))
		if refusedBy != nil || err != nil {
			t.Fatalf("refused by %v, %v", refusedBy, err)
		}
		// The other create of the same name may be the one that succeeded: keep the claim.
		undo(ctx)
		if !exists(t, s, key) {
			t.Fatal("undo gave back a claim taken over from an object of the same name")
		}
	})
}

func mustTake(t *testing.T, s *Store, key string, h Holder) {
	t.Helper()
	if _, refusedBy, err := s.Take(context.Background(), key, h, standingIs(Held)); refusedBy != nil || err != nil {
		t.Fatalf("refused by %v, %v", refusedBy, err)
	}
}

// TestLockExcludes holds one lock from two requests of one server and from two servers on one etcd:
// never two at a time.
func TestLockExcludes(t *testing.T) {
	client := testserver.RunEtcd(t, nil).Client
	servers := []*Store{New(client), New(client)}
	var holders, most atomic.Int32
	done := make(chan error)
	for i := range 8 {
		go func() {
			unlock, err := servers[i%2].Lock(context.Background(), "nodepools/ns/dev")
			if err != nil {
				done <- err
				return
			}
			n := holders.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			holders.Add(-1)
			unlock()
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if most.Load() != 1 {
		t.Errorf("%d requests held the lock at once", most.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	unlock, err := servers[0].Lock(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := servers[1].Lock(ctx, "x"); err == nil {
		t.Error("a held lock was taken by another server")
	}
}
