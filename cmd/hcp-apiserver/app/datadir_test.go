package app

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLockDataDir: one server at a time per data directory, which only its owner may enter; the second
// is told which folder and which process.
func TestLockDataDir(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "hcp-data")
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDataDir(t.Context(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dataDir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the data directory's mode is %v (%v), want 0700", info.Mode().Perm(), err)
	}
	pid, err := os.ReadFile(filepath.Join(dataDir, dataDirLockFile))
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("the lock file holds %q (%v), want this process's PID %d", pid, err, os.Getpid())
	}

	// The lock belongs to the open file, so a second lock in this same process is refused too.
	if _, err := lockDataDir(t.Context(), dataDir); err == nil {
		t.Fatal("a second lock of the data directory succeeded")
	} else if want := "the data directory " + dataDir + " is in use by the process with PID " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("the second lock failed with %q, want it to say %q", err, want)
	}

	unlock()
	unlock, err = lockDataDir(t.Context(), dataDir)
	if err != nil {
		t.Fatalf("locking again after unlock: %v", err)
	}
	unlock()
}
