package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	mqttpackets "github.com/mochi-mqtt/server/v2/packets"
)

// Broker is an MQTT v5 broker on a loopback port that admits clients with a
// certificate from its MQTTPKI and knows each by its certificate's common name.
type Broker struct {
	// URL is where clients connect: mqtts://127.0.0.1:<port>.
	URL string
	// CAs verifies the broker's serving certificate.
	CAs *x509.CertPool

	pki     *MQTTPKI
	addr    string
	process *Process // Mosquitto; nil for the embedded broker
	// binary and conf start Mosquitto again after a kill.
	binary, conf string

	stop     func() error
	stopOnce sync.Once
	stopErr  error
}

// ClientTLS returns a client configuration that trusts the broker and presents a
// new certificate for cn.
func (b *Broker) ClientTLS(t testing.TB, cn string) *tls.Config {
	t.Helper()
	return b.pki.ClientTLS(t, cn)
}

// Stop stops the broker and, for a process, waits until it has exited. It is also
// run when the test ends; calling it again returns the first result.
func (b *Broker) Stop() error {
	b.stopOnce.Do(func() { b.stopErr = b.stop() })
	return b.stopErr
}

// Connect opens an MQTT v5 session with a clean start as clientID over TLS with cfg.
// onPublish receive the messages of the session's subscriptions. The caller
// ends the session with Disconnect.
func (b *Broker) Connect(ctx context.Context, clientID string, cfg *tls.Config, onPublish ...func(paho.PublishReceived) (bool, error)) (*paho.Client, error) {
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", b.addr)
	if err != nil {
		return nil, err
	}
	c := paho.NewClient(paho.ClientConfig{
		// paho writes from several goroutines, which a tls.Conn does not allow.
		Conn:              packets.NewThreadSafeConn(conn),
		OnPublishReceived: onPublish,
	})
	ack, err := c.Connect(ctx, &paho.Connect{ClientID: clientID, CleanStart: true, KeepAlive: 30})
	if err != nil {
		if ack != nil {
			return nil, fmt.Errorf("%w (reason code %#x)", err, ack.ReasonCode)
		}
		return nil, err
	}
	return c, nil
}

// MQTTACL tells whether the client whose certificate has common name cn may
// publish to topic (write) or subscribe to the topic filter topic.
type MQTTACL func(cn, topic string, write bool) bool

// EmbeddedBrokerOption adjusts StartEmbeddedBroker.
type EmbeddedBrokerOption func(*mtlsAuthHook)

// WithMQTTACL has the embedded broker check every publish and subscription with acl
// instead of allowing all.
func WithMQTTACL(acl MQTTACL) EmbeddedBrokerOption {
	return func(h *mtlsAuthHook) { h.acl = acl }
}

// StartEmbeddedBroker runs a mochi-mqtt broker in the test process on a free
// loopback port, stopped when the test ends. It accepts MQTT v5 only, so that a
// client that falls back to 3.1.1 (and so loses the user properties that carry
// CloudEvents attributes) fails at once.
func StartEmbeddedBroker(t testing.TB, pki *MQTTPKI, opts ...EmbeddedBrokerOption) *Broker {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "broker.log")
	logOut, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	attachMQTTLog(t, "embedded broker", logFile)
	t.Cleanup(func() { _ = logOut.Close() })

	caps := mqtt.NewDefaultServerCapabilities()
	caps.MinimumProtocolVersion = 5
	server := mqtt.New(&mqtt.Options{
		Capabilities: caps,
		Logger:       slog.New(slog.NewTextHandler(logOut, nil)),
	})
	hook := &mtlsAuthHook{}
	for _, o := range opts {
		o(hook)
	}
	if err := server.AddHook(hook, nil); err != nil {
		t.Fatal(err)
	}
	// Port 0: the listener picks the port and keeps it, so no other process can take it.
	l := listeners.NewTCP(listeners.Config{ID: "mqtts", Address: "127.0.0.1:0", TLSConfig: pki.ServerTLS()})
	if err := server.AddListener(l); err != nil {
		t.Fatal(err)
	}
	if err := server.Serve(); err != nil {
		t.Fatal(err)
	}
	b := &Broker{URL: "mqtts://" + l.Address(), CAs: pki.CAs, pki: pki, addr: l.Address(), stop: server.Close}
	t.Cleanup(func() { _ = b.Stop() })
	return b
}

// mtlsAuthHook admits the clients that the TLS listener verified and, as
// Mosquitto's use_identity_as_username does, makes their certificate's common
// name their username.
type mtlsAuthHook struct {
	mqtt.HookBase
	acl MQTTACL
}

