// Package agentbundle is the file a maestro-agent needs to reach hcp-apiserver's embedded MQTT broker:
// where the broker is, the CA that signed its certificate, and the agent's own client certificate and key.
// hcp-apiserver writes it (broker.AgentCredentials); the agent loads it.
//
// It sits beside the broker, not inside it, because both binaries use it: the agent binary, which loads
// bundles but runs no broker, must not link the broker or the server's certificate authority. It imports
// only the standard library, sigs.k8s.io/yaml and pkg/maestro/protocol.
//
// The file is YAML, shaped like a kubeconfig: PEM data base64-encoded in *Data fields, and a private key
// in it, so it is written with mode 0600.
//
//	apiVersion: v1alpha1
//	kind: MaestroAgentBundle
//	brokerURL: mqtts://mqtt.example.com:8883   # mqtts only; the port defaults to 8883
//	source: hcp                                # the source ID the agent exchanges events with
//	consumer: mc-1                             # the agent's consumer name, and its certificate's CN
//	certificateAuthorityData: LS0tLS1CRUdJTi... # PEM CA certificate(s) that verify the broker
//	clientCertificateData: LS0tLS1CRUdJTi...    # PEM client certificate, CN=<consumer>, O=hcp:maestro-agent
//	clientKeyData: LS0tLS1CRUdJTi...            # PEM private key of the client certificate
package agentbundle

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// APIVersion and Kind identify the file format, so that a later format is told apart from this one.
const (
	APIVersion = "v1alpha1"
	Kind       = "MaestroAgentBundle"
)

// DefaultPort is the MQTT over TLS port, used when BrokerURL names none.
const DefaultPort = "8883"

// Bundle is the content of an agent bundle file.
type Bundle struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// BrokerURL is mqtts://host[:port].
	BrokerURL string `json:"brokerURL"`
	// Source is the source ID: the agent subscribes to sources/<source>/consumers/<consumer>/sourceevents
	// and publishes to sources/<source>/consumers/<consumer>/agentevents.
	Source string `json:"source"`
	// Consumer is the agent's consumer name (the ManagementCluster's consumerName) and the common name
	// of its client certificate: the broker grants topics by that name.
	Consumer string `json:"consumer"`
	// CertificateAuthorityData is PEM; it verifies the broker's serving certificate.
	CertificateAuthorityData []byte `json:"certificateAuthorityData"`
	// ClientCertificateData and ClientKeyData are PEM; the agent authenticates to the broker with them.
	ClientCertificateData []byte `json:"clientCertificateData"`
	ClientKeyData         []byte `json:"clientKeyData"`
}

// Load reads and validates the bundle in path.
func Load(path string) (*Bundle, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b := &Bundle{}
	if err := yaml.UnmarshalStrict(data, b); err != nil {
		return nil, fmt.Errorf("agent bundle %s: %w", path, err)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("agent bundle %s: %w", path, err)
	}
	return b, nil
}

// Write validates the bundle and writes it to path, readable by its owner only: it holds a private key.
// The file is replaced in one step, so an agent never reads half of it.
func (b *Bundle) Write(path string) error {
	if err := b.Validate(); err != nil {
		return err
	}
	data, err := yaml.Marshal(b)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600 already; a umask cannot widen it.
	return os.Rename(tmp.Name(), path)
}

// Validate checks that the bundle is complete and consistent: a known format, an mqtts URL, valid IDs,
// parseable PEM, and a client certificate issued to Consumer.
func (b *Bundle) Validate() error {
	if b.APIVersion != APIVersion || b.Kind != Kind {
		return fmt.Errorf("apiVersion %q, kind %q: want %q, %q", b.APIVersion, b.Kind, APIVersion, Kind)
	}
	if _, err := b.Address(); err != nil {
		return err
	}
	if err := protocol.ValidateID("source", b.Source); err != nil {
		return err
	}
	if err := protocol.ValidateID("consumer", b.Consumer); err != nil {
		return err
	}
	_, err := b.TLSConfig()
	return err
}

// Address returns the host:port to dial, from BrokerURL.
func (b *Bundle) Address() (string, error) {
	u, err := url.Parse(b.BrokerURL)
	if err != nil {
		return "", fmt.Errorf("brokerURL: %w", err)
	}
	if u.Scheme != "mqtts" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("brokerURL %q: want mqtts://host[:port]", b.BrokerURL)
	}
	port := u.Port()
	if port == "" {
		port = DefaultPort
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// TLSConfig returns the client TLS configuration: it trusts only the bundle's CA and presents the
// bundle's client certificate.
func (b *Bundle) TLSConfig() (*tls.Config, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.CertificateAuthorityData) {
		return nil, errors.New("certificateAuthorityData holds no PEM certificate")
	}
	pair, err := tls.X509KeyPair(b.ClientCertificateData, b.ClientKeyData)
	if err != nil {
		return nil, fmt.Errorf("clientCertificateData and clientKeyData: %w", err)
	}
	// The broker authorizes by the certificate's CN: one issued to another consumer would be
	// refused every topic, so say so here rather than at the first subscription.
	leaf := pair.Leaf // nil only under GODEBUG=x509keypairleaf=0
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("clientCertificateData: %w", err)
		}
	}
	if cn := leaf.Subject.CommonName; cn != b.Consumer {
		return nil, fmt.Errorf("client certificate is issued to %q, not to consumer %q", cn, b.Consumer)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		RootCAs:      roots,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
