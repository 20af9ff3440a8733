package updateservice

import (
	"context"
	"slices"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Store keeps the last good merged graph across restarts.
type Store interface {
	// Load returns the graph last saved, or nothing when none was.
	Load(ctx context.Context) ([]byte, error)
	// Save replaces the graph saved.
	Save(ctx context.Context, graph []byte) error
}

// EtcdStore keeps the graph, as the JSON the poller hands on, under one etcd key.
type EtcdStore struct {
	client *clientv3.Client
	key    string
}

// NewEtcdStore returns a Store that keeps the graph under key.
func NewEtcdStore(client *clientv3.Client, key string) *EtcdStore {
	return &EtcdStore{client: client, key: key}
}

// Load returns the value of the key, or nothing when the key does not exist.
func (s *EtcdStore) Load(ctx context.Context) ([]byte, error) {
	resp, err := s.client.Get(ctx, s.key)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return resp.Kvs[0].Value, nil
}

// Save puts the graph under the key.
func (s *EtcdStore) Save(ctx context.Context, graph []byte) error {
	_, err := s.client.Put(ctx, s.key, string(graph))
	return err
}

// MemoryStore is a Store in memory, for tests.
type MemoryStore struct {
	mu    sync.Mutex
	graph []byte
	saves int
}

// NewMemoryStore returns a store that holds graph (nothing when nil) as if it had been saved.
func NewMemoryStore(graph []byte) *MemoryStore {
	return &MemoryStore{graph: slices.Clone(graph)}
}

// Load returns the graph held.
func (s *MemoryStore) Load(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.graph), nil
}

// Save holds graph.
func (s *MemoryStore) Save(_ context.Context, graph []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graph = slices.Clone(graph)
	s.saves++
	return nil
}

// Saves is how many times Save was called.
func (s *MemoryStore) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}
