package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"k8s.io/klog/v2"
)

// dataDirLockFile is the file in --data-dir that the running server holds locked, with its PID in it.
const dataDirLockFile = "hcp-apiserver.lock"

// lockDataDir makes dataDir the server's own: it creates it, or takes group and other users' access away
// (it holds etcd's data and the CA's key), and locks it for this process, whose PID it writes in the lock
// file. A second server on the same folder gets an error that names the folder and the holder's PID, where
// etcd would wait for its database forever. unlock releases the lock; so does the end of the process.
func lockDataDir(ctx context.Context, dataDir string) (unlock func(), err error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	info, err := os.Stat(dataDir)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		klog.FromContext(ctx).Info("Restricting the data directory to its owner", "dataDir", dataDir, "mode", info.Mode().Perm())
		if err := os.Chmod(dataDir, 0o700); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dataDir, dataDirLockFile)
	f, err := fileutil.TryLockFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, fileutil.ErrLocked) {
		holder := "another process"
		if pid := lockHolder(path); pid != "" {
			holder = "the process with PID " + pid
		}
		return nil, fmt.Errorf("the data directory %s is in use by %s (another hcp-apiserver): stop it, or give this one another --data-dir", dataDir, holder)
	}
	if err != nil {
		return nil, fmt.Errorf("locking the data directory %s: %w", dataDir, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	// The file stays: removing it would let a server that opened it meanwhile lock a file nobody else sees.
	return func() { f.Close() }, nil
}

// lockHolder reads the PID the holder of the lock file wrote, waiting a moment for a holder that has
// just locked it.
func lockHolder(path string) string {
	for range 10 {
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ""
}
