// Package claims keeps the registry's rules that span several objects true when
// requests race, on one server and on replicas sharing an etcd. The generic store
// writes one key per request, so a rule such as "a subnet serves one cluster" cannot
// be a read followed by a write: two creates would both read "free". Instead:
//
//   - a unique value is claimed by creating a key derived from it, which etcd does for
//     one request only (kube's Service registry claims cluster IPs the same way, with an
//     object named after the address);
//   - a rule that counts objects (the last node pool, the credentials of a cluster) holds
//     a lock in etcd while it counts and writes, so the next request counts what the
//     previous one wrote.
//
// Keys live outside /registry, beside the leader election, under /hcp-apiserver/.
package claims

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Prefix is where claims and locks live in etcd.
const Prefix = "/hcp-apiserver/"

// Grace is how long a claim whose holder does not exist is kept: the holder may be a
// create in flight, which cannot take longer than a request may (60 s). After that, the
// claim is left over from a process that died between claiming and writing, and is stale.
const Grace = 2 * time.Minute

// lockSessionTTL is how long, in seconds, a lock outlives a server that died holding it.
const lockSessionTTL = 15

// Holder is the object that holds a claim.
type Holder struct {
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// Since is when the claim was taken, by the claiming server's clock.
	Since time.Time `json:"since"`
}

// String names the holder as kubectl does.
func (h Holder) String() string {
	if h.Namespace == "" {
		return h.Name
	}
	return h.Namespace + "/" + h.Name
}

func (h Holder) sameObjectName(o Holder) bool { return h.Namespace == o.Namespace && h.Name == o.Name }

// Standing says whether a holder still needs its claim.
type Standing int

const (
	// Held: the holder exists and still uses the claimed value.
	Held Standing = iota
	// Released: the holder exists but no longer uses the value (it expired, say).
	Released
	// Absent: no object of the holder's name exists; it may be a create in flight.
	Absent
)

// StandingFunc reads the holder of a claim (from storage, not a cache) and tells its standing.
type StandingFunc func(ctx context.Context, h Holder) (Standing, error)

// Store takes and gives back claims, and holds locks, in one etcd.
type Store struct {
	client *clientv3.Client
	now    func() time.Time

	local localLocks

	mu      sync.Mutex
	session *concurrency.Session
}

// New returns a store on client, which Close closes.
func New(client *clientv3.Client) *Store {
	return &Store{client: client, now: time.Now}
}

// Key names the claim of value in a space of values ("subnet", "consumer-name"). Values are hashed so
// that any value makes a short key.
func Key(space, value string) string {
	sum := sha256.Sum256([]byte(value))
	return Prefix + "claims/" + space + "/" + hex.EncodeToString(sum[:])
}

// Take claims key for holder. When another object holds it, Take returns that holder and leaves the claim
// alone. Otherwise it returns undo, which gives the claim back if the write it guards fails.
//
// A claim of an object of the same name is taken over: it is this object retried, or a create of the same
// name racing this one, and storage lets only one of them exist. Such a claim is not given back by undo,
// since the other create may be the one that succeeded.
func (s *Store) Take(ctx context.Context, key string, holder Holder, standing StandingFunc) (undo func(context.Context), refusedBy *Holder, err error) {
	holder.Since = s.now()
	value, err := json.Marshal(holder)
	if err != nil {
		return nil, nil, err
	}
	giveBack := func(ctx context.Context) { s.Release(ctx, key, holder.UID) }
	keep := func(context.Context) {}

	// First create the key; when it exists, decide on its holder, and take it over only if nobody
	// changed it meanwhile.
	unclaimed := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	condition, sameName := unclaimed, false
	for attempt := 0; attempt < 10; attempt++ {
		resp, err := s.client.Txn(ctx).If(condition).Then(clientv3.OpPut(key, string(value))).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return nil, nil, fmt.Errorf("claiming %s: %w", key, err)
		}
		if resp.Succeeded {
			if sameName {
				return keep, nil, nil
			}
			return giveBack, nil, nil
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			// Given back since: start again.
			condition, sameName = unclaimed, false
			continue
		}
		var current Holder
		if err := json.Unmarshal(kvs[0].Value, &current); err != nil {
			return nil, nil, fmt.Errorf("reading the claim %s: %w", key, err)
		}
		if current.UID == holder.UID {
			// Already this object's.
			return keep, nil, nil
		}
		sameName = current.sameObjectName(holder)
		refused, err := s.refuses(ctx, current, holder, standing)
		if err != nil {
			return nil, nil, err
		}
		if refused {
			return nil, &current, nil
		}
		if !sameName {
			klog.FromContext(ctx).V(2).Info("Taking over a stale claim", "key", key, "holder", current.String(), "claimant", holder.String())
		}
		condition = clientv3.Compare(clientv3.ModRevision(key), "=", kvs[0].ModRevision)
	}
	return nil, nil, fmt.Errorf("claiming %s: it kept changing hands, try again", key)
}

