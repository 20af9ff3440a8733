package conversion

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// ExternalAuthFromARM applies a PUT of an externalAuths resource to existing (nil on create) and
// returns the ExternalAuth to create or update. Every property of an external auth may change (none
// is create-only in any api-version, nor in the frontend's validation), so a PUT replaces the spec
// whole; the API checks the values (https issuer, audiences, clients, prefix policy) and names each
// field in error, which the shim turns back into ARM paths.
func ExternalAuthFromARM(req Request, existing *hcpv1alpha1.ExternalAuth) (*hcpv1alpha1.ExternalAuth, field.ErrorList) {
	obj, systemData, errs := parseRequest(req, names.KindExternalAuth)
	if len(errs) > 0 {
		return nil, errs
	}
	var in ExternalAuth
	if errs := decode(req.Body, &in); len(errs) > 0 {
		return nil, errs
	}
	externalAuthForVersion(req.APIVersion, &in)

	out := &hcpv1alpha1.ExternalAuth{ObjectMeta: newObjectMeta(obj)}
	if existing != nil {
		out = existing.DeepCopy()
		ensureAnnotations(&out.ObjectMeta)
	}
	mergeSystemData(out.Annotations, systemData)

	if in.Properties == nil {
		return nil, field.ErrorList{field.Required(pathProperties, "an external auth needs properties, with at least issuer and claim")}
	}
	// Read-only and ignored: provisioningState, condition, status.
	out.Spec = externalAuthSpecFromARM(in.Properties)
	out.Spec.ClusterName = obj.ClusterName
	return out, nil
}

func externalAuthSpecFromARM(in *ExternalAuthProperties) hcpv1alpha1.ExternalAuthSpec {
	var spec hcpv1alpha1.ExternalAuthSpec
	if is := in.Issuer; is != nil {
		spec.Issuer = hcpv1alpha1.TokenIssuer{URL: deref(is.URL), Audiences: nilIfEmpty(is.Audiences), CA: deref(is.CA)}
	}
	for _, c := range in.Clients {
		client := hcpv1alpha1.ExternalAuthClient{
			ClientID:    deref(c.ClientID),
			ExtraScopes: nilIfEmpty(c.ExtraScopes),
			Type:        hcpv1alpha1.ExternalAuthClientType(deref(c.Type)),
		}
		if comp := c.Component; comp != nil {
			client.Component = hcpv1alpha1.ExternalAuthClientComponent{Name: deref(comp.Name), AuthClientNamespace: deref(comp.AuthClientNamespace)}
		}
		spec.Clients = append(spec.Clients, client)
	}
	if cl := in.Claim; cl != nil {
		if m := cl.Mappings; m != nil {
			if u := m.Username; u != nil {
				spec.Claim.Mappings.Username = hcpv1alpha1.UsernameClaim{
					Claim:        deref(u.Claim),
					Prefix:       deref(u.Prefix),
					PrefixPolicy: hcpv1alpha1.UsernamePrefixPolicy(deref(u.PrefixPolicy)),
				}
			}
			if g := m.Groups; g != nil {
				spec.Claim.Mappings.Groups = &hcpv1alpha1.GroupsClaim{Claim: deref(g.Claim), Prefix: deref(g.Prefix)}
			}
		}
		for _, r := range cl.ValidationRules {
			rule := hcpv1alpha1.TokenClaimValidationRule{Type: hcpv1alpha1.TokenValidationRuleType(deref(r.Type))}
			if rc := r.RequiredClaim; rc != nil {
				rule.RequiredClaim = hcpv1alpha1.TokenRequiredClaim{Claim: deref(rc.Claim), RequiredValue: deref(rc.RequiredValue)}
			}
			spec.Claim.ValidationRules = append(spec.Claim.ValidationRules, rule)
		}
	}
	return spec
}

// nilIfEmpty stores an empty list as none, which is how a response shows it.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