func (h *mtlsAuthHook) ID() string { return "mtls-auth" }

func (h *mtlsAuthHook) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

func (h *mtlsAuthHook) OnConnectAuthenticate(cl *mqtt.Client, _ mqttpackets.Packet) bool {
	conn, ok := cl.Net.Conn.(*tls.Conn)
	if !ok {
		return false
	}
	// The handshake is done: the CONNECT packet was read through it.
	state := conn.ConnectionState()
	if len(state.VerifiedChains) == 0 {
		return false
	}
	cl.Properties.Username = []byte(state.VerifiedChains[0][0].Subject.CommonName)
	return true
}

func (h *mtlsAuthHook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	return h.acl == nil || h.acl(string(cl.Properties.Username), topic, write)
}

// mosquittoStopTimeout is how long Mosquitto has to exit after SIGTERM; it needs
// well under a second, so a longer wait only hides a hang.
const mosquittoStopTimeout = 10 * time.Second

// StartMosquitto runs Mosquitto as a process on a free loopback port with the
// broker certificate of pki and returns once it completes TLS handshakes. It is
// stopped when the test ends, and skips the test when Mosquitto is not installed.
//
// aclLines, when given, are the lines of a Mosquitto ACL file (acl_file): topics
// are then denied unless a line allows them, as on Event Grid.
func StartMosquitto(t testing.TB, pki *MQTTPKI, aclLines ...string) *Broker {
	t.Helper()
	binary, err := exec.LookPath("mosquitto")
	if err != nil {
		binary = "/usr/sbin/mosquitto" // Debian installs it outside a user's PATH
		if _, err := os.Stat(binary); err != nil {
			t.Skip("mosquitto not found on PATH or in /usr/sbin; install the Debian package 'mosquitto'")
		}
	}
	dir := ComponentDir(t, "mosquitto")
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	conf := filepath.Join(dir, "mosquitto.conf")
	text := mosquittoConf(pki, addr)
	if len(aclLines) > 0 {
		aclFile := filepath.Join(dir, "acl")
		if err := os.WriteFile(aclFile, []byte(strings.Join(aclLines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		text += "acl_file " + aclFile + "\n"
	}
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &Broker{URL: "mqtts://" + addr, CAs: pki.CAs, pki: pki, addr: addr, binary: binary, conf: conf}
	b.stop = func() error { return b.process.stop(mosquittoStopTimeout) }
	b.startMosquitto(t, dir)
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// Kill kills Mosquitto with SIGKILL, as a crash would, and waits until it has exited.
func (b *Broker) Kill() error {
	if b.process == nil {
		return errors.New("the embedded broker runs in the test process and cannot be killed")
	}
	return b.process.Kill()
}

// Restart starts Mosquitto again after Kill, on the same port with the same configuration, and
// returns once it completes TLS handshakes. Persistence is off: sessions and queued messages are gone.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	if b.process == nil {
		t.Fatal("the embedded broker cannot be restarted")
	}
	b.startMosquitto(t, ComponentDir(t, "mosquitto"))
}

func (b *Broker) startMosquitto(t testing.TB, dir string) {
	t.Helper()
	b.process = StartProcess(t, dir, b.binary, "-c", b.conf)
	probe := b.pki.ClientTLS(t, "mosquitto-probe")
	b.process.WaitUntilReady(t, 30*time.Second, "TLS handshake", func(ctx context.Context) error {
		conn, err := (&tls.Dialer{Config: probe}).DialContext(ctx, "tcp", b.addr)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

// mosquittoConf configures one mTLS listener on which a client's certificate
// common name is its username (for ACLs) and no password is asked for.
func mosquittoConf(pki *MQTTPKI, addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	lines := []string{
		"per_listener_settings false",
		"allow_anonymous false",
		"persistence false",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
		"log_type information",
		"connection_messages true",
		"listener " + port + " " + host,
		"cafile " + pki.CAFile,
		"certfile " + pki.ServerCertFile,
		"keyfile " + pki.ServerKeyFile,
		"require_certificate true",
		"use_identity_as_username true",
	}
	// Run as root, Mosquitto 2 switches to the user 'mosquitto' right after reading
	// this file, and that user cannot read the keys in the test's private folder.
	if os.Geteuid() == 0 {
		lines = append([]string{"user root"}, lines...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// attachMQTTLog shows a broker's log when the test fails. Registered before the
// broker's own cleanup, it runs after it and so shows the log to the end.
func attachMQTTLog(t testing.TB, name, file string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if log, err := os.ReadFile(file); err == nil {
			t.Logf("%s log (%s):\n%s", name, file, log)
		}
	})
}
