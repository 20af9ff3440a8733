package azure

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Clouds the service knows by name; any other cloud is given by its endpoints.
const (
	AzurePublicCloud  = "AzurePublicCloud"
	AzureChinaCloud   = "AzureChinaCloud"
	AzureUSGovernment = "AzureUSGovernment"
)

// Kinds of credential the service can authenticate to Azure with.
const (
	WorkloadIdentity  = "WorkloadIdentity"
	ClientCertificate = "ClientCertificate"
	// ClientSecret is for development; production uses a certificate or an identity.
	ClientSecret    = "ClientSecret"
	ManagedIdentity = "ManagedIdentity"
)

// Config is the file that --azure-config names: where the service's Azure is and who it is there.
type Config struct {
	// Cloud names a public cloud. Leave it empty to give the endpoints below instead.
	Cloud string `json:"cloud,omitempty"`
	// ActiveDirectoryAuthorityHost, ResourceManagerEndpoint and ResourceManagerAudience describe a
	// cloud that has no name, such as a sovereign cloud or a test's stand-in.
	ActiveDirectoryAuthorityHost string `json:"activeDirectoryAuthorityHost,omitempty"`
	ResourceManagerEndpoint      string `json:"resourceManagerEndpoint,omitempty"`
	ResourceManagerAudience      string `json:"resourceManagerAudience,omitempty"`

	TenantID string `json:"tenantID"`
	// SubscriptionID is the service's own subscription, not a customer's.
	SubscriptionID string `json:"subscriptionID"`
	// DNSZoneResourceID is the service's regional DNS zone, which holds every cluster's records.
	DNSZoneResourceID string `json:"dnsZoneResourceID"`

	Credential Credential `json:"credential"`

	// CAFile adds a CA to the system's roots, so that tests can serve Azure over their own TLS.
	CAFile string `json:"caFile,omitempty"`
	// UserAgent is appended to the SDK's User-Agent, so Azure's logs show which service called.
	UserAgent string `json:"userAgent,omitempty"`
}

// Credential says how the service gets its tokens.
type Credential struct {
	Kind string `json:"kind"`
	// ClientID is the application or identity; optional for ManagedIdentity, which then uses the
	// machine's only identity.
	ClientID string `json:"clientID,omitempty"`
	// TokenFile holds the projected service-account token of WorkloadIdentity; it is re-read as it rotates.
	TokenFile string `json:"tokenFile,omitempty"`
	// CertificateFile holds the PEM certificate and its private key for ClientCertificate.
	CertificateFile string `json:"certificateFile,omitempty"`
	// SecretFile holds the client secret for ClientSecret; the secret stays out of the config itself.
	SecretFile string `json:"secretFile,omitempty"`
}

// Load reads and validates the configuration at path, in YAML or JSON. Unknown fields are errors
// so that a misspelt field fails at startup instead of being silently ignored.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading Azure configuration: %w", err)
	}
	// YAML is a superset of JSON, so one path reads both. The JSON decode is case-sensitive, as
	// kube's is: encoding/json would take subscriptionId for subscriptionID without a word.
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("decoding Azure configuration %s: %w", path, err)
	}
	cfg := &Config{}
	strictErrs, err := kjson.UnmarshalStrict(jsonData, cfg, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("decoding Azure configuration %s: %w", path, err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("decoding Azure configuration %s: %w", path, errors.Join(strictErrs...))
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid Azure configuration %s: %w", path, err)
	}
	return cfg, nil
}

// Validate reports every problem at once, each with its field path.
func (c *Config) Validate() error {
	var errs field.ErrorList
	custom := c.ActiveDirectoryAuthorityHost != "" || c.ResourceManagerEndpoint != "" || c.ResourceManagerAudience != ""
	switch {
	case c.Cloud != "" && custom:
		errs = append(errs, field.Invalid(field.NewPath("cloud"), c.Cloud,
			"give either a cloud's name or its endpoints (activeDirectoryAuthorityHost, resourceManagerEndpoint, resourceManagerAudience), not both"))
	case c.Cloud != "":
		if _, ok := namedClouds[c.Cloud]; !ok {
			errs = append(errs, field.NotSupported(field.NewPath("cloud"), c.Cloud, []string{AzurePublicCloud, AzureChinaCloud, AzureUSGovernment}))
		}
	case !custom:
		errs = append(errs, field.Required(field.NewPath("cloud"),
			"name a cloud or give its endpoints (activeDirectoryAuthorityHost, resourceManagerEndpoint, resourceManagerAudience)"))
	default:
		errs = append(errs, validateHTTPSURL(field.NewPath("activeDirectoryAuthorityHost"), c.ActiveDirectoryAuthorityHost)...)
		errs = append(errs, validateHTTPSURL(field.NewPath("resourceManagerEndpoint"), c.ResourceManagerEndpoint)...)
		if c.ResourceManagerAudience == "" {
			errs = append(errs, field.Required(field.NewPath("resourceManagerAudience"), "the audience of Resource Manager's tokens, such as https://management.core.windows.net/"))
		}
	}

	if c.TenantID == "" {
		errs = append(errs, field.Required(field.NewPath("tenantID"), "the service's Microsoft Entra tenant"))
	}
	if c.SubscriptionID == "" {
		errs = append(errs, field.Required(field.NewPath("subscriptionID"), "the service's own subscription"))
	}
	if c.DNSZoneResourceID == "" {
		errs = append(errs, field.Required(field.NewPath("dnsZoneResourceID"), "the resource ID of the service's regional DNS zone"))
	} else if _, err := parseZoneID(c.DNSZoneResourceID); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("dnsZoneResourceID"), c.DNSZoneResourceID, err.Error()))
	}
	errs = append(errs, c.Credential.validate(field.NewPath("credential"))...)
	return errs.ToAggregate()
}

