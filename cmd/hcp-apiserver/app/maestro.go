package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/broker"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// DefaultSource is the source ID hcp-apiserver publishes as, unless --maestro-source says otherwise.
const DefaultSource = "hcp-apiserver"

// MaestroOptions say how hcp-apiserver reaches its agents: through the MQTT broker it embeds, or through
// an external one (Mosquitto, Azure Event Grid) when URL is set.
type MaestroOptions struct {
	// Source is the source ID: the <source> of the topics.
	Source string
	// BindAddress is where the embedded broker listens; empty turns Maestro off.
	BindAddress string
	// AdvertisedURL is the broker URL written into agent bundles; by default mqtts://<first alternate name
	// or 127.0.0.1>:<port>.
	AdvertisedURL string
	// URL, CAFile, CertFile and KeyFile reach an external broker with a client certificate instead.
	URL, CAFile, CertFile, KeyFile string
	// LivenessInterval and LivenessTimeout say how often the source asks each agent whether it is there,
	// and how long an agent may leave that unanswered before its ManagementCluster is not connected.
	LivenessInterval, LivenessTimeout time.Duration
}

func (m *MaestroOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&m.Source, "maestro-source", m.Source,
		"The Maestro source ID of this server: the <source> of its MQTT topics sources/<source>/consumers/<consumer>/....")
	fs.StringVar(&m.BindAddress, "mqtt-bind-address", m.BindAddress,
		"Where the embedded MQTT v5 broker listens (TLS with client certificates from the server's CA). Port 0 picks one. Empty turns Maestro off. Ignored with --mqtt-url.")
	fs.StringVar(&m.AdvertisedURL, "mqtt-advertised-url", m.AdvertisedURL,
		"The embedded broker's URL as agents reach it, written into agent bundles (default mqtts://<first --alternate-names or 127.0.0.1>:<port>).")
	fs.StringVar(&m.URL, "mqtt-url", m.URL,
		"An external MQTT v5 broker to use instead of the embedded one: mqtts://host:port. Needs --mqtt-ca-file, --mqtt-cert-file and --mqtt-key-file.")
	fs.StringVar(&m.CAFile, "mqtt-ca-file", m.CAFile, "The CA bundle that verifies the external broker.")
	fs.StringVar(&m.CertFile, "mqtt-cert-file", m.CertFile, "The client certificate for the external broker.")
	fs.StringVar(&m.KeyFile, "mqtt-key-file", m.KeyFile, "The client certificate's key for the external broker.")
	fs.DurationVar(&m.LivenessInterval, "maestro-liveness-interval", m.LivenessInterval,
		"How often the source asks each management cluster's agent for a status, to learn whether it is there.")
	fs.DurationVar(&m.LivenessTimeout, "maestro-liveness-timeout", m.LivenessTimeout,
		"How long an agent may stay silent before its ManagementCluster's AgentConnected is False and no new cluster is placed on it.")
}

func (m *MaestroOptions) Validate() []error {
	var errs []error
	if err := protocol.ValidateID("--maestro-source", m.Source); err != nil {
		errs = append(errs, err)
	}
	if m.LivenessInterval <= 0 || m.LivenessTimeout <= m.LivenessInterval {
		errs = append(errs, fmt.Errorf("--maestro-liveness-interval (%v) must be positive and shorter than --maestro-liveness-timeout (%v)",
			m.LivenessInterval, m.LivenessTimeout))
	}
	if m.URL == "" {
		if m.BindAddress != "" {
			if _, _, err := net.SplitHostPort(m.BindAddress); err != nil {
				errs = append(errs, fmt.Errorf("--mqtt-bind-address %q: want host:port", m.BindAddress))
			}
		}
		return errs
	}
	if !strings.HasPrefix(m.URL, "mqtts://") {
		errs = append(errs, fmt.Errorf("--mqtt-url %q: must be mqtts://host:port; brokers are reached with TLS only", m.URL))
	}
	for flag, v := range map[string]string{"--mqtt-ca-file": m.CAFile, "--mqtt-cert-file": m.CertFile, "--mqtt-key-file": m.KeyFile} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is required with --mqtt-url", flag))
		}
	}
	return errs
}

// embeddedBroker says whether the server runs the MQTT broker itself.
func (m *MaestroOptions) embeddedBroker() bool { return m.URL == "" && m.BindAddress != "" }

// enabled says whether the server runs a Maestro source.
func (m *MaestroOptions) enabled() bool { return m.URL != "" || m.BindAddress != "" }

