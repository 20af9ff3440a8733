package framework

import (
	"os"
	"testing"
)

// The peak is the kernel's high-water mark: never under what is resident now, and it keeps memory that
// was touched and let go.
func TestProcessPeakRSSKeepsTheHighWaterMark(t *testing.T) {
	pid := os.Getpid()
	before, err := ProcessPeakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	touched := make([]byte, 64<<20)
	for i := range touched {
		touched[i] = 1
	}
	now, err := ProcessRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	peak, err := ProcessPeakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	if peak < now {
		t.Errorf("peak RSS %d bytes is under the RSS now, %d", peak, now)
	}
	if peak < before+32<<20 {
		t.Errorf("peak RSS %d bytes after touching 64 MiB, %d before: it did not follow", peak, before)
	}
	if touched[len(touched)-1] != 1 {
		t.Fatal("the memory was not written")
	}
}
