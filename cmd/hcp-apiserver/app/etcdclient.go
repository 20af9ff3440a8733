package app

import (
	"crypto/tls"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/transport"
)

// newEtcdClient returns an etcd client configured as the storage's, for what the storage does not do:
// leader election, claims, locks, and the revisions that fresh reads compare with the watch cache.
func (o *Options) newEtcdClient() (*clientv3.Client, error) {
	t := o.RecommendedOptions.Etcd.StorageConfig.Transport
	var tlsConfig *tls.Config
	if t.CertFile != "" || t.TrustedCAFile != "" {
		var err error
		tlsConfig, err = transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.TrustedCAFile}})
		if err != nil {
			return nil, fmt.Errorf("etcd client TLS: %w", err)
		}
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: t.ServerList, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return client, nil
}
