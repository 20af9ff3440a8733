package updateservice

import (
	"bytes"
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/aro-hcp/hcp-apiserver/pkg/embeddedetcd"
	updateservicedouble "github.com/aro-hcp/hcp-apiserver/test/updateservice"
)

// The etcd store keeps the merged graph as its JSON under the key it is given, and a poller started
// on the same etcd hands that graph on before the service answers.
func TestEtcdStore(t *testing.T) {
	e, err := embeddedetcd.Start(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	const key = "/hcp-apiserver/update-service/graph"
	store := NewEtcdStore(client, key)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	if got, err := store.Load(ctx); err != nil || got != nil {
		t.Fatalf("Load before any Save = %q, %v; want nothing", got, err)
	}

	srv := updateservicedouble.Start(t)
	srv.AddNode("stable-4.20", "4.20.8", "4.20.9")
	srv.AddEdge("stable-4.20", "4.20.8", "4.20.9")
	opts := fastOptions(srv.URL, "stable-4.20")
	opts.Store = store
	p, graphs := newPoller(t, opts)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.Run(runCtx) }()
	var handed []byte
	select {
	case handed = <-graphs:
	case <-time.After(wait):
		t.Fatal("no merged graph was handed on")
	}
	stop()
	<-done

	raw, err := client.Get(ctx, key)
	if err != nil || len(raw.Kvs) != 1 {
		t.Fatalf("reading %s: %v, %v", key, raw, err)
	}
	if !bytes.Equal(raw.Kvs[0].Value, handed) {
		t.Errorf("etcd holds %s under %s, want the graph handed on: %s", raw.Kvs[0].Value, key, handed)
	}

	srv.Down()
	restarted, graphs := newPoller(t, opts)
	run(t, restarted)
	select {
	case got := <-graphs:
		if !bytes.Equal(got, handed) {
			t.Errorf("after a restart with the service down, handed on %s, want the stored %s", got, handed)
		}
	case <-time.After(wait):
		t.Fatal("after a restart with the service down, the stored graph was not handed on")
	}
}
