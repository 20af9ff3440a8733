package source

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const subsystem = "maestro_source"

var (
	eventsPublished = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "events_published_total",
		Help:           "Events the source published to agents, by CloudEvents type.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})
	publishErrors = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "publish_errors_total",
		Help:           "Publishes the broker did not accept; they are retried with backoff.",
		StabilityLevel: metrics.ALPHA,
	})
	eventsReceived = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "events_received_total",
		Help:           "Valid events received from agents, by CloudEvents type.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})
	eventsRefused = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "events_refused_total",
		Help:           "Messages from agents that were dropped, by reason.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	bundlesAcknowledged = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "bundles_acknowledged_total",
		Help:           "Bundle generations (and deletes) whose first status came back from their agent.",
		StabilityLevel: metrics.ALPHA,
	})
	resyncs = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "resyncs_total",
		Help:           "Resyncs: spec resync requests answered (received) and status resync requests sent (sent).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"direction"})
	deliveryLatency = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "delivery_latency_seconds",
		Help:           "From the first publish of a bundle generation to the first status of that generation.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 16),
		StabilityLevel: metrics.ALPHA,
	})
	connectedConsumers = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "connected_consumers",
		Help:           "Consumers whose agent was heard from within the liveness timeout.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

// registerMetrics adds the source's metrics to the registry hcp-apiserver serves on /metrics.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(eventsPublished, publishErrors, eventsReceived, eventsRefused,
			bundlesAcknowledged, resyncs, deliveryLatency, connectedConsumers)
	})
}