// brokerURLFile is where the server records its embedded broker's advertised URL, for agent-bundle.
func brokerURLFile(dataDir string) string { return filepath.Join(dataDir, "mqtt-broker-url") }

// startMaestro starts the embedded broker (unless an external one is configured) and returns how to make
// the source, which runs on the leader only: a new one each time this replica leads. The broker stops
// when ctx ends.
func (o *CompletedOptions) startMaestro(ctx context.Context) (func() (*source.Source, error), error) {
	m := o.Maestro
	logger := klog.FromContext(ctx)
	brokerCfg := transport.Config{ClientID: m.Source}
	if m.URL != "" {
		tlsConfig, err := clientTLS(m.CAFile, m.CertFile, m.KeyFile)
		if err != nil {
			return nil, err
		}
		brokerCfg.URL, brokerCfg.TLS = m.URL, tlsConfig
		return newSource(m, brokerCfg), nil
	}

	pki := o.certs
	serverTLS, err := broker.ServerTLS(pki.CACert, pki.ServingCert, pki.ServingKey)
	if err != nil {
		return nil, err
	}
	b, err := broker.New(broker.Options{BindAddress: m.BindAddress, TLS: serverTLS})
	if err != nil {
		return nil, err
	}
	go func() {
		if err := b.Start(ctx); err != nil {
			logger.Error(err, "The embedded MQTT broker stopped")
		}
	}()
	port := strconv.Itoa(b.Addr().(*net.TCPAddr).Port)
	advertised := m.AdvertisedURL
	if advertised == "" {
		host := "127.0.0.1"
		if len(o.AlternateNames) > 0 {
			host = o.AlternateNames[0]
		}
		advertised = "mqtts://" + net.JoinHostPort(host, port)
	}
	if err := os.WriteFile(brokerURLFile(o.DataDir), []byte(advertised+"\n"), 0o644); err != nil {
		return nil, err
	}
	logger.Info("Embedded MQTT broker listening", "address", b.Addr().String(), "advertisedURL", advertised)

	tlsConfig, err := broker.SourceTLS(pki.CACert, pki.CAKey, m.Source)
	if err != nil {
		return nil, err
	}
	brokerCfg.URL, brokerCfg.TLS = "mqtts://"+net.JoinHostPort("127.0.0.1", port), tlsConfig
	return newSource(m, brokerCfg), nil
}

func newSource(m MaestroOptions, broker transport.Config) func() (*source.Source, error) {
	return func() (*source.Source, error) {
		return source.New(source.Options{Source: m.Source, Broker: broker,
			LivenessInterval: m.LivenessInterval, LivenessTimeout: m.LivenessTimeout})
	}
}

// clientTLS loads a client certificate and the CA that verifies the broker.
func clientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("MQTT client certificate: %w", err)
	}
	roots, err := cert.NewPool(caFile)
	if err != nil {
		return nil, fmt.Errorf("--mqtt-ca-file: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// agentBundleOptions are the flags of the agent-bundle subcommand.
type agentBundleOptions struct {
	dataDir, consumer, brokerURL, source, output string
}

// writeAgentBundle issues a maestro-agent's credentials for the embedded broker from the server's CA.
func (a *agentBundleOptions) writeAgentBundle() error {
	if a.consumer == "" {
		return errors.New("--consumer is required: the ManagementCluster name the agent serves")
	}
	// The consumer name is the common name of the agent's certificate and a segment of its topics: one
	// that no ManagementCluster may carry as spec.consumerName would issue credentials nobody can use.
	if errs := validation.ValidateConsumerName(a.consumer, field.NewPath("--consumer")); len(errs) > 0 {
		return fmt.Errorf("%w (it is the spec.consumerName of the ManagementCluster the agent serves)", errs.ToAggregate())
	}
	if a.output == "" {
		return errors.New("--output is required")
	}
	url := a.brokerURL
	if url == "" {
		raw, err := os.ReadFile(brokerURLFile(a.dataDir))
		if err != nil {
			return fmt.Errorf("no --broker-url, and no broker URL recorded by a server with --data-dir %s: %w", a.dataDir, err)
		}
		url = strings.TrimSpace(string(raw))
	}
	pki := newPKI(a.dataDir)
	creds := broker.AgentCredentials{CACertFile: pki.CACert, CAKeyFile: pki.CAKey, BrokerURL: url, Source: a.source}
	return creds.WriteAgentBundle(a.consumer, a.output)
}
