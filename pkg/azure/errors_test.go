package azure

import (
	"errors"
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
