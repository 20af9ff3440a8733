package protocol

import (
	"strings"
	"testing"
)

func TestEventTypeRoundTrip(t *testing.T) {
	for _, want := range knownTypes {
		s := want.String()
		if !strings.HasPrefix(s, "io.open-cluster-management.works.v1alpha1.manifestbundles.") {
			t.Errorf("%v.String() = %q", want, s)
		}
		got, err := ParseEventType(s)
		if err != nil || got != want {
			t.Errorf("ParseEventType(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got := SpecCreateRequest.String(); got != "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request" {
		t.Errorf("SpecCreateRequest = %q", got)
	}
}

func TestParseEventTypeErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"io.open-cluster-management.works.v1alpha1.manifestbundles",
		"io.open-cluster-management.works.v1alpha1.manifestbundles.spec",
		"io.open-cluster-management.works.v1alpha1.manifestbundles.status.create_request",
		"io.open-cluster-management.works.v1alpha1.manifestbundles.spec.watch_request",
		"io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request.extra",
		"io.open-cluster-management.works.v1alpha1.manifestworks.spec.create_request",
		"io.open-cluster-management.cloudevents.heartbeat",
		"x.io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request",
	} {
		_, err := ParseEventType(s)
		if err == nil || !strings.Contains(err.Error(), "unknown event type") {
			t.Errorf("ParseEventType(%q) error = %v; want an unknown event type error", s, err)
		}
	}
}
