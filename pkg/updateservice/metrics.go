package updateservice

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const metricsSubsystem = "update_service"

// The results of a request for a channel's graph.
const (
	resultOK          = "ok"
	resultNotModified = "not-modified"
	resultError       = "error"
)

var (
	requests = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "requests_total",
		Help:           "Requests for a channel's update graph, by channel and result (ok, not-modified, or error: no answer, an error status, or a body that is no valid graph).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"channel", "result"})
	lastSuccess = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "last_success_timestamp_seconds",
		Help:           "When a channel's update graph was last fetched (or found unchanged), in seconds since the epoch.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"channel"})
	graphNodes = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "graph_nodes",
		Help:           "Releases in the merged update graph last handed to the server.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerMetrics sync.Once

// RegisterMetrics registers the poller's metrics in the legacy registry, once; NewPoller calls it.
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(requests, lastSuccess, graphNodes)
	})
}
