package conversion

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// ExternalAuthToARM returns the ARM body of ea in api-version v. Its state is the status's
// provisioningState (AwaitingSecret included) and conditions: all of them as status.conditions from
// 2026-06-30-preview, the one that says most as condition before.
func ExternalAuthToARM(v APIVersion, ea *hcpv1alpha1.ExternalAuth) (*ExternalAuth, error) {
	if _, err := ParseAPIVersion(string(v)); err != nil {
		return nil, err
	}
	armName, err := names.FromAnnotations(ea.Annotations)
	if err != nil {
		return nil, err
	}
	spec := &ea.Spec
	p := &ExternalAuthProperties{
		ProvisioningState: nonEmpty(string(ea.Status.ProvisioningState)),
		Issuer: &TokenIssuerProfile{
			URL:       &spec.Issuer.URL,
			Audiences: spec.Issuer.Audiences,
			CA:        nonEmpty(spec.Issuer.CA),
		},
		Claim: &ExternalAuthClaimProfile{
			Mappings: &TokenClaimMappingsProfile{
				Username: &UsernameClaimProfile{
					Claim:        &spec.Claim.Mappings.Username.Claim,
					Prefix:       nonEmpty(spec.Claim.Mappings.Username.Prefix),
					PrefixPolicy: nonEmpty(string(spec.Claim.Mappings.Username.PrefixPolicy)),
				},
			},
		},
	}
	if s := statusToARM(ea.Status.Conditions, nil); s != nil {
		p.Status = s
		p.Condition = mostTelling(s.Conditions)
	}
	if g := spec.Claim.Mappings.Groups; g != nil {
		p.Claim.Mappings.Groups = &GroupClaimProfile{Claim: &g.Claim, Prefix: nonEmpty(g.Prefix)}
	}
	for _, r := range spec.Claim.ValidationRules {
		p.Claim.ValidationRules = append(p.Claim.ValidationRules, TokenClaimValidationRule{
			Type:          nonEmpty(string(r.Type)),
			RequiredClaim: &TokenRequiredClaim{Claim: &r.RequiredClaim.Claim, RequiredValue: &r.RequiredClaim.RequiredValue},
		})
	}
	for _, c := range spec.Clients {
		p.Clients = append(p.Clients, ExternalAuthClientProfile{
			Component:   &ExternalAuthClientComponentProfile{Name: &c.Component.Name, AuthClientNamespace: &c.Component.AuthClientNamespace},
			ClientID:    &c.ClientID,
			ExtraScopes: c.ExtraScopes,
			Type:        nonEmpty(string(c.Type)),
		})
	}
	out := &ExternalAuth{
		ID:         &armName.ID,
		Name:       &armName.Name,
		Type:       &armName.Type,
		SystemData: systemDataFrom(ea.Annotations),
		Properties: p,
	}
	externalAuthForVersion(v, out)
	return out, nil
}

// mostTelling picks the condition an api-version with room for one shows: what is wrong (Degraded,
// then Available not true, which is where a missing client secret is told) before what is under
// way (Progressing), and Available when all is well.
func mostTelling(conditions []Condition) *Condition {
	find := func(t string, want func(status string) bool) *Condition {
		for i := range conditions {
			if conditions[i].Type == t && want(conditions[i].Status) {
				c := conditions[i]
				return &c
			}
		}
		return nil
	}
	isTrue := func(s string) bool { return s == string(metav1.ConditionTrue) }
	notTrue := func(s string) bool { return !isTrue(s) }
	anyStatus := func(string) bool { return true }
	for _, pick := range []func() *Condition{
		func() *Condition { return find(hcpv1alpha1.ConditionDegraded, isTrue) },
		func() *Condition { return find(hcpv1alpha1.ConditionAvailable, notTrue) },
		func() *Condition { return find(hcpv1alpha1.ConditionProgressing, isTrue) },
		func() *Condition { return find(hcpv1alpha1.ConditionAvailable, anyStatus) },
	} {
		if c := pick(); c != nil {
			return c
		}
	}
	return &conditions[0]
}
