package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the table: an API operation beside the raw etcd work that bounds it.
type row struct {
	objects int
	op      string
	api     stats
	etcd    stats
	// server is what the server did for all the API calls of the row.
	server serverCounters
}

// ratio is API calls per second over raw etcd calls per second: 1 would mean the API server costs nothing.
func (r row) ratio() float64 { return r.api.perSecond() / r.etcd.perSecond() }

func printReport(w io.Writer, o options, sizes []string, rows []row) {
	fmt.Fprintf(w, "hcp-apiserver and its etcd, in one process (GOMAXPROCS=%d): in-process server, single-member embedded etcd on loopback\n", gomaxprocs())
	fmt.Fprintf(w, "wire %s, storage protobuf; %d clients for create and get, 1 client for list (%d lists)\n",
		contentTypes[o.contentType], o.clients, o.lists)
	for _, s := range sizes {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "objects\top\tapi/s\tetcd/s\tratio\tapi p50\tapi p99\tetcd p50\tetcd p99\tcpu/op api\tcpu/op etcd\tserver per call")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.objects, r.op, rate(r.api.perSecond()), rate(r.etcd.perSecond()), r.ratio(),
			duration(r.api.percentile(50)), duration(r.api.percentile(99)),
			duration(r.etcd.percentile(50)), duration(r.etcd.percentile(99)),
			duration(r.api.cpuPerOp()), duration(r.etcd.cpuPerOp()), r.serverPerCall())
	}
	tw.Flush()

	fmt.Fprintln(w)
	fmt.Fprintln(w, "api/s: HCPCluster calls per second through the typed clientset; etcd/s: the same work on etcd directly:")
	fmt.Fprintln(w, "  create vs put, get vs linearizable get, list vs linearizable range over as many keys of the same size.")
	fmt.Fprintln(w, "ratio: api/s over etcd/s. get rv=\"\" is read from etcd, get rv=\"0\" from the watch cache;")
	fmt.Fprintln(w, "  list rv=\"\" is a consistent list served from the watch cache once it has caught up, list rv=\"0\" from it as it is.")
	fmt.Fprintf(w, "p99 of a list row is its slowest of %d lists. cpu/op: CPU time of the whole process (client, server, etcd) per call.\n", o.lists)
	fmt.Fprintln(w, "server per call: etcd requests the server made per API call (its etcd_requests_total; none: served from the watch cache),")
	fmt.Fprintln(w, "  and how often and how long per wait it waited for the watch cache to catch up (apiserver_watch_cache_read_wait_seconds).")
}

// rate prints calls per second with three significant digits or more.
func rate(perSecond float64) string {
	if perSecond >= 100 {
		return strconv.FormatFloat(perSecond, 'f', 0, 64)
	}
	return strconv.FormatFloat(perSecond, 'f', 2, 64)
}

// duration prints a latency with three significant digits or so.
func duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}

// etcdRequestsPerCall is how many etcd requests of the given operation the server made per API call.
func (r row) etcdRequestsPerCall(operation string) float64 {
	return r.server.etcdRequests[operation] / float64(r.api.count)
}

// serverPerCall prints what the server did per API call, such as "get 1" or
// "getCurrentResourceVersion 1, cache wait 0.1x 250µs" (waits per call, and how long each took).
func (r row) serverPerCall() string {
	perCall := func(n float64) string {
		if n < 0.005 {
			return "<0.01"
		}
		return strconv.FormatFloat(math.Round(n*100)/100, 'f', -1, 64)
	}
	var s []string
	for _, operation := range slices.Sorted(maps.Keys(r.server.etcdRequests)) {
		s = append(s, operation+" "+perCall(r.etcdRequestsPerCall(operation)))
	}
	if len(s) == 0 {
		s = append(s, "none")
	}
	if w := r.server.cacheWaits; w > 0 {
		each := time.Duration(r.server.cacheWaitSeconds / w * float64(time.Second))
		s = append(s, fmt.Sprintf("cache wait %sx %s", perCall(w/float64(r.api.count)), duration(each)))
	}
	return strings.Join(s, ", ")
}

// armGoal bounds what the shim may cost: 40 % of the API's creates per second, PUTs at 0.6 of its rate.
const armGoal = 0.4

func printARMReport(w io.Writer, o options, r armRow) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "arm-shim in front of the same server, as a process of its own; %d clients, HTTP/1.1 with keep-alive, api-version %s\n",
		o.clients, armAPIVersion)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "clusters\tapi creates of\tarm/s\tapi/s\tratio\tarm p50\tarm p99\tapi p50\tapi p99\tcpu/op arm\tcpu/op api\tserver per call arm\tserver per call api")
	arm := row{api: r.arm.stats, server: r.arm.server}
	for _, against := range []struct {
		what  string
		api   apiStats
		ratio float64
	}{{"the same clusters", r.api, r.ratio()}, {"the fixture", r.fixture, r.fixtureRatio()}} {
		api := row{api: against.api.stats, server: against.api.server}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.clusters, against.what, rate(r.arm.perSecond()), rate(against.api.perSecond()), against.ratio,
			duration(r.arm.percentile(50)), duration(r.arm.percentile(99)),
			duration(against.api.percentile(50)), duration(against.api.percentile(99)),
			duration(r.arm.cpuPerOp()), duration(against.api.cpuPerOp()), arm.serverPerCall(), api.serverPerCall())
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "arm/s: PUTs of hcpOpenShiftClusters per second through arm-shim, each answered 201; p50 and p99 are of that")
	fmt.Fprintln(w, "  answer, not of the long-running operation. api/s: creates through the typed clientset, as many with the same")
	fmt.Fprintln(w, "  clients, just before: of the HCPClusters the shim makes of such PUTs (its conversion and labels), and of the")
	fmt.Fprintln(w, "  rounds' smaller fixture cluster. cpu/op arm includes arm-shim's CPU time.")
	fmt.Fprintln(w, "server per call: etcd requests the server made for hcpclusters per PUT or create.")
	verdict := "met"
	if 1-r.ratio() >= armGoal {
		verdict = "not met"
	}
	fmt.Fprintf(w, "arm-shim costs %.0f%% of the API's throughput on the same clusters (1 - ratio); goal: under %.0f%%, %s.\n",
		100*(1-r.ratio()), 100*armGoal, verdict)
	fmt.Fprintf(w, "Against the fixture cluster, which is smaller than what the shim makes of a PUT, it costs %.0f%%.\n",
		100*(1-r.fixtureRatio()))
}
