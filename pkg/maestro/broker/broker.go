// Package broker is the MQTT v5 broker that hcp-apiserver embeds for Maestro (DESIGN.md section 4) when no
// external broker (--mqtt-url) is configured. It is mochi-mqtt behind mutual TLS, with the topic
// permissions an Azure Event Grid namespace would give the same clients, so that what works against it also
// works against Event Grid or Mosquitto:
//
//   - a client is known by its verified certificate: O=hcp:maestro-source, CN=<source ID> for
//     hcp-apiserver itself; O=hcp:maestro-agent, CN=<consumer name> for a maestro-agent (see acl.go).
//     Any other certificate, no certificate, or MQTT older than v5 is refused at connect;
//   - a source publishes to sources/<its ID>/consumers/<any>/sourceevents and subscribes to
//     [$share/<group>/]sources/<its ID>/consumers/<consumer or +>/agentevents;
//   - an agent subscribes to sources/<source or +>/consumers/<its name>/sourceevents and publishes to
//     sources/<any>/consumers/<its name>/agentevents;
//   - a client ID (MQTT session) belongs to the identity that opened it: another identity presenting it is
//     refused, as Event Grid refuses a session takeover.
//
// The server's CA issues the certificates: SourceTLS for hcp-apiserver's own connection, AgentCredentials
// for the bundle a maestro-agent loads (package agentbundle).
package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// DefaultMaxPacketSize (1 MiB) is the largest MQTT packet a client may send unless Options says otherwise:
// twice the largest event the protocol sends, which leaves room for the topic and the packet header.
const DefaultMaxPacketSize = 2 * protocol.MaxEventBytes

// connectTimeout bounds the TLS handshake and the CONNECT packet of a new connection; from then on the
// client's keep-alive bounds it. Without it a peer that opens a socket and sends nothing holds it forever.
const connectTimeout = 10 * time.Second

// mochiVerbosity is the klog verbosity of mochi-mqtt's own logs (connections, disconnections, housekeeping);
// its errors are always logged, and so are the refusals of this package.
const mochiVerbosity = 2

// Options configure a Broker.
type Options struct {
	// BindAddress is the host:port to listen on. Port 0 picks a free port; Addr tells which.
	BindAddress string
	// TLS serves the broker's certificate and verifies client certificates against ClientCAs, which must
	// be set. ClientAuth may be left unset: a client certificate is always required. TLS 1.2 is the minimum.
	TLS *tls.Config
	// MaxPacketSize is the largest packet a client may send; a larger one closes its connection.
	// 0 means DefaultMaxPacketSize.
	MaxPacketSize uint32
}

// Broker is the embedded MQTT broker. New listens, Start serves, Close stops.
type Broker struct {
	listener      net.Listener
	maxPacketSize uint32

	mu      sync.Mutex
	server  *mqtt.Server // set by Start
	closed  bool
	closing chan struct{}
}

// New validates opts and listens on opts.BindAddress, so that Addr is known before Start serves.
func New(opts Options) (*Broker, error) {
	tlsConfig, err := serverTLS(opts.TLS)
	if err != nil {
		return nil, err
	}
	maxPacketSize := opts.MaxPacketSize
	if maxPacketSize == 0 {
		maxPacketSize = DefaultMaxPacketSize
	}
	l, err := net.Listen("tcp", opts.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("MQTT broker: %w", err)
	}
	return &Broker{
		listener:      tls.NewListener(connectDeadlineListener{l}, tlsConfig),
		maxPacketSize: maxPacketSize,
		closing:       make(chan struct{}),
	}, nil
}

// serverTLS checks the TLS configuration of a broker and returns a copy that requires client certificates.
func serverTLS(cfg *tls.Config) (*tls.Config, error) {
	switch {
	case cfg == nil:
		return nil, errors.New("MQTT broker: TLS is required: clients are authenticated by their certificates")
	case cfg.ClientCAs == nil:
		return nil, errors.New("MQTT broker: TLS.ClientCAs is empty: set it to the CA that issues the clients' certificates")
	case len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil:
		return nil, errors.New("MQTT broker: TLS has no serving certificate")
	case cfg.ClientAuth != tls.NoClientCert && cfg.ClientAuth != tls.RequireAndVerifyClientCert:
		return nil, fmt.Errorf("MQTT broker: TLS.ClientAuth is %v: leave it unset or make it RequireAndVerifyClientCert", cfg.ClientAuth)
	}
	c := cfg.Clone()
	c.ClientAuth = tls.RequireAndVerifyClientCert
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	return c, nil
}

// Addr is the address the broker listens on.
func (b *Broker) Addr() net.Addr {
	return b.listener.Addr()
}

