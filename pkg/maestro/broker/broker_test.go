package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// timeout bounds every network step of these tests; on loopback each takes milliseconds.
const timeout = 10 * time.Second

// Reason codes the tests expect (MQTT 5 section 2.4).
const (
	granted       = protocol.QoS // a SUBACK grants the QoS asked for
	notAuthorized = 0x87
	badUserOrPass = 0x86 // mochi's CONNACK for every refused authentication
)

// testBroker is an embedded broker on a loopback port with a CA made the way standalone mode makes it.
type testBroker struct {
	pki  *standalone.PKI
	addr string
	url  string
	logs func() string
}

func startBroker(t *testing.T) *testBroker {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	pki := standalone.NewPKI(filepath.Join(t.TempDir(), "pki"))
	if err := pki.Ensure([]string{"127.0.0.1", "localhost"}); err != nil {
		t.Fatal(err)
	}
	serverTLS, err := ServerTLS(pki.CACert, pki.ServingCert, pki.ServingKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{BindAddress: "127.0.0.1:0", TLS: serverTLS})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start: %v", err)
			}
		case <-time.After(timeout):
			t.Errorf("the broker did not stop within %v", timeout)
		}
	})
	return &testBroker{
		pki:  pki,
		addr: b.Addr().String(),
		url:  "mqtts://" + b.Addr().String(),
		logs: func() string { return logger.GetSink().(ktesting.Underlier).GetBuffer().String() },
	}
}

// sourceTLS is hcp-apiserver's own client configuration, for the source "hcp".
func (tb *testBroker) sourceTLS(t *testing.T) *tls.Config {
	t.Helper()
	cfg, err := SourceTLS(tb.pki.CACert, tb.pki.CAKey, "hcp")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// agentTLS goes the way an agent does: a bundle written by the server, loaded by the agent.
func (tb *testBroker) agentTLS(t *testing.T, consumer string) *tls.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), consumer+".yaml")
	creds := AgentCredentials{CACertFile: tb.pki.CACert, CAKeyFile: tb.pki.CAKey, BrokerURL: tb.url, Source: "hcp"}
	if err := creds.WriteAgentBundle(consumer, path); err != nil {
		t.Fatal(err)
	}
	bundle, err := agentbundle.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := bundle.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// clientTLS presents a certificate for cn in orgs from the broker's CA.
func (tb *testBroker) clientTLS(t *testing.T, cn string, orgs ...string) *tls.Config {
	t.Helper()
	certPEM, keyPEM, err := standalone.IssueClientCertificate(tb.pki.CACert, tb.pki.CAKey, cn, orgs)
	if err != nil {
		t.Fatal(err)
	}
	return tb.withCert(t, certPEM, keyPEM)
}

func (tb *testBroker) withCert(t *testing.T, certPEM, keyPEM []byte) *tls.Config {
	t.Helper()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := tb.anonymousTLS(t)
	cfg.Certificates = []tls.Certificate{pair}
	return cfg
}

// anonymousTLS trusts the broker and presents no certificate.
func (tb *testBroker) anonymousTLS(t *testing.T) *tls.Config {
	t.Helper()
	roots, err := cert.NewPool(tb.pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}

// client is an MQTT v5 session whose received publications arrive on received.
type client struct {
	*paho.Client
	received chan *paho.Publish
}

// connect opens a session; the returned CONNACK is nil when none was received.
func (tb *testBroker) connect(t *testing.T, cfg *tls.Config, c *paho.Connect) (*client, *paho.Connack, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", tb.addr)
	if err != nil {
		return nil, nil, err
	}
	received := make(chan *paho.Publish, 16)
	pc := paho.NewClient(paho.ClientConfig{
		// paho writes from several goroutines, which a tls.Conn does not allow.
		Conn: packets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			received <- pr.Packet
			return true, nil
		}},
	})
	if c.KeepAlive == 0 {
		c.KeepAlive = 30
	}
	c.CleanStart = true
	ack, err := pc.Connect(ctx, c)
	if err != nil {
		_ = conn.Close()
		return nil, ack, err
	}
	t.Cleanup(func() { _ = pc.Disconnect(&paho.Disconnect{}) })
	return &client{Client: pc, received: received}, ack, nil
}

