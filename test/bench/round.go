package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/cmd/hcp-apiserver/app"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// rawRoot replaces the server's "/registry" at the start of the raw etcd side's keys: they are
// as long as the keys of the HCPClusters, and no watch of the server sees them.
const rawRoot = "/rawbench"

// bench runs rounds against one server and the etcd it stores in.
type bench struct {
	api      versioned.Interface
	etcd     *clientv3.Client
	clients  int
	lists    int
	progress io.Writer
	// armProfile is -arm-cpu-profile.
	armProfile string
}

// roundResult is what one round measured.
type roundResult struct {
	rows               []row
	keySize, valueSize int
}

// warmUp runs a small round whose figures are dropped: it opens the connections and lets the
// watch cache see its first objects, which the first measured calls would otherwise pay for.
func (b *bench) warmUp(ctx context.Context) error {
	_, err := b.round(ctx, 10*b.clients)
	return err
}

// round creates, gets and lists n HCPClusters through the API in a fresh namespace and does the
// same work on etcd directly, with keys and values of the size the server stored, right after each
// API phase (lists: in turns with the API's), so that both sides of a row meet the same etcd.
func (b *bench) round(ctx context.Context, n int) (roundResult, error) {
	ns := namespace(n)
	clusters := b.api.HcpV1alpha1().HCPClusters(ns)
	var res roundResult

	b.logf("%d objects: API creates", n)
	create, err := b.measureAPI(ctx, n, b.clients, func(ctx context.Context, i int) error {
		_, err := clusters.Create(ctx, fixtures.HCPCluster(ns, clusterName(i)), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return res, err
	}
	stored, err := b.storedObject(ctx, ns, clusterName(0))
	if err != nil {
		return res, err
	}
	res.keySize, res.valueSize = len(stored.Key), len(stored.Value)
	rawDir := rawRoot + strings.TrimPrefix(strings.TrimSuffix(string(stored.Key), clusterName(0)), "/registry")
	rawKey := func(i int) string { return rawDir + clusterName(i) }
	// Random bytes: etcd does not compress, but a reader of the data dir should not mistake them for objects.
	value := make([]byte, res.valueSize)
	for i := range value {
		value[i] = byte(rand.UintN(256))
	}
	b.logf("%d objects: raw etcd puts of %d B", n, res.valueSize)
	puts, err := measure(ctx, n, b.clients, func(ctx context.Context, i int) error {
		_, err := b.etcd.Put(ctx, rawKey(i), string(value))
		return err
	})
	if err != nil {
		return res, err
	}
	res.rows = append(res.rows, row{objects: n, op: "create", api: create.stats, etcd: puts, server: create.server})

	b.logf("%d objects: API gets and raw etcd gets", n)
	getRows, err := b.gets(ctx, n, func(ctx context.Context, i int, rv string) error {
		_, err := clusters.Get(ctx, clusterName(i), metav1.GetOptions{ResourceVersion: rv})
		return err
	}, func(ctx context.Context, i int) error {
		// Linearizable, as the server's own reads of etcd are.
		_, err := b.etcd.Get(ctx, rawKey(i))
		return err
	})
	if err != nil {
		return res, err
	}
	res.rows = append(res.rows, getRows...)

	b.logf("%d objects: %d lists and %d raw etcd ranges", n, b.lists, b.lists)
	listRows, err := b.listings(ctx, n, func(ctx context.Context, rv string) (int, error) {
		l, err := clusters.List(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}, func(ctx context.Context) (int, error) {
		r, err := b.etcd.Get(ctx, rawDir, clientv3.WithPrefix())
		if err != nil {
			return 0, err
		}
		return len(r.Kvs), nil
	})
	if err != nil {
		return res, err
	}
	res.rows = append(res.rows, listRows...)
	return res, nil
}

// storedObject reads an HCPCluster as the server stored it in etcd. It looks the key up rather
// than spell it: the generic store puts each resource under <prefix>/<group>/<resource>/.
func (b *bench) storedObject(ctx context.Context, ns, name string) (*mvccpb.KeyValue, error) {
	suffix := "/hcpclusters/" + ns + "/" + name
	keys, err := b.etcd.Get(ctx, app.EtcdPathPrefix+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	for _, kv := range keys.Kvs {
		if strings.HasSuffix(string(kv.Key), suffix) {
			r, err := b.etcd.Get(ctx, string(kv.Key))
			if err != nil || len(r.Kvs) == 0 {
				return nil, fmt.Errorf("reading %s from etcd: %v", kv.Key, err)
			}
			return r.Kvs[0], nil
		}
	}
	return nil, fmt.Errorf("no key ending in %s under %s in etcd", suffix, app.EtcdPathPrefix)
}

// gets measures n gets of every object through the API, consistent (resourceVersion "", which
// the server reads from etcd) and from the watch cache (resourceVersion "0"), and n raw etcd gets.
func (b *bench) gets(ctx context.Context, n int, get func(context.Context, int, string) error, rawGet func(context.Context, int) error) ([]row, error) {
	var rows []row
	for _, rv := range []string{"", "0"} {
		api, err := b.measureAPI(ctx, n, b.clients, func(ctx context.Context, i int) error { return get(ctx, i, rv) })
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{objects: n, op: fmt.Sprintf("get rv=%q", rv), api: api.stats, server: api.server})
	}
	return withEtcd(rows, func() (stats, error) { return measure(ctx, n, b.clients, rawGet) })
}

// listings lists the whole namespace -lists times each way: consistent (resourceVersion "", served
// from the watch cache once it has caught up with etcd) and resourceVersion "0" (from the cache as it
// is), and does as many raw etcd ranges over the same number of keys. Each must return all n objects.
// The three take turns, one call each, and the two API lists swap places every turn: measured in
// blocks, or in turns in a fixed order, whichever list came first cost up to a third more CPU.
func (b *bench) listings(ctx context.Context, n int, list func(context.Context, string) (int, error), rawRange func(context.Context) (int, error)) ([]row, error) {
	all := func(count int, err error) error {
		if err == nil && count != n {
			err = fmt.Errorf("a list returned %d items, want %d", count, n)
		}
		return err
	}
	versions := []string{"", "0"}
	api := make([]apiStats, len(versions))
	var raw stats
	for turn := range b.lists {
		for j := range versions {
			i := (turn + j) % len(versions)
			s, err := b.measureAPI(ctx, 1, 1, func(ctx context.Context, _ int) error { return all(list(ctx, versions[i])) })
			if err != nil {
				return nil, err
			}
			api[i] = api[i].plus(s)
		}
		s, err := measure(ctx, 1, 1, func(ctx context.Context, _ int) error { return all(rawRange(ctx)) })
		if err != nil {
			return nil, err
		}
		raw = raw.plus(s)
	}
	rows := make([]row, len(versions))
	for i, rv := range versions {
		rows[i] = row{objects: n, op: fmt.Sprintf("list rv=%q", rv), api: api[i].stats, etcd: raw, server: api[i].server}
	}
	return rows, nil
}

// withEtcd measures the raw etcd work once, after the API work, and sets it as the limit of every row.
func withEtcd(rows []row, measureEtcd func() (stats, error)) ([]row, error) {
	raw, err := measureEtcd()
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].etcd = raw
	}
	return rows, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.progress, "bench: "+format+"\n", args...)
}
