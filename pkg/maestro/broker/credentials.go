package broker

import (
	"crypto/tls"
	"fmt"
	"os"

	"k8s.io/client-go/util/cert"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// ServerTLS is the TLS configuration of the embedded broker: it serves the certificate in certFile and
// keyFile (the server's serving certificate does, when it covers the host agents dial) and admits the
// clients with a certificate from the CA in caCertFile.
func ServerTLS(caCertFile, certFile, keyFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("MQTT broker serving certificate: %w", err)
	}
	cas, err := cert.NewPool(caCertFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientCAs:    cas,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// SourceTLS is the client TLS configuration with which hcp-apiserver, as the source named source,
// connects to its embedded broker: a new certificate in SourceGroup from the CA in caCertFile and
// caKeyFile, kept in memory only, and that CA to verify the broker.
func SourceTLS(caCertFile, caKeyFile, source string) (*tls.Config, error) {
	if err := protocol.ValidateID("source", source); err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := standalone.IssueClientCertificate(caCertFile, caKeyFile, source, []string{SourceGroup})
	if err != nil {
		return nil, fmt.Errorf("issuing the MQTT client certificate of source %q: %w", source, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	roots, err := cert.NewPool(caCertFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		RootCAs:      roots,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// AgentCredentials issues the bundles with which maestro-agents connect to the embedded broker: a client
// certificate in AgentGroup for the agent's consumer name, from the server's CA, with the broker's URL and
// the CA that verifies it. The file format is described in package agentbundle.
type AgentCredentials struct {
	// CACertFile and CAKeyFile are the server's CA (<data-dir>/pki/ca.crt and ca.key in standalone mode);
	// it also signed the broker's serving certificate.
	CACertFile, CAKeyFile string
	// BrokerURL is where agents reach the broker: mqtts://host:port, a host its certificate covers.
	BrokerURL string
	// Source is the server's source ID.
	Source string
}

// Issue returns a new bundle for the agent of consumer.
func (c AgentCredentials) Issue(consumer string) (*agentbundle.Bundle, error) {
	if err := protocol.ValidateID("consumer", consumer); err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(c.CACertFile)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := standalone.IssueClientCertificate(c.CACertFile, c.CAKeyFile, consumer, []string{AgentGroup})
	if err != nil {
		return nil, fmt.Errorf("issuing the MQTT client certificate of consumer %q: %w", consumer, err)
	}
	b := &agentbundle.Bundle{
		APIVersion:               agentbundle.APIVersion,
		Kind:                     agentbundle.Kind,
		BrokerURL:                c.BrokerURL,
		Source:                   c.Source,
		Consumer:                 consumer,
		CertificateAuthorityData: caPEM,
		ClientCertificateData:    certPEM,
		ClientKeyData:            keyPEM,
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// WriteAgentBundle issues a bundle for the agent of consumer and writes it to outPath (mode 0600).
func (c AgentCredentials) WriteAgentBundle(consumer, outPath string) error {
	b, err := c.Issue(consumer)
	if err != nil {
		return err
	}
	return b.Write(outPath)
}
