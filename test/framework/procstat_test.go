package framework

import (
	"os"
	"testing"
)

// The peak is the kernel's high-water mark: it never falls, and never stays under what is resident now.
// (It is compared with the RSS, not with the peak before: an earlier test of the package may have left
// the peak above what touching 64 MiB reaches.)
func TestProcessPeakRSSKeepsTheHighWaterMark(t *testing.T) {
	pid := os.Getpid()
	peakBefore, err := ProcessPeakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	rssBefore, err := ProcessRSS(pid)
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
	if now < rssBefore+32<<20 {
		t.Fatalf("RSS %d bytes after touching 64 MiB, %d before: the memory is not resident", now, rssBefore)
	}
	if peak < now {
		t.Errorf("peak RSS %d bytes is under the RSS now, %d", peak, now)
	}
	if peak < peakBefore {
		t.Errorf("peak RSS fell from %d to %d bytes", peakBefore, peak)
	}
	if touched[len(touched)-1] != 1 {
		t.Fatal("the memory was not written")
	}
}
