package framework

import (
	"os"
	"syscall"
	"testing"
)

// The peak is the kernel's high-water mark: it is never under what is resident, and it keeps memory that
// was touched and given back. (It is compared with the RSS, not with the peak before the test: an earlier
// test of the package may have left the peak above what touching 64 MiB reaches.)
func TestProcessPeakRSSKeepsTheHighWaterMark(t *testing.T) {
	pid := os.Getpid()
	read := func() (rss, peak int64) {
		t.Helper()
		rss, err := ProcessRSS(pid)
		if err != nil {
			t.Fatal(err)
		}
		if peak, err = ProcessPeakRSS(pid); err != nil {
			t.Fatal(err)
		}
		return rss, peak
	}
	rssBefore, peakBefore := read()
	// Mapped apart from Go's heap, so that unmapping gives it back to the kernel at once.
	touched, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := range touched {
		touched[i] = 1
	}
	rssTouched, peakTouched := read()
	if rssTouched < rssBefore+32<<20 {
		t.Fatalf("RSS %d bytes after touching 64 MiB, %d before: the memory is not resident", rssTouched, rssBefore)
	}
	if peakTouched < rssTouched {
		t.Errorf("peak RSS %d bytes is under the RSS, %d", peakTouched, rssTouched)
	}
	if peakTouched < peakBefore {
		t.Errorf("peak RSS fell from %d to %d bytes", peakBefore, peakTouched)
	}
	if err := syscall.Munmap(touched); err != nil {
		t.Fatal(err)
	}
	rssAfter, peakAfter := read()
	if rssAfter > rssTouched-32<<20 {
		t.Fatalf("RSS %d bytes after giving 64 MiB back, %d before: the memory was not given back", rssAfter, rssTouched)
	}
	// The kernel's counters are approximate by some hundreds of KiB, so the peak is held to what was given
	// back, not to the byte it showed before.
	if peakAfter < rssAfter+32<<20 {
		t.Errorf("peak RSS %d bytes after giving 64 MiB back, RSS now %d: the peak did not keep it (it was %d while touched)", peakAfter, rssAfter, peakTouched)
	}
}
