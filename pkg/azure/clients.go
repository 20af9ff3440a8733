package azure

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
)

// Clients are the service's Azure clients, sharing one credential and one transport.
type Clients struct {
	ResourceGroups *ResourceGroupsClient
	Identities     *IdentitiesClient
	DNS            *DNSClient
}

// retryOptions are the SDK's, which honour Retry-After on 429 and 503, with a bound on each wait
// so that a controller's sync is not held for minutes.
var retryOptions = policy.RetryOptions{
	MaxRetries:    4,
	RetryDelay:    time.Second,
	MaxRetryDelay: 30 * time.Second,
}

// NewClients builds the credential the configuration names and the clients that use it.
// It reads the credential's files now, so that a missing file fails at startup.
func NewClients(cfg *Config) (*Clients, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	transport, err := newTransport(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	cloudCfg, known := cfg.cloudConfiguration()
	clientOptions := policy.ClientOptions{
		Cloud:     cloudCfg,
		Transport: transport,
		Retry:     retryOptions,
		Telemetry: policy.TelemetryOptions{ApplicationID: cfg.UserAgent},
	}
	cred, err := newCredential(cfg, clientOptions, !known)
	if err != nil {
		return nil, err
	}
	armOptions := &arm.ClientOptions{ClientOptions: clientOptions}

	roles, err := armauthorization.NewRoleAssignmentsClient(cfg.SubscriptionID, cred, armOptions)
	if err != nil {
		return nil, err
	}
	dns, err := NewDNSClient(cred, armOptions)
	if err != nil {
		return nil, err
	}
	return &Clients{
		ResourceGroups: newResourceGroupsClient(cred, armOptions),
		Identities:     newIdentitiesClient(cred, armOptions, roles),
		DNS:            dns,
	}, nil
}

func newCredential(cfg *Config, opts azcore.ClientOptions, customCloud bool) (azcore.TokenCredential, error) {
	c := cfg.Credential
	// Instance discovery asks the public cloud's authority about the host; a cloud it does not
	// know, like a test's, would fail it.
	disableDiscovery := customCloud
	switch c.Kind {
	case WorkloadIdentity:
		return azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
			ClientOptions:            opts,
			ClientID:                 c.ClientID,
			TenantID:                 cfg.TenantID,
			TokenFilePath:            c.TokenFile,
			DisableInstanceDiscovery: disableDiscovery,
		})
	case ClientCertificate:
		data, err := os.ReadFile(c.CertificateFile)
		if err != nil {
			return nil, fmt.Errorf("credential.certificateFile: %w", err)
		}
		certs, key, err := azidentity.ParseCertificates(data, nil)
		if err != nil {
			return nil, fmt.Errorf("credential.certificateFile %s: %w", c.CertificateFile, err)
		}
		return azidentity.NewClientCertificateCredential(cfg.TenantID, c.ClientID, certs, key, &azidentity.ClientCertificateCredentialOptions{
			ClientOptions:            opts,
			DisableInstanceDiscovery: disableDiscovery,
			// Subject-name/issuer auth needs the chain; it does no harm when the thumbprint is registered.
			SendCertificateChain: true,
		})
	case ClientSecret:
		data, err := os.ReadFile(c.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("credential.secretFile: %w", err)
		}
		secret := string(trimNewline(data))
		if secret == "" {
			return nil, fmt.Errorf("credential.secretFile %s is empty", c.SecretFile)
		}
		return azidentity.NewClientSecretCredential(cfg.TenantID, c.ClientID, secret, &azidentity.ClientSecretCredentialOptions{
			ClientOptions:            opts,
			DisableInstanceDiscovery: disableDiscovery,
		})
	case ManagedIdentity:
		var id azidentity.ManagedIDKind
		if c.ClientID != "" {
			id = azidentity.ClientID(c.ClientID)
		}
		return azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{ClientOptions: opts, ID: id})
	}
	return nil, fmt.Errorf("credential.kind: unsupported %q", c.Kind)
}

// newTransport trusts the system's roots and, when given, caFile's too.
func newTransport(caFile string) (policy.Transporter, error) {
	if caFile == "" {
		return nil, nil // the SDK's default transport
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("caFile: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("caFile %s: no PEM certificate found", caFile)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
