package agent

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const metricsSubsystem = "maestro_agent"

var (
	eventsReceived = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "events_received_total",
		Help:           "Events received from the source, by CloudEvents type (\"invalid\" for a message that is no valid event).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})
	eventsRefused = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "events_refused_total",
		Help:           "Events received and not acted on, by reason.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	bundlesApplied = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "bundles_applied_total",
		Help:           "Bundle generations applied to the management cluster without error.",
		StabilityLevel: metrics.ALPHA,
	})
	applyErrors = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "apply_errors_total",
		Help:           "Applies and deletes of bundles that failed and are retried.",
		StabilityLevel: metrics.ALPHA,
	})
	deletesCompleted = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "deletes_completed_total",
		Help:           "Bundles whose objects are gone and whose deletion was reported to the source.",
		StabilityLevel: metrics.ALPHA,
	})
	statusEventsPublished = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "status_events_published_total",
		Help:           "Status events the broker accepted, by action (update_request or resync_response).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"action"})
	resyncRequestsSent = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "resync_requests_sent_total",
		Help:           "spec.resync_request events the broker accepted: one per connect and per resync interval.",
		StabilityLevel: metrics.ALPHA,
	})
	inspectionsRefused = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "inspection_bundles_refused_total",
		Help:           "Inspection bundle generations refused whole, before anything of them was read, by the rule they broke.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"rule"})
	applyDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "apply_duration_seconds",
		Help:           "How long applying one bundle generation to the management cluster took, failed or not.",
		Buckets:        metrics.ExponentialBuckets(0.01, 2, 12),
		StabilityLevel: metrics.ALPHA,
	})
)

var registerMetrics sync.Once

// RegisterMetrics registers the agent's metrics in the legacy registry, once; New calls it.
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(eventsReceived, eventsRefused, bundlesApplied, applyErrors, deletesCompleted,
			statusEventsPublished, resyncRequestsSent, inspectionsRefused, applyDuration)
	})
}
