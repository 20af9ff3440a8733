package main

import (
	"context"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
)

// stats are the measurements of one operation done count times.
type stats struct {
	count   int
	elapsed time.Duration
	// cpu is the user and system CPU time of the whole process while the operation ran: the
	// client, and on the API side the server too, and etcd, all share it.
	cpu time.Duration
	// latencies are sorted, fastest first.
	latencies []time.Duration
}

func (s stats) perSecond() float64 { return float64(s.count) / s.elapsed.Seconds() }

func (s stats) cpuPerOp() time.Duration { return s.cpu / time.Duration(s.count) }

// percentile is the nearest-rank percentile p (0 < p <= 100): of fewer than 100 calls, p99 is the slowest.
func (s stats) percentile(p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(s.latencies)))) - 1
	return s.latencies[max(i, 0)]
}

// op is one call of an operation; i is the call's index, from 0 to count-1.
type op func(ctx context.Context, i int) error

// measure calls op once for every index below count from the given number of concurrent
// clients, and stops at the first error.
func measure(ctx context.Context, count, clients int, call op) (stats, error) {
	// Collect the garbage of what ran before now, not on this measurement's clock.
	runtime.GC()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	latencies := make([]time.Duration, count)
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu, start := processCPU(), time.Now()
	for range min(clients, count) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < count && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				t := time.Now()
				if err := call(ctx, i); err != nil {
					cancel(err)
					return
				}
				latencies[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	s := stats{count: count, elapsed: time.Since(start), cpu: processCPU() - cpu, latencies: latencies}
	if err := context.Cause(ctx); err != nil {
		return s, err
	}
	slices.Sort(s.latencies)
	return s, nil
}

// plus adds the calls of o to s, as if they had been measured together.
func (s stats) plus(o stats) stats {
	latencies := slices.Concat(s.latencies, o.latencies)
	slices.Sort(latencies)
	return stats{count: s.count + o.count, elapsed: s.elapsed + o.elapsed, cpu: s.cpu + o.cpu, latencies: latencies}
}

// apiStats are the measurements of an API operation and what it made the server do.
type apiStats struct {
	stats
	server serverCounters
}

func (a apiStats) plus(o apiStats) apiStats {
	return apiStats{stats: a.stats.plus(o.stats), server: a.server.plus(o.server, 1)}
}

// serverCounters are what the server did for hcpclusters, from its own metrics: its etcd requests
// by operation, and how often and for how long it waited for the watch cache to catch up with etcd.
// They tell a read served from the watch cache (no etcd get or list) from one served by etcd.
type serverCounters struct {
	etcdRequests     map[string]float64
	cacheWaits       float64
	cacheWaitSeconds float64
}

// plus returns c + sign*o.
func (c serverCounters) plus(o serverCounters, sign float64) serverCounters {
	sum := serverCounters{etcdRequests: maps.Clone(c.etcdRequests)}
	if sum.etcdRequests == nil {
		sum.etcdRequests = map[string]float64{}
	}
	for operation, n := range o.etcdRequests {
		sum.etcdRequests[operation] += sign * n
		if sum.etcdRequests[operation] == 0 {
			delete(sum.etcdRequests, operation)
		}
	}
	sum.cacheWaits = c.cacheWaits + sign*o.cacheWaits
	sum.cacheWaitSeconds = c.cacheWaitSeconds + sign*o.cacheWaitSeconds
	return sum
}

// measureAPI measures an API operation and what it made the server do.
func (b *bench) measureAPI(ctx context.Context, count, clients int, call op) (apiStats, error) {
	before := readServerMetrics()
	s, err := measure(ctx, count, clients, call)
	return apiStats{stats: s, server: readServerMetrics().plus(before, -1)}, err
}

// readServerMetrics reads the server's etcd_requests_total and apiserver_watch_cache_read_wait_seconds
// for hcpclusters. The server runs in this process, so its metrics are in this process's registry.
func readServerMetrics() serverCounters {
	m := serverCounters{etcdRequests: map[string]float64{}}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return m
	}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range metric.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["resource"] != "hcpclusters" {
				continue
			}
			switch f.GetName() {
			case "etcd_requests_total":
				m.etcdRequests[labels["operation"]] += metric.GetCounter().GetValue()
			case "apiserver_watch_cache_read_wait_seconds":
				m.cacheWaits += float64(metric.GetHistogram().GetSampleCount())
				m.cacheWaitSeconds += metric.GetHistogram().GetSampleSum()
			}
		}
	}
	return m
}

// etcdRequests is how many requests the server has sent etcd so far, for every resource.
func etcdRequests() float64 {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return 0
	}
	var n float64
	for _, f := range families {
		if f.GetName() == "etcd_requests_total" {
			for _, metric := range f.GetMetric() {
				n += metric.GetCounter().GetValue()
			}
		}
	}
	return n
}
