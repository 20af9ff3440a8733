package protocol

import (
	"fmt"
	"strings"
)

// TopicKind says which way a topic carries events.
type TopicKind string

const (
	// SourceEvents carries spec events and status resync requests from a source to one consumer's agent.
	SourceEvents TopicKind = "sourceevents"
	// AgentEvents carries status events and spec resync requests from a consumer's agent to a source.
	AgentEvents TopicKind = "agentevents"
)

// QoS is the MQTT quality of service every event is published and subscribed with: loss is repaired by
// resync, so at-least-once is enough and duplicates are dropped by generation and sequence id.
const QoS byte = 1

// SourceEventsTopic returns sources/<source>/consumers/<consumer>/sourceevents, where the source publishes
// to one consumer and that consumer's agent subscribes.
func SourceEventsTopic(source, consumer string) (string, error) {
	return topic(source, consumer, SourceEvents)
}

// AgentEventsTopic returns sources/<source>/consumers/<consumer>/agentevents, where a consumer's agent
// publishes to the source.
func AgentEventsTopic(source, consumer string) (string, error) {
	return topic(source, consumer, AgentEvents)
}

// AgentEventsSubscription returns sources/<source>/consumers/+/agentevents, the filter a single source
// replica subscribes to in order to hear every consumer.
func AgentEventsSubscription(source string) (string, error) {
	if err := ValidateID("source", source); err != nil {
		return "", err
	}
	return "sources/" + source + "/consumers/+/agentevents", nil
}

// SharedAgentEventsSubscription returns $share/<group>/sources/<source>/consumers/+/agentevents: when
// several replicas of a source subscribe with the same group, the broker hands each event to one of them.
func SharedAgentEventsSubscription(group, source string) (string, error) {
	if err := ValidateID("share group", group); err != nil {
		return "", err
	}
	filter, err := AgentEventsSubscription(source)
	if err != nil {
		return "", err
	}
	return "$share/" + group + "/" + filter, nil
}

// ParseTopic splits the topic name of a received event into its source, consumer and kind. It accepts
// topic names only: a subscription filter (with + or #, or a $share/ prefix) is an error.
func ParseTopic(topic string) (source, consumer string, kind TopicKind, err error) {
	if strings.HasPrefix(topic, "$share/") || strings.ContainsAny(topic, "+#") {
		return "", "", "", fmt.Errorf("topic %q is a subscription filter, not the topic of an event", topic)
	}
	parts := strings.Split(topic, "/")
	if len(parts) != 5 || parts[0] != "sources" || parts[2] != "consumers" {
		return "", "", "", fmt.Errorf("topic %q is not of the form sources/<source>/consumers/<consumer>/<sourceevents|agentevents>", topic)
	}
	source, consumer, kind = parts[1], parts[3], TopicKind(parts[4])
	if kind != SourceEvents && kind != AgentEvents {
		return "", "", "", fmt.Errorf("topic %q ends in %q, want %q or %q", topic, kind, SourceEvents, AgentEvents)
	}
	if err := ValidateID("source", source); err != nil {
		return "", "", "", fmt.Errorf("topic %q: %w", topic, err)
	}
	if err := ValidateID("consumer", consumer); err != nil {
		return "", "", "", fmt.Errorf("topic %q: %w", topic, err)
	}
	return source, consumer, kind, nil
}

// ValidateID checks a source, consumer or share group ID: non-empty, only lower-case letters, digits and
// '-'. what names the ID in the error, e.g. "consumer".
func ValidateID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%s ID is empty: it must be one or more of a-z, 0-9 and '-'", what)
	}
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return fmt.Errorf("%s ID %q has %q: it must be one or more of a-z, 0-9 and '-'", what, id, c)
		}
	}
	return nil
}

func topic(source, consumer string, kind TopicKind) (string, error) {
	if err := ValidateID("source", source); err != nil {
		return "", err
	}
	if err := ValidateID("consumer", consumer); err != nil {
		return "", err
	}
	return "sources/" + source + "/consumers/" + consumer + "/" + string(kind), nil
}
