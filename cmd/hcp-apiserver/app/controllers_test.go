package app

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/errors"

	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// The service's settings reach rendering and the addresses a new cluster is stored with, and settings that
// would make every cluster undeliverable stop the server at start.
func TestServiceSettingsFlags(t *testing.T) {
	o := &ControllerOptions{Environment: "prod", DNSZone: "hcp.contoso.example", OIDCIssuerBaseURL: "https://issuer.contoso.example",
		ManagedIdentitiesKeyVault: "mi-vault", ManagedIdentitiesTenantID: "7d3e9f1a-2b3c-4d5e-9f0a-1b2c3d4e5f6a",
		CreateDeadline: time.Hour, BreakglassIssueTimeout: time.Minute, BreakglassRetention: time.Hour, ARMOperationRetention: time.Hour,
		AzureRecheckInterval: time.Minute}
	if errs := o.Validate(); len(errs) > 0 {
		t.Fatalf("valid settings refused: %v", errs)
	}
	want := render.Options{Environment: "prod", DNSZone: "hcp.contoso.example", OIDCIssuerBaseURL: "https://issuer.contoso.example",
		ManagedIdentitiesKeyVault: "mi-vault", ManagedIdentitiesTenantID: "7d3e9f1a-2b3c-4d5e-9f0a-1b2c3d4e5f6a"}
	got := o.serviceOptions()
	if got.Environment != want.Environment || got.DNSZone != want.DNSZone || got.OIDCIssuerBaseURL != want.OIDCIssuerBaseURL ||
		got.ManagedIdentitiesKeyVault != want.ManagedIdentitiesKeyVault || got.ManagedIdentitiesTenantID != want.ManagedIdentitiesTenantID {
		t.Errorf("service options %+v, want %+v", got, want)
	}
	a, err := render.AddressesOf("0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "dev", "eastus", got)
	if err != nil || !strings.HasSuffix(a.API, ".eastus.hcp.contoso.example:443") || a.Issuer != "https://issuer.contoso.example/0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" {
		t.Errorf("addresses %+v (%v), want them in hcp.contoso.example and under the issuer base URL", a, err)
	}

	o.DNSZone, o.OIDCIssuerBaseURL, o.ManagedIdentitiesTenantID = "Not_A_Zone", "http://issuer", "contoso"
	msg := errors.NewAggregate(o.Validate()).Error()
	for _, flag := range []string{"--dns-zone", "--oidc-issuer-base-url", "--managed-identities-tenant-id"} {
		if !strings.Contains(msg, flag) {
			t.Errorf("the refusal %q does not name %s", msg, flag)
		}
	}
}