func (c *Credential) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	requireClientID := func() {
		if c.ClientID == "" {
			errs = append(errs, field.Required(path.Child("clientID"), "the client ID of the application or identity"))
		}
	}
	// A file that the kind does not read is a mistake the operator should hear about.
	unused := func(name, value string) {
		if value != "" {
			errs = append(errs, field.Forbidden(path.Child(name), fmt.Sprintf("not read by kind %s", c.Kind)))
		}
	}
	switch c.Kind {
	case WorkloadIdentity:
		requireClientID()
		if c.TokenFile == "" {
			errs = append(errs, field.Required(path.Child("tokenFile"), "the projected service-account token"))
		}
		unused("certificateFile", c.CertificateFile)
		unused("secretFile", c.SecretFile)
	case ClientCertificate:
		requireClientID()
		if c.CertificateFile == "" {
			errs = append(errs, field.Required(path.Child("certificateFile"), "a PEM file with the certificate and its private key"))
		}
		unused("tokenFile", c.TokenFile)
		unused("secretFile", c.SecretFile)
	case ClientSecret:
		requireClientID()
		if c.SecretFile == "" {
			errs = append(errs, field.Required(path.Child("secretFile"), "a file that holds the client secret"))
		}
		unused("tokenFile", c.TokenFile)
		unused("certificateFile", c.CertificateFile)
	case ManagedIdentity:
		unused("tokenFile", c.TokenFile)
		unused("certificateFile", c.CertificateFile)
		unused("secretFile", c.SecretFile)
	case "":
		errs = append(errs, field.Required(path.Child("kind"), "one of WorkloadIdentity, ClientCertificate, ClientSecret, ManagedIdentity"))
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), c.Kind, []string{WorkloadIdentity, ClientCertificate, ClientSecret, ManagedIdentity}))
	}
	return errs
}

func validateHTTPSURL(path *field.Path, value string) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "an https URL")}
	}
	u, err := url.Parse(value)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		// The SDK refuses to send a bearer token over plain HTTP.
		return field.ErrorList{field.Invalid(path, value, "must be an https URL")}
	}
	return nil
}

var namedClouds = map[string]cloud.Configuration{
	AzurePublicCloud:  cloud.AzurePublic,
	AzureChinaCloud:   cloud.AzureChina,
	AzureUSGovernment: cloud.AzureGovernment,
}

// cloudConfiguration returns the SDK's description of the cloud, and whether it is one the SDK
// knows; instance discovery only works for those.
func (c *Config) cloudConfiguration() (cloud.Configuration, bool) {
	if named, ok := namedClouds[c.Cloud]; ok {
		return named, true
	}
	return cloud.Configuration{
		ActiveDirectoryAuthorityHost: c.ActiveDirectoryAuthorityHost,
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {
				Endpoint: c.ResourceManagerEndpoint,
				Audience: c.ResourceManagerAudience,
			},
		},
	}, false
}

// parseZoneID checks that id names a DNS zone, not merely any resource.
func parseZoneID(id string) (*arm.ResourceID, error) {
	rid, err := arm.ParseResourceID(id)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(rid.ResourceType.String(), "Microsoft.Network/dnszones") {
		return nil, fmt.Errorf("names a %s, not a Microsoft.Network/dnszones", rid.ResourceType.String())
	}
	if rid.SubscriptionID == "" || rid.ResourceGroupName == "" {
		return nil, fmt.Errorf("must name the zone's subscription and resource group")
	}
	return rid, nil
}

// DNSZoneName is the name of the service's regional zone, the domain the clusters' domains are made
// in; empty when DNSZoneResourceID names no zone.
func (c *Config) DNSZoneName() string {
	rid, err := parseZoneID(c.DNSZoneResourceID)
	if err != nil {
		return ""
	}
	return rid.Name
}
