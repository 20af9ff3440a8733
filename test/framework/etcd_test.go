package framework

import (
	"context"
	"net/http"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestEtcdClusterReplicatesWrites(t *testing.T) {
	c := StartEtcdCluster(t, 3)
	if len(c.ClientURLs) != 3 {
		t.Fatalf("ClientURLs = %v, want 3 members", c.ClientURLs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first := etcdClient(t, c.ClientURLs[0])
	last := etcdClient(t, c.ClientURLs[2])

	members, err := first.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(members.Members); got != 3 {
		t.Errorf("the cluster has %d members, want 3", got)
	}
	if _, err := first.Put(ctx, "/test/greeting", "hello"); err != nil {
		t.Fatalf("writing through the first member: %v", err)
	}
	resp, err := last.Get(ctx, "/test/greeting")
	if err != nil {
		t.Fatalf("reading through the last member: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "hello" {
		t.Errorf("the last member read %v, want the value hello written through the first", resp.Kvs)
	}
}

func TestEtcdStopLeavesNoProcess(t *testing.T) {
	c := StartEtcd(t)
	p := c.Members[0]
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	assertProcessGone(t, p)
	if err := etcdHealthy(context.Background(), http.DefaultClient, c.ClientURLs[0]); err == nil {
		t.Errorf("etcd at %s still answers after Stop", c.ClientURLs[0])
	}
}

// etcdClient connects to one member only, so that a read shows what that member serves.
func etcdClient(t *testing.T, url string) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}