// mustConnect opens a session as clientID or fails the test.
func (tb *testBroker) mustConnect(t *testing.T, clientID string, cfg *tls.Config) *client {
	t.Helper()
	c, _, err := tb.connect(t, cfg, &paho.Connect{ClientID: clientID})
	if err != nil {
		t.Fatalf("connecting as %s: %v", clientID, err)
	}
	return c
}

// subscribe returns the SUBACK reason code of one subscription.
func (c *client) subscribe(t *testing.T, filter string) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ack, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: protocol.QoS}}})
	if ack == nil {
		t.Fatalf("subscribing to %s: %v", filter, err)
	}
	return ack.Reasons[0]
}

// publish publishes with QoS 1 and returns the PUBACK reason code.
func (c *client) publish(t *testing.T, topic, payload string) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := c.Publish(ctx, &paho.Publish{Topic: topic, QoS: protocol.QoS, Payload: []byte(payload)})
	if resp == nil {
		t.Fatalf("publishing to %s: %v", topic, err)
	}
	return resp.ReasonCode
}

// next waits for the next publication the client receives.
func (c *client) next(t *testing.T) *paho.Publish {
	t.Helper()
	select {
	case p := <-c.received:
		return p
	case <-time.After(timeout):
		t.Fatalf("nothing received within %v", timeout)
		return nil
	}
}

func TestSourceAndAgentsExchangeEvents(t *testing.T) {
	tb := startBroker(t)
	source := tb.mustConnect(t, "hcp-apiserver", tb.sourceTLS(t))
	mc1 := tb.mustConnect(t, "mc-1-agent", tb.agentTLS(t, "mc-1"))
	mc2 := tb.mustConnect(t, "mc-2-agent", tb.agentTLS(t, "mc-2"))

	if code := source.subscribe(t, "sources/hcp/consumers/+/agentevents"); code != granted {
		t.Fatalf("source subscribing to every consumer's agentevents: reason %#x, want %#x", code, granted)
	}
	if code := mc1.subscribe(t, "sources/hcp/consumers/mc-1/sourceevents"); code != granted {
		t.Fatalf("mc-1 subscribing to its sourceevents: reason %#x, want %#x", code, granted)
	}
	if code := mc2.subscribe(t, "sources/+/consumers/mc-2/sourceevents"); code != granted {
		t.Fatalf("mc-2 subscribing to its sourceevents from any source: reason %#x, want %#x", code, granted)
	}

	// Spec events reach the agent they are addressed to, and only that one: mc-2 gets its own event
	// first, though it was published after mc-1's.
	for _, consumer := range []string{"mc-1", "mc-2"} {
		topic := "sources/hcp/consumers/" + consumer + "/sourceevents"
		if code := source.publish(t, topic, "spec for "+consumer); code != 0 {
			t.Fatalf("source publishing to %s: reason %#x", topic, code)
		}
	}
	for consumer, agent := range map[string]*client{"mc-1": mc1, "mc-2": mc2} {
		got := agent.next(t)
		if got.Topic != "sources/hcp/consumers/"+consumer+"/sourceevents" || string(got.Payload) != "spec for "+consumer || got.QoS != protocol.QoS {
			t.Errorf("%s received %q on %s with QoS %d, want its own spec event with QoS %d", consumer, got.Payload, got.Topic, got.QoS, protocol.QoS)
		}
	}

	// Status events from every agent reach the source through its + subscription.
	for consumer, agent := range map[string]*client{"mc-1": mc1, "mc-2": mc2} {
		topic := "sources/hcp/consumers/" + consumer + "/agentevents"
		if code := agent.publish(t, topic, "status of "+consumer); code != 0 {
			t.Fatalf("%s publishing to %s: reason %#x", consumer, topic, code)
		}
		got := source.next(t)
		if got.Topic != topic || string(got.Payload) != "status of "+consumer {
			t.Errorf("source received %q on %s, want %q on %s", got.Payload, got.Topic, "status of "+consumer, topic)
		}
	}
}

