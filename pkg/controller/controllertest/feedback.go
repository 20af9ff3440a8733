package controllertest

import (
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// SeenBy adds to the feedback of a report's manifest the object's generation on the management cluster and
// the one HyperShift set its conditions on (bundle.Observed reads them).
func SeenBy(m *protocol.ManifestCondition, generation, observed int64) {
	m.StatusFeedback.Values = append(m.StatusFeedback.Values,
		protocol.FeedbackValue{Name: render.FeedbackGeneration, Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: &generation}},
		protocol.FeedbackValue{Name: render.FeedbackObservedGeneration, Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: &observed}})
}