// TakeAll claims every one of keys for holder in one etcd transaction, if none of them is claimed yet: the
// common case of a new object, which then costs one write however many values it claims. When any key is
// claimed already it changes nothing and says so (taken is false), and the caller takes each with Take,
// which decides on the holders found. undo gives all the claims back if the write they guard fails.
func (s *Store) TakeAll(ctx context.Context, keys []string, holder Holder) (undo func(context.Context), taken bool, err error) {
	holder.Since = s.now()
	value, err := json.Marshal(holder)
	if err != nil {
		return nil, false, err
	}
	conditions := make([]clientv3.Cmp, 0, len(keys))
	puts := make([]clientv3.Op, 0, len(keys))
	for _, key := range keys {
		conditions = append(conditions, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		puts = append(puts, clientv3.OpPut(key, string(value)))
	}
	resp, err := s.client.Txn(ctx).If(conditions...).Then(puts...).Commit()
	if err != nil {
		return nil, false, fmt.Errorf("claiming %s: %w", strings.Join(keys, ", "), err)
	}
	if !resp.Succeeded {
		return nil, false, nil
	}
	return func(ctx context.Context) {
		for _, key := range keys {
			s.Release(ctx, key, holder.UID)
		}
	}, true, nil
}

// Check tells, without claiming, which object would keep Take from claiming key for holder: the answer
// of a dry run.
func (s *Store) Check(ctx context.Context, key string, holder Holder, standing StandingFunc) (*Holder, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return nil, err
	}
	var current Holder
	if err := json.Unmarshal(resp.Kvs[0].Value, &current); err != nil {
		return nil, fmt.Errorf("reading the claim %s: %w", key, err)
	}
	if refused, err := s.refuses(ctx, current, holder, standing); err != nil || !refused {
		return nil, err
	}
	return &current, nil
}

// refuses tells whether current keeps its claim against holder: it is another object that still uses
// the value, or may be about to (a create in flight).
func (s *Store) refuses(ctx context.Context, current, holder Holder, standing StandingFunc) (bool, error) {
	if current.sameObjectName(holder) {
		return false, nil
	}
	st, err := standing(ctx, current)
	if err != nil {
		return false, err
	}
	return st == Held || (st == Absent && s.now().Sub(current.Since) < Grace), nil
}

// Once runs do unless a run of it named name finished before, on this server or another sharing the
// etcd, and records that it did.
func (s *Store) Once(ctx context.Context, name string, do func(context.Context) error) error {
	key := Prefix + "done/" + name
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return err
	}
	if len(resp.Kvs) > 0 {
		return nil
	}
	if err := do(ctx); err != nil {
		return err
	}
	_, err = s.client.Put(ctx, key, s.now().UTC().Format(time.RFC3339))
	return err
}

// Release gives back the claim at key if the object with uid holds it. Errors are logged: a claim
// that stays behind is found stale by the next claimant.
func (s *Store) Release(ctx context.Context, key string, uid types.UID) {
	logger := klog.FromContext(ctx)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		logger.Error(err, "Cannot read a claim to give it back", "key", key)
		return
	}
	if len(resp.Kvs) == 0 {
		return
	}
	var current Holder
	if err := json.Unmarshal(resp.Kvs[0].Value, &current); err != nil || current.UID != uid {
		return
	}
	_, err = s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).
		Then(clientv3.OpDelete(key)).
		Commit()
	if err != nil {
		logger.Error(err, "Cannot give back a claim", "key", key)
	}
}

// Lock holds the lock name until unlock is called, across every server sharing the etcd. A server that
// dies holding it loses it after lockSessionTTL seconds.
func (s *Store) Lock(ctx context.Context, name string) (unlock func(), err error) {
	// An etcd mutex is held by a session, and all requests of this server share one: between them,
	// a lock of this process decides.
	unlockLocal, err := s.local.lock(ctx, name)
	if err != nil {
		return nil, err
	}
	session, err := s.lockSession()
	if err != nil {
		unlockLocal()
		return nil, err
	}
	mutex := concurrency.NewMutex(session, Prefix+"locks/"+name)
	if err := mutex.Lock(ctx); err != nil {
		unlockLocal()
		return nil, fmt.Errorf("taking the lock %s: %w", name, err)
	}
	return func() {
		defer unlockLocal()
		// The request may have ended; unlocking must happen regardless.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := mutex.Unlock(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot unlock; the lock frees when the session expires", "lock", name)
		}
	}, nil
}

// localLocks are locks by name within the process. An entry lives while someone holds or waits for it.
type localLocks struct {
	mu    sync.Mutex
	locks map[string]*localLock
}

type localLock struct {
	// held has room for one: sending takes the lock, receiving gives it back.
	held    chan struct{}
	waiters int
}

func (l *localLocks) lock(ctx context.Context, name string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*localLock{}
	}
	entry, ok := l.locks[name]
	if !ok {
		entry = &localLock{held: make(chan struct{}, 1)}
		l.locks[name] = entry
	}
	entry.waiters++
	l.mu.Unlock()

	release := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if entry.waiters--; entry.waiters == 0 {
			delete(l.locks, name)
		}
	}
	select {
	case entry.held <- struct{}{}:
		return func() {
			<-entry.held
			release()
		}, nil
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("waiting for the lock %s: %w", name, ctx.Err())
	}
}

// lockSession returns the session locks are held in, and opens a new one when the last one ended
// (etcd was unreachable for longer than its TTL).
func (s *Store) lockSession() (*concurrency.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		select {
		case <-s.session.Done():
			s.session = nil
		default:
			return s.session, nil
		}
	}
	session, err := concurrency.NewSession(s.client, concurrency.WithTTL(lockSessionTTL))
	if err != nil {
		return nil, fmt.Errorf("opening an etcd session for locks: %w", err)
	}
	s.session = session
	return session, nil
}

// Close ends the lock session, freeing any lock still held, and closes the client.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		_ = s.session.Close()
		s.session = nil
	}
	_ = s.client.Close()
}