func TestTopicPermissions(t *testing.T) {
	tb := startBroker(t)
	source := tb.mustConnect(t, "hcp-apiserver", tb.sourceTLS(t))
	agent := tb.mustConnect(t, "mc-1-agent", tb.agentTLS(t, "mc-1"))
	clients := map[string]*client{"source hcp": source, "agent mc-1": agent}

	subscriptions := []struct {
		client, filter string
		allowed        bool
	}{
		{"agent mc-1", "sources/hcp/consumers/mc-1/sourceevents", true},
		{"agent mc-1", "sources/+/consumers/mc-1/sourceevents", true},
		{"agent mc-1", "sources/hcp/consumers/mc-2/sourceevents", false},
		{"agent mc-1", "sources/hcp/consumers/+/sourceevents", false},
		{"agent mc-1", "sources/+/consumers/+/sourceevents", false},
		{"agent mc-1", "sources/hcp/consumers/mc-1/+", false},
		{"agent mc-1", "sources/hcp/consumers/mc-1/#", false},
		{"agent mc-1", "sources/hcp/consumers/mc-1/agentevents", false},
		{"agent mc-1", "sources/hcp/consumers/mc-2/agentevents", false},
		{"agent mc-1", "$share/g/sources/hcp/consumers/mc-1/sourceevents", false},
		{"agent mc-1", "#", false},
		{"agent mc-1", "$SYS/#", false},
		{"source hcp", "sources/hcp/consumers/+/agentevents", true},
		{"source hcp", "sources/hcp/consumers/mc-1/agentevents", true},
		{"source hcp", "$share/hcp-apiserver/sources/hcp/consumers/+/agentevents", true},
		{"source hcp", "sources/other/consumers/+/agentevents", false},
		{"source hcp", "sources/+/consumers/+/agentevents", false},
		{"source hcp", "sources/hcp/consumers/#", false},
		{"source hcp", "sources/hcp/consumers/+/sourceevents", false},
		{"source hcp", "$share/hcp-apiserver/sources/other/consumers/+/agentevents", false},
		{"source hcp", "#", false},
	}
	for _, s := range subscriptions {
		want := byte(notAuthorized)
		if s.allowed {
			want = granted
		}
		if got := clients[s.client].subscribe(t, s.filter); got != want {
			t.Errorf("%s subscribing to %s: SUBACK reason %#x, want %#x", s.client, s.filter, got, want)
		}
	}

	// The source now holds sources/hcp/consumers/+/agentevents: a refused publication must not reach
	// it, and an allowed one must.
	publications := []struct {
		client, topic string
		allowed       bool
	}{
		{"agent mc-1", "sources/hcp/consumers/mc-2/agentevents", false},
		{"agent mc-1", "sources/hcp/consumers/mc-1/sourceevents", false},
		{"agent mc-1", "sources/hcp/consumers/mc-1/agentevents", true},
		{"agent mc-1", "sources/other/consumers/mc-1/agentevents", true},
		{"source hcp", "sources/hcp/consumers/mc-2/agentevents", false},
		{"source hcp", "sources/other/consumers/mc-1/sourceevents", false},
		{"source hcp", "sources/hcp/consumers/mc-1/sourceevents", true},
		{"source hcp", "sources/hcp/consumers/mc-2/sourceevents", true},
	}
	for _, p := range publications {
		want := byte(0)
		if !p.allowed {
			want = notAuthorized
		}
		if got := clients[p.client].publish(t, p.topic, p.client+" to "+p.topic); got != want {
			t.Errorf("%s publishing to %s: PUBACK reason %#x, want %#x", p.client, p.topic, got, want)
		}
	}
	// What the source and the agent received: exactly the allowed publications their subscriptions
	// match, in order. A last allowed publication to each marks the end, so nothing is waited for.
	if code := agent.publish(t, "sources/hcp/consumers/mc-1/agentevents", "end"); code != 0 {
		t.Fatalf("agent's last publication: reason %#x", code)
	}
	if code := source.publish(t, "sources/hcp/consumers/mc-1/sourceevents", "end"); code != 0 {
		t.Fatalf("source's last publication: reason %#x", code)
	}
	for name, want := range map[string][]string{
		"source hcp": {"agent mc-1 to sources/hcp/consumers/mc-1/agentevents", "end"},
		"agent mc-1": {"source hcp to sources/hcp/consumers/mc-1/sourceevents", "end"},
	} {
		var got []string
		for len(got) == 0 || got[len(got)-1] != "end" {
			got = append(got, string(clients[name].next(t).Payload))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s received %q, want %q", name, got, want)
		}
	}
	if logs := tb.logs(); !strings.Contains(logs, `Denied MQTT topic client="mc-1-agent" identity="agent/mc-1" access="publish" topic="sources/hcp/consumers/mc-2/agentevents"`) {
		t.Errorf("the broker's log does not name the denied topic:\n%s", logs)
	}
}

