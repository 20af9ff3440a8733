package protocol

import (
	"strings"
	"testing"
)

func TestTopicsBuildAndParse(t *testing.T) {
	for _, tc := range []struct {
		source, consumer string
		kind             TopicKind
		build            func(source, consumer string) (string, error)
		want             string
	}{
		{"maestro", "7ff1a8f4-8811-49b4-8c19-9271bc51975e", SourceEvents, SourceEventsTopic,
			"sources/maestro/consumers/7ff1a8f4-8811-49b4-8c19-9271bc51975e/sourceevents"},
		{"hcp-apiserver", "mc-1", AgentEvents, AgentEventsTopic,
			"sources/hcp-apiserver/consumers/mc-1/agentevents"},
	} {
		got, err := tc.build(tc.source, tc.consumer)
		if err != nil || got != tc.want {
			t.Fatalf("build(%q, %q) = %q, %v; want %q", tc.source, tc.consumer, got, err, tc.want)
		}
		source, consumer, kind, err := ParseTopic(got)
		if err != nil || source != tc.source || consumer != tc.consumer || kind != tc.kind {
			t.Errorf("ParseTopic(%q) = %q, %q, %q, %v; want %q, %q, %q", got, source, consumer, kind, err,
				tc.source, tc.consumer, tc.kind)
		}
	}
}

func TestSubscriptions(t *testing.T) {
	got, err := AgentEventsSubscription("maestro")
	if want := "sources/maestro/consumers/+/agentevents"; err != nil || got != want {
		t.Errorf("AgentEventsSubscription = %q, %v; want %q", got, err, want)
	}
	got, err = SharedAgentEventsSubscription("hcp-apiserver", "maestro")
	if want := "$share/hcp-apiserver/sources/maestro/consumers/+/agentevents"; err != nil || got != want {
		t.Errorf("SharedAgentEventsSubscription = %q, %v; want %q", got, err, want)
	}
	if _, err := SharedAgentEventsSubscription("", "maestro"); err == nil || !strings.Contains(err.Error(), "share group ID is empty") {
		t.Errorf("empty share group: got %v", err)
	}
	if _, err := AgentEventsSubscription("Maestro"); err == nil || !strings.Contains(err.Error(), `source ID "Maestro"`) {
		t.Errorf("upper-case source: got %v", err)
	}
}

func TestTopicErrors(t *testing.T) {
	for _, tc := range []struct {
		name, topic, wantErr string
	}{
		{"upper-case consumer", "sources/maestro/consumers/MC1/sourceevents", `consumer ID "MC1" has 'M'`},
		{"underscore in source", "sources/my_source/consumers/mc1/agentevents", `source ID "my_source" has '_'`},
		{"empty consumer", "sources/maestro/consumers//agentevents", "consumer ID is empty"},
		{"wrong kind", "sources/maestro/consumers/mc1/events", `ends in "events"`},
		{"clusters instead of consumers", "sources/maestro/clusters/mc1/sourceevents", "is not of the form"},
		{"too short", "sources/maestro/consumers/mc1", "is not of the form"},
		{"wildcard", "sources/maestro/consumers/+/agentevents", "subscription filter"},
		{"shared subscription", "$share/g/sources/maestro/consumers/mc1/agentevents", "subscription filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := ParseTopic(tc.topic)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseTopic(%q) error = %v; want one containing %q", tc.topic, err, tc.wantErr)
			}
		})
	}
	if _, err := SourceEventsTopic("maestro", "mc/1"); err == nil || !strings.Contains(err.Error(), `consumer ID "mc/1" has '/'`) {
		t.Errorf("SourceEventsTopic with a slash in the consumer: got %v", err)
	}
	if _, err := AgentEventsTopic("", "mc1"); err == nil || !strings.Contains(err.Error(), "source ID is empty") {
		t.Errorf("AgentEventsTopic with an empty source: got %v", err)
	}
}
