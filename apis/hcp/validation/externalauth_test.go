package validation

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// validExternalAuth is a defaulted external auth that sets every optional field.
func validExternalAuth(t *testing.T) *hcp.ExternalAuth {
	return &hcp.ExternalAuth{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cluster.entra", Namespace: "team-a", ResourceVersion: "1"},
		Spec: hcp.ExternalAuthSpec{
			ClusterName: "my-cluster",
			Issuer: hcp.TokenIssuer{
				URL:       "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000001/v2.0",
				Audiences: []string{"console-app", "cli-app"},
				CA:        certificatePEM(t),
			},
			Clients: []hcp.ExternalAuthClient{
				{Component: hcp.ExternalAuthClientComponent{Name: "console", AuthClientNamespace: "openshift-console"},
					ClientID: "console-app", ExtraScopes: []string{"email"}, Type: hcp.ExternalAuthClientConfidential},
				{Component: hcp.ExternalAuthClientComponent{Name: "cli", AuthClientNamespace: "openshift-console"},
					ClientID: "cli-app", Type: hcp.ExternalAuthClientPublic},
			},
			Claim: hcp.ExternalAuthClaim{
				Mappings: hcp.TokenClaimMappings{
					Username: hcp.UsernameClaim{Claim: "email", Prefix: "entra:", PrefixPolicy: hcp.UsernamePrefixPolicyPrefix},
					Groups:   &hcp.GroupsClaim{Claim: "groups", Prefix: "entra:"},
				},
				ValidationRules: []hcp.TokenClaimValidationRule{{Type: hcp.TokenValidationRuleRequiredClaim,
					RequiredClaim: hcp.TokenRequiredClaim{Claim: "tid", RequiredValue: "00000000-0000-0000-0000-000000000001"}}},
			},
		},
	}
}

