// Package embeddedetcd runs a single-member etcd inside the server process, so
// that hcp-apiserver works out of the box with nothing else installed. For
// more than one replica, point --etcd-servers at an etcd cluster instead.
package embeddedetcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// Etcd is a running embedded etcd member.
type Etcd struct {
	etcd *embed.Etcd
	// ClientURL is where the member serves clients, on the loopback interface only.
	ClientURL string
}

// Start starts an etcd member whose data lives in dataDir and waits until it serves.
// It listens on free loopback ports: nothing but this process talks to it.
func Start(ctx context.Context, dataDir string) (*Etcd, error) {
	logger := klog.FromContext(ctx)
	clientURL, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}
	peerURL, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}

	cfg := embed.NewConfig()
	cfg.Name = "hcp-apiserver"
	cfg.Dir = dataDir
	cfg.WalDir = filepath.Join(dataDir, "wal")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*clientURL}, []url.URL{*clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peerURL}, []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// The API server limits request bodies to 3 MiB; etcd must take the largest object it accepts.
	cfg.MaxRequestBytes = 4 * 1024 * 1024
	cfg.QuotaBackendBytes = 8 * 1024 * 1024 * 1024
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", dataDir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s was not ready within a minute", dataDir)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	logger.Info("Embedded etcd is serving", "dataDir", dataDir, "clientURL", clientURL.String())
	return &Etcd{etcd: e, ClientURL: clientURL.String()}, nil
}

// Err reports a failure of the running member.
func (e *Etcd) Err() <-chan error { return e.etcd.Err() }

// Close stops the member after the requests in flight finish.
func (e *Etcd) Close() { e.etcd.Close() }

func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return &url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}