func TestConnectRefused(t *testing.T) {
	tb := startBroker(t)
	other := startBroker(t) // another CA
	source := tb.mustConnect(t, "hcp-apiserver", tb.sourceTLS(t))

	adminCert, err := os.ReadFile(tb.pki.AdminCert)
	if err != nil {
		t.Fatal(err)
	}
	adminKey, err := os.ReadFile(tb.pki.AdminKey)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		tls     *tls.Config
		connect paho.Connect
		// reason is the CONNACK's reason code, 0 when the TLS handshake fails and none comes.
		reason byte
		// log is what the broker's log says about the refusal.
		log string
	}{
		{name: "no client certificate", tls: tb.anonymousTLS(t)},
		{name: "certificate from another CA", tls: func() *tls.Config {
			cfg := other.agentTLS(t, "mc-1")
			cfg.RootCAs = tb.anonymousTLS(t).RootCAs
			return cfg
		}()},
		{name: "in neither group", tls: tb.clientTLS(t, "mc-1"), reason: badUserOrPass, log: "neither group"},
		{name: "the server's admin certificate", tls: tb.withCert(t, adminCert, adminKey), reason: badUserOrPass, log: "neither group"},
		{name: "in both groups", tls: tb.clientTLS(t, "mc-1", SourceGroup, AgentGroup), reason: badUserOrPass, log: "both groups"},
		{name: "common name not a consumer ID", tls: tb.clientTLS(t, "MC_1", AgentGroup), reason: badUserOrPass, log: `consumer ID \"MC_1\"`},
		{
			name:    "will to another consumer's topic",
			tls:     tb.agentTLS(t, "mc-1"),
			connect: paho.Connect{WillMessage: &paho.WillMessage{Topic: "sources/hcp/consumers/mc-2/agentevents", QoS: 1, Payload: []byte("forged")}},
			reason:  badUserOrPass,
			log:     "may not publish its will",
		},
		{
			name:    "session of another identity",
			tls:     tb.agentTLS(t, "mc-1"),
			connect: paho.Connect{ClientID: "hcp-apiserver"},
			reason:  badUserOrPass,
			log:     "may not take over client ID",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.connect.ClientID == "" {
				tt.connect.ClientID = "intruder"
			}
			_, ack, err := tb.connect(t, tt.tls, &tt.connect)
			if err == nil {
				t.Fatal("connected, want refused")
			}
			var got byte
			if ack != nil {
				got = ack.ReasonCode
			}
			if got != tt.reason {
				t.Errorf("CONNACK reason %#x (%v), want %#x", got, err, tt.reason)
			}
			if tt.log != "" && !strings.Contains(tb.logs(), tt.log) {
				t.Errorf("the broker's log does not say %q:\n%s", tt.log, tb.logs())
			}
		})
	}

	// The refused takeover left the source's session alone.
	if code := source.subscribe(t, "sources/hcp/consumers/+/agentevents"); code != granted {
		t.Errorf("source subscribing after a refused takeover of its client ID: reason %#x", code)
	}
}

