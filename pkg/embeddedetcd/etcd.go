// Package embeddedetcd runs a single-member etcd inside the server process, so
// that hcp-apiserver works out of the box with nothing else installed. For
// more than one replica, point --etcd-servers at an etcd cluster instead.
//
// The member listens on nothing but a unix socket in its data directory, which
// only the server's user may enter: no other user of the machine can read or
// write the stored objects past the API's authentication, authorization and
// admission. A single member has no peers, so it has no peer listener either.
package embeddedetcd

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// SocketName is the client socket's name in the data directory.
const SocketName = "etcd.sock"

// maxSocketPath is the longest path a unix socket may have on every platform
// (sun_path is 104 bytes on macOS and the BSDs, 108 on Linux, with the NUL).
const maxSocketPath = 103

// Etcd is a running embedded etcd member.
type Etcd struct {
	etcd *embed.Etcd
	// ClientURL is where the member serves clients: unix://<data dir>/etcd.sock.
	ClientURL string

	// stopping is set once Close is called, so that the errors of listeners
	// closing on purpose are not logged as failures.
	stopping  atomic.Bool
	closeOnce sync.Once
	// cleanup removes the socket's folder when it is not the data directory.
	cleanup func()
}

// Start starts an etcd member whose data lives in dir and waits until it serves.
// When ctx ends first, it gives up at once and the member is stopped.
func Start(ctx context.Context, dir string) (*Etcd, error) {
	logger := klog.FromContext(ctx)
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// etcd also wants 0700, and the socket relies on it: the folder keeps other users away.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	socket, cleanup, err := socketPath(dir)
	if err != nil {
		return nil, err
	}
	if filepath.Dir(socket) != dir {
		logger.Info("The data directory's path is too long for a unix socket; the embedded etcd's socket is in a private temporary folder instead",
			"dataDir", dir, "socket", socket)
	}
	clientURL := url.URL{Scheme: "unix", Path: socket}
	e := &Etcd{ClientURL: clientURL.String(), cleanup: cleanup}

	cfg := embed.NewConfig()
	cfg.Name = "hcp-apiserver"
	cfg.Dir = dir
	cfg.WalDir = filepath.Join(dir, "wal")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	// No peer listener. The peer URL only names the member in its own member list, and nothing dials it.
	cfg.ListenPeerUrls = nil
	cfg.AdvertisePeerUrls = []url.URL{{Scheme: "unix", Path: filepath.Join(dir, "peer.sock")}}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// The API server speaks gRPC; the JSON gateway would be one more way in.
	cfg.EnableGRPCGateway = false
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(newZapLogger(logger.WithName("etcd"), &e.stopping))
	// The API server limits request bodies to 3 MiB; etcd must take the largest object it accepts.
	cfg.MaxRequestBytes = 4 * 1024 * 1024
	cfg.QuotaBackendBytes = 8 * 1024 * 1024 * 1024
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	// StartEtcd does not watch ctx (it replays the WAL, for one), so it runs aside: a server told to stop
	// while it starts does not wait for it, and the member is closed once it has started.
	type started struct {
		etcd *embed.Etcd
		err  error
	}
	startedc := make(chan started, 1)
	go func() {
		ee, err := embed.StartEtcd(cfg)
		startedc <- started{ee, err}
	}()
	select {
	case s := <-startedc:
		if s.err != nil {
			cleanup()
			return nil, fmt.Errorf("starting embedded etcd in %s: %w", dir, s.err)
		}
		e.etcd = s.etcd
	case <-ctx.Done():
		go func() {
			if s := <-startedc; s.err == nil {
				e.etcd = s.etcd
				e.Close()
			} else {
				cleanup()
			}
		}()
		return nil, ctx.Err()
	}

	select {
	case <-e.etcd.Server.ReadyNotify():
	case err := <-e.etcd.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s was not ready within a minute", dir)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	logger.Info("Embedded etcd is serving", "dataDir", dir, "clientURL", e.ClientURL)
	return e, nil
}

// Err reports a failure of the running member.
func (e *Etcd) Err() <-chan error { return e.etcd.Err() }

// Close stops the member after the requests in flight finish.
func (e *Etcd) Close() {
	e.closeOnce.Do(func() {
		e.stopping.Store(true)
		e.etcd.Close()
		e.cleanup()
	})
}

// socketPath returns where the client socket goes: in dir (absolute), or, when that path is too long for a
// socket, in a new private temporary folder that cleanup removes.
func socketPath(dir string) (socket string, cleanup func(), err error) {
	if socket = filepath.Join(dir, SocketName); len(socket) <= maxSocketPath {
		return socket, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "hcp-etcd-") // 0700
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(tmp, SocketName), func() { os.RemoveAll(tmp) }, nil
}
