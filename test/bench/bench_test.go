package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestBenchmarkReportsEveryFigure runs the benchmark as `go run ./test/bench -objects 50 -arm-clusters 20`
// would and checks that every row has both sides and their ratio, that reads meant for the watch
// cache do not reach etcd, and that the ARM row measured PUTs through arm-shim. It asserts nothing
// about speed: on a shared machine that would flake.
func TestBenchmarkReportsEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and a server")
	}
	o := defaultOptions()
	o.objects, o.clients, o.lists, o.armClusters = []int{50}, 4, 2, 20
	var out bytes.Buffer
	res, err := run(context.Background(), o, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())

	ops := map[string]row{}
	for _, r := range res.rows {
		ops[r.op] = r
		if r.api.perSecond() <= 0 || r.etcd.perSecond() <= 0 || !(r.ratio() > 0) {
			t.Errorf("%s: api %.1f/s, etcd %.1f/s, ratio %v; want both measured and a ratio", r.op, r.api.perSecond(), r.etcd.perSecond(), r.ratio())
		}
	}
	for _, op := range []string{"create", `get rv=""`, `get rv="0"`, `list rv=""`, `list rv="0"`} {
		if _, ok := ops[op]; !ok {
			t.Errorf("no %s row in\n%s", op, out.String())
		}
	}
	if got := ops["create"].etcdRequestsPerCall("create"); got != 1 {
		t.Errorf("a create made %v etcd creates, want 1: the server's etcd request counts are not read", got)
	}
	for _, op := range []string{`get rv="0"`, `list rv="0"`} {
		if r := ops[op]; r.etcdRequestsPerCall("get") != 0 || r.etcdRequestsPerCall("list") != 0 || r.etcdRequestsPerCall("listWithCount") != 0 {
			t.Errorf("%s read etcd (%s); it should be served from the watch cache", op, r.serverPerCall())
		}
	}
	if arm := res.arm; arm == nil {
		t.Errorf("no ARM row in\n%s", out.String())
	} else {
		if arm.clusters != 20 || arm.arm.perSecond() <= 0 || arm.api.perSecond() <= 0 || arm.fixture.perSecond() <= 0 ||
			!(arm.ratio() > 0) || !(arm.fixtureRatio() > 0) || arm.arm.percentile(99) <= 0 {
			t.Errorf("ARM row of %d clusters: %.1f PUTs/s, %.1f and %.1f creates/s, ratios %v and %v, p99 %v; want 20 clusters and every figure measured",
				arm.clusters, arm.arm.perSecond(), arm.api.perSecond(), arm.fixture.perSecond(), arm.ratio(), arm.fixtureRatio(), arm.arm.percentile(99))
		}
		// Both kinds of create wrote their clusters: one etcd create each.
		for what, api := range map[string]apiStats{"the same clusters": arm.api, "the fixture": arm.fixture} {
			if got := api.server.etcdRequests["create"] / float64(arm.clusters); got != 1 {
				t.Errorf("an API create of %s made %v etcd creates of HCPClusters, want 1", what, got)
			}
		}
		if got := arm.arm.server.etcdRequests["create"] / float64(arm.clusters); got != 1 {
			t.Errorf("a PUT made %v etcd creates of HCPClusters, want 1", got)
		}
	}
	if !strings.Contains(out.String(), "ratio") {
		t.Errorf("the table has no ratio column:\n%s", out.String())
	}
}
