package azure

import (
	"errors"
	"fmt"
	"testing"
)

func TestCloudErrorKeepsTransportErrors(t *testing.T) {
	plain := errors.New("dial tcp: connection refused")
	if got := cloudError(plain); got != plain {
		t.Errorf("cloudError(%v) = %v, want it unchanged", plain, got)
	}
	if IsNotFound(plain) || IsPreconditionFailed(plain) {
		t.Error("a transport error looks like Azure's answer")
	}
}

// A refusal is what Azure would answer again; throttling, timeouts, 5xx and transport errors are not.
func TestIsRefusal(t *testing.T) {
	for status, want := range map[int]bool{400: true, 403: true, 404: true, 409: true, 408: false, 429: false, 500: false, 503: false} {
		err := fmt.Errorf("wrapped: %w", &CloudError{StatusCode: status})
		if got := IsRefusal(err); got != want {
			t.Errorf("IsRefusal(%d) = %v, want %v", status, got, want)
		}
	}
	if IsRefusal(errors.New("dial tcp: connection refused")) {
		t.Error("a transport error is a refusal")
	}
}