func TestValidateExternalAuth(t *testing.T) {
	if errs := ValidateExternalAuth(validExternalAuth(t)); len(errs) != 0 {
		t.Fatalf("a valid external auth was refused: %v", errs)
	}
	tests := []struct {
		name   string
		mutate func(*hcp.ExternalAuth)
		// want are the field errors, as "path: message fragment", in order.
		want []string
	}{
		{"name of another cluster", func(ea *hcp.ExternalAuth) { ea.Name = "other.entra" },
			[]string{`metadata.name: Invalid value: "other.entra": must be <external auth> or <spec.clusterName>.<external auth>, and spec.clusterName is "my-cluster"`}},
		{"name too long for ARM", func(ea *hcp.ExternalAuth) { ea.Name = "my-cluster.entra-id-provider-1" },
			[]string{"metadata.name: Invalid value: \"my-cluster.entra-id-provider-1\": the external auth name must be 1 to 15"}},
		{"http issuer", func(ea *hcp.ExternalAuth) { ea.Spec.Issuer.URL = "http://idp.example.com" },
			[]string{"spec.issuer.url: Invalid value: \"http://idp.example.com\": must be an https URL"}},
		{"no issuer", func(ea *hcp.ExternalAuth) { ea.Spec.Issuer.URL = "" },
			[]string{"spec.issuer.url: Required value: must be an https URL"}},
		{"no audiences", func(ea *hcp.ExternalAuth) { ea.Spec.Issuer.Audiences = nil; ea.Spec.Clients = nil },
			[]string{"spec.issuer.audiences: Required value: must have 1 to 10 audiences"}},
		{"eleven audiences", func(ea *hcp.ExternalAuth) {
			ea.Spec.Issuer.Audiences = nil
			for i := range 11 {
				ea.Spec.Issuer.Audiences = append(ea.Spec.Issuer.Audiences, fmt.Sprintf("app-%d", i))
			}
			ea.Spec.Clients = nil
		}, []string{"spec.issuer.audiences: Too many: 11: must have at most 10 items"}},
		{"duplicate and empty audience", func(ea *hcp.ExternalAuth) {
			ea.Spec.Issuer.Audiences = append(ea.Spec.Issuer.Audiences, "cli-app", "")
		}, []string{`spec.issuer.audiences[2]: Duplicate value: "cli-app"`, "spec.issuer.audiences[3]: Required value: must not be empty"}},
		{"CA that is not PEM", func(ea *hcp.ExternalAuth) { ea.Spec.Issuer.CA = "not a certificate" },
			[]string{`spec.issuer.ca: Invalid value: must be PEM blocks of type "CERTIFICATE"`}},
		{"duplicate client component", func(ea *hcp.ExternalAuth) { ea.Spec.Clients[1].Component.Name = "console" },
			[]string{`spec.clients[1].component: Duplicate value: "openshift-console/console"`}},
		{"client not among the audiences", func(ea *hcp.ExternalAuth) { ea.Spec.Clients[0].ClientID = "other-app" },
			[]string{`spec.clients[0].clientID: Invalid value: "other-app": must be one of the issuer's audiences: "console-app", "cli-app"`}},
		{"client without type and component", func(ea *hcp.ExternalAuth) {
			ea.Spec.Clients[0].Type = ""
			ea.Spec.Clients[0].Component = hcp.ExternalAuthClientComponent{}
		}, []string{"spec.clients[0].component.name: Required value", "spec.clients[0].component.authClientNamespace: Required value",
			`spec.clients[0].type: Required value: must be one of "Confidential", "Public"`}},
		{"component namespace too long", func(ea *hcp.ExternalAuth) {
			ea.Spec.Clients[0].Component.AuthClientNamespace = strings.Repeat("n", 64)
		}, []string{"spec.clients[0].component.authClientNamespace: Too long: may not be more than 63 bytes"}},
		{"21 clients", func(ea *hcp.ExternalAuth) {
			ea.Spec.Clients = nil
			for i := range 21 {
				ea.Spec.Clients = append(ea.Spec.Clients, hcp.ExternalAuthClient{Component: hcp.ExternalAuthClientComponent{
					Name: fmt.Sprintf("c%d", i), AuthClientNamespace: "ns"}, ClientID: "cli-app", Type: hcp.ExternalAuthClientPublic})
			}
		}, []string{"spec.clients: Too many: 21: must have at most 20 items"}},
		{"prefix without the Prefix policy", func(ea *hcp.ExternalAuth) {
			ea.Spec.Claim.Mappings.Username.PrefixPolicy = hcp.UsernamePrefixPolicyNone
		}, []string{`spec.claim.mappings.username.prefix: Invalid value: "entra:": may only be set when prefixPolicy is Prefix, not "None"`}},
		{"Prefix policy without prefix", func(ea *hcp.ExternalAuth) { ea.Spec.Claim.Mappings.Username.Prefix = "" },
			[]string{"spec.claim.mappings.username.prefix: Required value: must be set when prefixPolicy is Prefix"}},
		{"unknown prefix policy and no claim", func(ea *hcp.ExternalAuth) {
			ea.Spec.Claim.Mappings.Username = hcp.UsernameClaim{PrefixPolicy: "Always"}
		}, []string{"spec.claim.mappings.username.claim: Required value", `spec.claim.mappings.username.prefixPolicy: Unsupported value: "Always"`}},
		{"groups without claim", func(ea *hcp.ExternalAuth) { ea.Spec.Claim.Mappings.Groups.Claim = "" },
			[]string{"spec.claim.mappings.groups.claim: Required value"}},
		{"empty validation rule", func(ea *hcp.ExternalAuth) {
			ea.Spec.Claim.ValidationRules[0] = hcp.TokenClaimValidationRule{Type: "Regex"}
		}, []string{`spec.claim.validationRules[0].type: Unsupported value: "Regex"`,
			"spec.claim.validationRules[0].requiredClaim.claim: Required value", "spec.claim.validationRules[0].requiredClaim.requiredValue: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ea := validExternalAuth(t)
			tt.mutate(ea)
			errs := ValidateExternalAuth(ea)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tt.want), errs)
			}
			for i, want := range tt.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d is %q, want it to contain %q", i, errs[i].Error(), want)
				}
			}
		})
	}
}

func TestValidateExternalAuthUpdate(t *testing.T) {
	old := validExternalAuth(t)
	changed := old.DeepCopy()
	changed.Spec.Issuer.URL = "https://idp.example.com"
	changed.Spec.Clients = nil
	changed.Spec.Claim.Mappings.Groups = nil
	if errs := ValidateExternalAuthUpdate(changed, old); len(errs) != 0 {
		t.Errorf("issuer, clients and claims may change, as in ARM: %v", errs)
	}
	moved := old.DeepCopy()
	moved.Spec.ClusterName = "other"
	moved.Name = "other.entra"
	errs := ValidateExternalAuthUpdate(moved, old)
	if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "spec.clusterName: Invalid value: \"other\": field is immutable") {
		t.Errorf("moving an external auth to another cluster: %v", errs)
	}
}

func TestValidateExternalAuthStatusUpdate(t *testing.T) {
	old := validExternalAuth(t)
	awaiting := old.DeepCopy()
	awaiting.Status.ProvisioningState = hcp.ProvisioningStateAwaitingSecret
	if errs := ValidateExternalAuthStatusUpdate(awaiting, old); len(errs) != 0 {
		t.Errorf("AwaitingSecret is an external auth's state: %v", errs)
	}
	awaiting.Status.ProvisioningState = "Waiting"
	if errs := ValidateExternalAuthStatusUpdate(awaiting, old); len(errs) != 1 {
		t.Errorf("an unknown state is refused: %v", errs)
	}
}