// TestMQTT311Refused speaks MQTT 3.1.1 by hand (paho.golang only speaks v5): a client that fell back
// to it would lose the user properties that carry CloudEvents attributes.
func TestMQTT311Refused(t *testing.T) {
	tb := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := (&tls.Dialer{Config: tb.agentTLS(t, "mc-1")}).DialContext(ctx, "tcp", tb.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		t.Fatal(err)
	}
	connect := []byte{
		0x10, 16, // CONNECT, remaining length
		0, 4, 'M', 'Q', 'T', 'T', // protocol name
		4,     // protocol level: 3.1.1
		0x02,  // clean session
		0, 30, // keep-alive
		0, 4, 'v', '3', '1', '1', // client ID
	}
	if _, err := conn.Write(connect); err != nil {
		t.Fatal(err)
	}
	connack := make([]byte, 4)
	if _, err := io.ReadFull(conn, connack); err != nil {
		t.Fatalf("reading CONNACK: %v", err)
	}
	// 0x01: connection refused, unacceptable protocol version (MQTT 3.1.1 section 3.2.2.3).
	if want := []byte{0x20, 2, 0, 0x01}; string(connack) != string(want) {
		t.Errorf("CONNACK % x, want % x", connack, want)
	}
}

func TestPacketSizeLimit(t *testing.T) {
	tb := startBroker(t)
	source := tb.mustConnect(t, "hcp-apiserver", tb.sourceTLS(t))
	agent := tb.mustConnect(t, "mc-1-agent", tb.agentTLS(t, "mc-1"))
	if code := agent.subscribe(t, "sources/hcp/consumers/mc-1/sourceevents"); code != granted {
		t.Fatalf("subscribing: reason %#x", code)
	}
	topic := "sources/hcp/consumers/mc-1/sourceevents"

	// The largest event the protocol allows passes.
	if code := source.publish(t, topic, strings.Repeat("a", protocol.MaxEventBytes)); code != 0 {
		t.Fatalf("publishing %d bytes: reason %#x", protocol.MaxEventBytes, code)
	}
	if got := agent.next(t); len(got.Payload) != protocol.MaxEventBytes {
		t.Errorf("received %d bytes, want %d", len(got.Payload), protocol.MaxEventBytes)
	}

	// A packet over the cap closes the publisher's connection, and nothing is delivered. paho keeps an
	// unacknowledged QoS 1 publication for a later session, so wait for the connection, not the PUBACK.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The write itself may fail or not, depending on when the broker's close reaches it.
	_, _ = source.PublishWithOptions(ctx, &paho.Publish{Topic: topic, QoS: protocol.QoS, Payload: make([]byte, DefaultMaxPacketSize)},
		paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
	select {
	case <-source.Done():
	case <-time.After(timeout):
		t.Fatalf("the broker did not close the connection of a %d-byte packet within %v", DefaultMaxPacketSize, timeout)
	}
	select {
	case got := <-agent.received:
		t.Errorf("the agent received %d bytes over the cap", len(got.Payload))
	default:
	}
}

func TestNewRefusesTLSThatDoesNotAuthenticateClients(t *testing.T) {
	tb := startBroker(t)
	good, err := ServerTLS(tb.pki.CACert, tb.pki.ServingCert, tb.pki.ServingKey)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tls  func() *tls.Config
		want string
	}{
		{"no TLS", func() *tls.Config { return nil }, "TLS is required"},
		{"no client CAs", func() *tls.Config { c := good.Clone(); c.ClientCAs = nil; return c }, "ClientCAs is empty"},
		{"client certificate optional", func() *tls.Config { c := good.Clone(); c.ClientAuth = tls.VerifyClientCertIfGiven; return c }, "RequireAndVerifyClientCert"},
		{"no serving certificate", func() *tls.Config { c := good.Clone(); c.Certificates = nil; return c }, "no serving certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(Options{BindAddress: "127.0.0.1:0", TLS: tt.tls()})
			if err == nil {
				b.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestCloseBeforeStart(t *testing.T) {
	tb := startBroker(t)
	serverTLS, err := ServerTLS(tb.pki.CACert, tb.pki.ServingCert, tb.pki.ServingKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{BindAddress: "127.0.0.1:0", TLS: serverTLS})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
	if err := b.Start(context.Background()); err == nil {
		t.Error("Start after Close succeeded")
	}
}
