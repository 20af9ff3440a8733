// Package maestrotest starts the embedded MQTT broker for tests of both Maestro ends, with a CA made
// the way hcp-apiserver makes it, and issues source and agent credentials the way the server does.
package maestrotest

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/broker"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// Broker is an embedded broker on a loopback port. It can be stopped and started again on the same
// address, as a broker restart looks to its clients.
type Broker struct {
	PKI *standalone.PKI
	// URL is mqtts://127.0.0.1:<port>.
	URL  string
	addr string
	// t is the test the broker lives as long as.
	t testing.TB

	mu   sync.Mutex
	stop func()
}

// StartBroker starts a broker; it is stopped when the test ends.
func StartBroker(t testing.TB) *Broker {
	t.Helper()
	pki := standalone.NewPKI(filepath.Join(t.TempDir(), "pki"))
	if err := pki.Ensure([]string{"127.0.0.1", "localhost"}); err != nil {
		t.Fatal(err)
	}
	b := &Broker{PKI: pki, addr: "127.0.0.1:0", t: t}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	b.URL = "mqtts://" + b.addr
	return b
}

// Start starts the broker again after Stop, on the same address; it is stopped when the test that
// started it first ends. Subtests may call it.
func (b *Broker) Start() error {
	t := b.t
	serverTLS, err := broker.ServerTLS(b.PKI.CACert, b.PKI.ServingCert, b.PKI.ServingKey)
	if err != nil {
		return err
	}
	var mb *broker.Broker
	// The port of a broker just stopped may take a moment to be free again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mb, err = broker.New(broker.Options{BindAddress: b.addr, TLS: serverTLS})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	b.addr = mb.Addr().String()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mb.Start(ctx); err != nil {
			t.Errorf("broker: %v", err)
		}
	}()
	b.mu.Lock()
	b.stop = func() {
		cancel()
		<-done
	}
	b.mu.Unlock()
	// Registered after the logger's own cleanup, so it runs first: the broker stops while it may log.
	t.Cleanup(b.Stop)
	return nil
}

// Stop stops the broker and disconnects every client; it may be called more than once.
func (b *Broker) Stop() {
	b.mu.Lock()
	stop := b.stop
	b.stop = nil
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// SourceTLS is the client configuration of the source named source, as hcp-apiserver makes its own.
func (b *Broker) SourceTLS(t testing.TB, source string) *tls.Config {
	t.Helper()
	cfg, err := broker.SourceTLS(b.PKI.CACert, b.PKI.CAKey, source)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// AgentBundle writes the agent bundle of consumer, as "hcp-apiserver agent-bundle" does, and returns its
// path.
func (b *Broker) AgentBundle(t testing.TB, source, consumer string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), consumer+".yaml")
	creds := broker.AgentCredentials{CACertFile: b.PKI.CACert, CAKeyFile: b.PKI.CAKey, BrokerURL: b.URL, Source: source}
	if err := creds.WriteAgentBundle(consumer, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// AgentTLS is the client configuration an agent of consumer loads from its bundle.
func (b *Broker) AgentTLS(t testing.TB, source, consumer string) *tls.Config {
	t.Helper()
	bundle, err := agentbundle.Load(b.AgentBundle(t, source, consumer))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := bundle.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
