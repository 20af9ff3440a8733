package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/transport"
)

// etcdReadyTimeout is generous because the tests share a loaded 2-core machine.
const etcdReadyTimeout = 2 * time.Minute

// EtcdCluster is an etcd cluster of etcd processes (the binary that hack/build-test-tools.sh
// builds) on loopback ports, each member with its data in its own folder.
type EtcdCluster struct {
	// ClientURLs has one URL per member, in member order, e.g. for --etcd-servers.
	ClientURLs []string
	// Members are the etcd processes, named etcd-0, etcd-1, ...
	Members []*Process
}

// StartEtcd starts a single-member etcd cluster and returns once it serves requests.
func StartEtcd(t testing.TB) *EtcdCluster {
	t.Helper()
	return StartEtcdCluster(t, 1)
}

// EtcdTLS are the files of an etcd cluster that speaks only TLS: each member serves Cert to clients and
// peers and admits only those with a certificate of CA; ClientCert is one such client certificate, with
// which the framework asks the members' health.
type EtcdTLS struct {
	CA, Cert, Key, ClientCert, ClientKey string
}

// StartEtcdCluster starts an etcd cluster of the given number of members and returns once
// every member reports itself healthy, which needs an elected leader. The members are
// stopped when the test ends.
func StartEtcdCluster(t testing.TB, members int) *EtcdCluster {
	t.Helper()
	return StartEtcdClusterTLS(t, members, nil)
}

// StartEtcdClusterTLS is StartEtcdCluster with TLS between members and towards clients, both with client
// certificates, when tlsFiles is not nil; ClientURLs are https then.
func StartEtcdClusterTLS(t testing.TB, members int, tlsFiles *EtcdTLS) *EtcdCluster {
	t.Helper()
	if members < 1 {
		t.Fatalf("an etcd cluster needs at least one member, not %d", members)
	}
	binary := Tool(t, "etcd")

	type member struct{ name, dir, clientURL, peerURL string }
	scheme := "http"
	var tlsArgs []string
	health := http.DefaultClient
	if tlsFiles != nil {
		scheme = "https"
		tlsArgs = []string{
			"--cert-file=" + tlsFiles.Cert, "--key-file=" + tlsFiles.Key, "--trusted-ca-file=" + tlsFiles.CA, "--client-cert-auth",
			"--peer-cert-file=" + tlsFiles.Cert, "--peer-key-file=" + tlsFiles.Key, "--peer-trusted-ca-file=" + tlsFiles.CA, "--peer-client-cert-auth",
		}
		tlsConfig, err := transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{
			CAFile: tlsFiles.CA, CertFile: tlsFiles.ClientCert, KeyFile: tlsFiles.ClientKey}})
		if err != nil {
			t.Fatal(err)
		}
		health = &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	}
	ms := make([]member, members)
	var initialCluster []string
	for i := range ms {
		ms[i] = member{
			name:      fmt.Sprintf("etcd-%d", i),
			clientURL: fmt.Sprintf("%s://127.0.0.1:%d", scheme, FreePort(t)),
			peerURL:   fmt.Sprintf("%s://127.0.0.1:%d", scheme, FreePort(t)),
		}
		ms[i].dir = ComponentDir(t, ms[i].name)
		initialCluster = append(initialCluster, ms[i].name+"="+ms[i].peerURL)
	}

	c := &EtcdCluster{}
	// Every member starts before any is awaited: a member is not healthy until a quorum runs.
	for _, m := range ms {
		c.ClientURLs = append(c.ClientURLs, m.clientURL)
		c.Members = append(c.Members, StartProcess(t, m.dir, binary, append([]string{
			"--name=" + m.name,
			"--data-dir=" + filepath.Join(m.dir, "data"),
			"--listen-client-urls=" + m.clientURL,
			"--advertise-client-urls=" + m.clientURL,
			"--listen-peer-urls=" + m.peerURL,
			"--initial-advertise-peer-urls=" + m.peerURL,
			"--initial-cluster=" + strings.Join(initialCluster, ","),
			"--initial-cluster-state=new",
			"--initial-cluster-token=" + t.Name(),
			// The data lives only as long as the test; fsync would only slow a loaded machine down.
			"--unsafe-no-fsync",
			// The benchmarks hold 100,000 objects with their revisions between compactions: more than
			// etcd's default 2 GiB quota, which would stop the run with "mvcc: database space exceeded".
			"--quota-backend-bytes=8589934592",
		}, tlsArgs...)...))
	}
	for i, p := range c.Members {
		p.WaitUntilReady(t, etcdReadyTimeout, "healthy etcd", func(ctx context.Context) error {
			return etcdHealthy(ctx, health, c.ClientURLs[i])
		})
	}
	return c
}

// Stop stops every member, the last one first; see Process.Stop.
func (c *EtcdCluster) Stop() error {
	var errs []error
	for i := len(c.Members) - 1; i >= 0; i-- {
		errs = append(errs, c.Members[i].Stop())
	}
	return errors.Join(errs...)
}

// etcdHealthy asks a member's /health, which answers true only when the member has a
// leader and can serve a read through the cluster.
func etcdHealthy(ctx context.Context, client *http.Client, clientURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var health struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(body, &health); err != nil {
		return fmt.Errorf("%s/health answered %s: %s", clientURL, resp.Status, body)
	}
	if health.Health != "true" {
		return fmt.Errorf("%s/health: not healthy: %s", clientURL, health.Reason)
	}
	return nil
}