// Start serves MQTT until ctx is done or Close is called, then stops the broker and returns nil. It logs
// with the logger of ctx. A broker starts once.
func (b *Broker) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("mqtt-broker")

	b.mu.Lock()
	if b.closed || b.server != nil {
		b.mu.Unlock()
		return errors.New("MQTT broker: already started or closed")
	}
	caps := mqtt.NewDefaultServerCapabilities()
	caps.MinimumProtocolVersion = 5 // CloudEvents attributes travel as v5 user properties
	caps.MaximumPacketSize = b.maxPacketSize
	// The CONNACK advertises no topic aliases, which means none (MQTT 5 section 3.2.2.3.8), and mochi checks
	// a publication's permission before it resolves an alias: refuse aliases outright.
	caps.TopicAliasMaximum = 0
	server := mqtt.New(&mqtt.Options{
		Capabilities: caps,
		Logger:       slog.New(logr.ToSlogHandler(logger.V(mochiVerbosity))),
	})
	err := server.AddHook(&authHook{log: logger, clients: server.Clients}, nil)
	if err == nil {
		err = server.AddListener(listeners.NewNet("mqtts", b.listener))
	}
	if err == nil {
		err = server.Serve()
	}
	if err != nil {
		b.mu.Unlock()
		b.Close()
		return fmt.Errorf("MQTT broker: %w", err)
	}
	b.server = server
	b.mu.Unlock()

	logger.Info("Serving MQTT", "address", b.Addr().String())
	select {
	case <-ctx.Done():
	case <-b.closing:
	}
	b.Close()
	logger.Info("Stopped serving MQTT", "address", b.Addr().String())
	return nil
}

// Close stops the broker: it stops listening and disconnects every client. It may be called more than
// once, and before Start.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.closing)
	if b.server != nil {
		_ = b.server.Close() // closes the listener too
		return
	}
	_ = b.listener.Close()
}

// connectDeadlineListener gives every accepted connection connectTimeout to finish its TLS handshake and
// CONNECT; mochi replaces the deadline with the client's keep-alive once connected.
type connectDeadlineListener struct{ net.Listener }

func (l connectDeadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(time.Now().Add(connectTimeout)); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// authHook admits the clients whose certificate names a source or an agent, and gives each the topics
// of its role (acl.go). A client's identity is kept as its MQTT username, which it cannot choose: the
// username it sends is replaced.
type authHook struct {
	mqtt.HookBase
	log     klog.Logger
	clients *mqtt.Clients
}

func (h *authHook) ID() string { return "maestro-auth" }

func (h *authHook) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

// OnConnectAuthenticate runs after mochi has refused protocols older than v5 and before the session is set
// up. A refusal is CONNACK 0x86, the only code mochi sends for a failed authentication.
func (h *authHook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	id, err := h.authenticate(cl, pk)
	if err != nil {
		h.log.Info("Refused MQTT client", "client", cl.ID, "remote", cl.Net.Remote, "reason", err.Error())
		return false
	}
	cl.Properties.Username = []byte(id.String())
	// A client that sets Request Problem Information to 0 (paho does whenever it sends any CONNECT
	// property) makes mochi strip user properties from every packet it sends that client, PUBLISH
	// included, though MQTT 5 (3.1.2.11.7) exempts PUBLISH. CloudEvents attributes travel as user
	// properties: keep them.
	cl.Properties.Props.RequestProblemInfoFlag = false
	h.log.V(2).Info("Accepted MQTT client", "client", cl.ID, "remote", cl.Net.Remote, "identity", id.String())
	return true
}

func (h *authHook) authenticate(cl *mqtt.Client, pk packets.Packet) (identity, error) {
	conn, ok := cl.Net.Conn.(*tls.Conn)
	if !ok {
		return identity{}, errors.New("not a TLS connection")
	}
	// The handshake is done: the CONNECT packet was read through it.
	state := conn.ConnectionState()
	if len(state.VerifiedChains) == 0 {
		return identity{}, errors.New("no verified client certificate")
	}
	id, err := identityFromCertificate(state.VerifiedChains[0][0])
	if err != nil {
		return identity{}, err
	}
	// mochi publishes a will without asking OnACLCheck, so a will is a publication to check now.
	if pk.Connect.WillFlag && !id.mayPublish(pk.Connect.WillTopic) {
		return identity{}, fmt.Errorf("%s may not publish its will to %q", id, pk.Connect.WillTopic)
	}
	if existing, ok := h.clients.Get(cl.ID); ok && string(existing.Properties.Username) != id.String() {
		return identity{}, fmt.Errorf("%s may not take over client ID %q, a session of another identity", id, cl.ID)
	}
	return id, nil
}

// OnACLCheck is asked for every publication (write), every subscription filter and, before delivering a
// message, its topic name (read).
func (h *authHook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	id, ok := parseIdentity(string(cl.Properties.Username))
	if ok && (write && id.mayPublish(topic) || !write && id.mayRead(topic)) {
		return true
	}
	access := "read"
	if write {
		access = "publish"
	}
	h.log.Info("Denied MQTT topic", "client", cl.ID, "identity", string(cl.Properties.Username), "access", access, "topic", topic)
	return false
}
