package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestBenchmarkReportsEveryFigure runs the benchmark as `go run ./test/bench -objects 50` would
// and checks that every row has both sides and their ratio, and that reads meant for the watch
// cache do not reach etcd. It asserts nothing about speed: on a shared machine that would flake.
func TestBenchmarkReportsEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and a server")
	}
	o := defaultOptions()
	o.objects, o.clients, o.lists = []int{50}, 4, 2
	var out bytes.Buffer
	rows, err := run(context.Background(), o, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())

	ops := map[string]row{}
	for _, r := range rows {
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
	if !strings.Contains(out.String(), "ratio") {
		t.Errorf("the table has no ratio column:\n%s", out.String())
	}
}
