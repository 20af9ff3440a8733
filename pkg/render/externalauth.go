package render

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

const (
	// ExternalAuthAnnotation on a HostedCluster is "<UID>/<generation>" of the ExternalAuth its
	// spec.configuration.authentication was rendered from; absent when the cluster signs users in
	// with its built-in OAuth server. Read back as applied (FeedbackExternalAuth), it tells which
	// generation of the ExternalAuth the management cluster holds.
	ExternalAuthAnnotation = "hcp.aro.azure.com/external-auth"

	// IssuerCAKey is the key of the ConfigMap that holds the PEM of an issuer's certificate
	// authorities, where the hosted cluster's API server reads it.
	IssuerCAKey = "ca-bundle.crt"
)

// The limits of the OIDC configuration in HyperShift's HostedCluster CRD (config/v1 of openshift/api).
const (
	maxAudiences     = 10
	maxOIDCClients   = 20
	maxClaimLength   = 256
	maxComponentName = 256
	maxIssuerURL     = 512
)

// externalAuthName is the ARM name of an external auth, without the "<cluster>." its own name starts
// with; it names the OIDC provider.
func externalAuthName(ea *v1alpha1.ExternalAuth) string {
	if rest, ok := strings.CutPrefix(ea.Name, ea.Spec.ClusterName+"."); ok {
		return rest
	}
	return ea.Name
}

// ClientSecretName is the Secret that holds the secret of a confidential client of ea: empty in the
// HostedCluster's namespace (HyperShift's hosted-cluster-sourced stand-in), and created by the
// customer, with the key clientSecret, in the namespace openshift-config of the hosted cluster. It is
// <external auth>.<component namespace>.<component name>, each part lower case with every character
// other than a letter, digit or '-' made a '-' and then, if that changed it, ending in a hash of what
// it was; a name longer than 63 characters is cut and ends in a hash of the whole. So it is a valid
// Secret name (a DNS-1123 subdomain), two clients never share one, and it depends on the ARM name of
// ea and the client's component only.
func ClientSecretName(ea *v1alpha1.ExternalAuth, client v1alpha1.ExternalAuthClient) string {
	name := nameLabel(externalAuthName(ea)) + "." + nameLabel(client.Component.AuthClientNamespace) + "." + nameLabel(client.Component.Name)
	return shorten(name, validation.DNS1123LabelMaxLength)
}

// issuerCAName is the ConfigMap, in the HostedCluster's namespace, that holds ea's issuer CA.
func issuerCAName(ea *v1alpha1.ExternalAuth) string {
	return shorten(nameLabel(externalAuthName(ea))+"-issuer-ca", validation.DNS1123LabelMaxLength)
}

// nameLabel makes raw a DNS label's characters: lower case, any other character a '-', with a hash
// of raw at the end when that changed it.
func nameLabel(raw string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(raw) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	label := strings.Trim(b.String(), "-")
	if label == raw {
		return label
	}
	if label == "" {
		return hash(raw)
	}
	return label + "-" + hash(raw)
}

// externalAuthConfig is what an external auth adds to a cluster's bundle.
type externalAuthConfig struct {
	authentication *configv1.AuthenticationSpec
	annotation     string
	// caConfigMap and clientSecrets live in the HostedCluster's namespace; HyperShift copies them into
	// the hosted cluster's openshift-config (the secrets only as placeholders: see ClientSecretName).
	caConfigMap   *corev1.ConfigMap
	clientSecrets []*corev1.Secret
}

// externalAuth renders ea for cluster c: nil when ea is nil. Errors name ea's fields under
// "externalAuth".
func externalAuth(c *v1alpha1.HCPCluster, ea *v1alpha1.ExternalAuth, meta metav1.ObjectMeta) (*externalAuthConfig, field.ErrorList) {
	if ea == nil {
		return nil, nil
	}
	root := field.NewPath("externalAuth")
	specPath := root.Child("spec")
	spec := &ea.Spec
	var errs field.ErrorList
	if ea.Namespace != c.Namespace || spec.ClusterName != c.Name {
		errs = append(errs, field.Invalid(specPath.Child("clusterName"), spec.ClusterName,
			fmt.Sprintf("the external auth %s/%s is rendered with the cluster %s/%s, which is not its own", ea.Namespace, ea.Name, c.Namespace, c.Name)))
	}
	if ea.UID == "" {
		errs = append(errs, field.Required(root.Child("metadata", "uid"), "the API assigns it on create; render once it is set"))
	}

	name := externalAuthName(ea)
	provider := configv1.OIDCProvider{Name: name}
	issuer, issuerErrs := tokenIssuer(spec.Issuer, specPath.Child("issuer"))
	provider.Issuer = issuer
	errs = append(errs, issuerErrs...)
	mappings, mappingErrs := claimMappings(spec.Claim.Mappings, specPath.Child("claim", "mappings"))
	provider.ClaimMappings = mappings
	errs = append(errs, mappingErrs...)
	rules, ruleErrs := claimValidationRules(spec.Claim.ValidationRules, specPath.Child("claim", "validationRules"))
	provider.ClaimValidationRules = rules
	errs = append(errs, ruleErrs...)

	out := &externalAuthConfig{annotation: string(ea.UID) + "/" + strconv.FormatInt(ea.Generation, 10)}
	clientsPath := specPath.Child("clients")
	if len(spec.Clients) > maxOIDCClients {
		errs = append(errs, field.TooMany(clientsPath, len(spec.Clients), maxOIDCClients))
	}
	components := sets.New[string]()
	for i, client := range spec.Clients {
		p := clientsPath.Index(i)
		errs = append(errs, checkClient(client, p)...)
		key := client.Component.AuthClientNamespace + "/" + client.Component.Name
		if components.Has(key) {
			errs = append(errs, field.Duplicate(p.Child("component"), key))
		}
		components.Insert(key)
		cfg := configv1.OIDCClientConfig{
			ComponentName:      client.Component.Name,
			ComponentNamespace: client.Component.AuthClientNamespace,
			ClientID:           client.ClientID,
			ExtraScopes:        append([]string(nil), client.ExtraScopes...),
		}
		if client.Type == v1alpha1.ExternalAuthClientConfidential {
			secret := &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: *meta.DeepCopy(),
			}
			secret.Name = ClientSecretName(ea, client)
			secret.Annotations = map[string]string{hyperv1.HostedClusterSourcedAnnotation: "true"}
			out.clientSecrets = append(out.clientSecrets, secret)
			cfg.ClientSecret = configv1.SecretNameReference{Name: secret.Name}
		}
		provider.OIDCClients = append(provider.OIDCClients, cfg)
	}

	if spec.Issuer.CA != "" {
		out.caConfigMap = &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: *meta.DeepCopy(),
			Data:       map[string]string{IssuerCAKey: spec.Issuer.CA},
		}
		out.caConfigMap.Name = issuerCAName(ea)
		provider.Issuer.CertificateAuthority = configv1.ConfigMapNameReference{Name: out.caConfigMap.Name}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	out.authentication = &configv1.AuthenticationSpec{
		Type:          configv1.AuthenticationTypeOIDC,
		OIDCProviders: []configv1.OIDCProvider{provider},
	}
	return out, nil
}

func tokenIssuer(in v1alpha1.TokenIssuer, p *field.Path) (configv1.TokenIssuer, field.ErrorList) {
	var errs field.ErrorList
	if msg := checkIssuerURL(in.URL); msg != "" {
		errs = append(errs, field.Invalid(p.Child("url"), in.URL, msg))
	}
	audiencesPath := p.Child("audiences")
	switch n := len(in.Audiences); {
	case n == 0:
		errs = append(errs, field.Required(audiencesPath, "at least one audience, the client ID tokens are issued to"))
	case n > maxAudiences:
		errs = append(errs, field.TooMany(audiencesPath, n, maxAudiences))
	}
	out := configv1.TokenIssuer{URL: in.URL}
	seen := sets.New[string]()
	for i, a := range in.Audiences {
		switch {
		case a == "":
			errs = append(errs, field.Required(audiencesPath.Index(i), "an audience is a client ID"))
		case seen.Has(a):
			errs = append(errs, field.Duplicate(audiencesPath.Index(i), a))
		}
		seen.Insert(a)
		out.Audiences = append(out.Audiences, configv1.TokenAudience(a))
	}
	if in.CA != "" && !hasCertificate(in.CA) {
		errs = append(errs, field.Invalid(p.Child("ca"), field.OmitValueType{},
			"must be PEM with at least one CERTIFICATE block: the certificate authorities the issuer's serving certificate chains to"))
	}
	return out, errs
}

// checkIssuerURL says what is wrong with an issuer URL for the hosted cluster's API server, or "".
func checkIssuerURL(s string) string {
	if s == "" {
		return "the issuer's https URL, as the tokens' iss claim names it"
	}
	if len(s) > maxIssuerURL {
		return fmt.Sprintf("must be at most %d characters", maxIssuerURL)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "":
		return "must be an absolute URL such as https://login.example.com/tenant/v2.0"
	case u.Scheme != "https":
		return "must use the https scheme"
	case u.RawQuery != "" || u.ForceQuery:
		return "must not have a query"
	case strings.Contains(s, "#"):
		return "must not have a fragment"
	case u.User != nil || strings.Contains(s, "@"):
		return "must not have user info"
	}
	return ""
}

func hasCertificate(data string) bool {
	rest := []byte(data)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" {
			return true
		}
	}
}

func checkClient(client v1alpha1.ExternalAuthClient, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	component := p.Child("component")
	if n := len(client.Component.Name); n == 0 || n > maxComponentName {
		errs = append(errs, field.Invalid(component.Child("name"), client.Component.Name,
			fmt.Sprintf("must be 1 to %d characters: the platform component, such as console", maxComponentName)))
	}
	for _, msg := range validation.IsDNS1123Label(client.Component.AuthClientNamespace) {
		errs = append(errs, field.Invalid(component.Child("authClientNamespace"), client.Component.AuthClientNamespace, msg))
	}
	if client.ClientID == "" {
		errs = append(errs, field.Required(p.Child("clientID"), "the component's client ID at the identity provider"))
	}
	scopes := sets.New[string]()
	for i, s := range client.ExtraScopes {
		if scopes.Has(s) {
			errs = append(errs, field.Duplicate(p.Child("extraScopes").Index(i), s))
		}
		scopes.Insert(s)
	}
	switch client.Type {
	case v1alpha1.ExternalAuthClientConfidential, v1alpha1.ExternalAuthClientPublic:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), client.Type,
			[]v1alpha1.ExternalAuthClientType{v1alpha1.ExternalAuthClientConfidential, v1alpha1.ExternalAuthClientPublic}))
	}
	return errs
}

// claimMappings maps the username's prefix policy to configv1's: None (or none given) is configv1's
// NoOpinion, which leaves the prefix to the platform.
func claimMappings(in v1alpha1.TokenClaimMappings, p *field.Path) (configv1.TokenClaimMappings, field.ErrorList) {
	var errs field.ErrorList
	username := p.Child("username")
	out := configv1.TokenClaimMappings{Username: configv1.UsernameClaimMapping{Claim: in.Username.Claim}}
	if n := len(in.Username.Claim); n == 0 || n > maxClaimLength {
		errs = append(errs, field.Invalid(username.Child("claim"), in.Username.Claim,
			fmt.Sprintf("must be 1 to %d characters: the claim that names the user, such as email or sub", maxClaimLength)))
	}
	switch in.Username.PrefixPolicy {
	case "", v1alpha1.UsernamePrefixPolicyNone:
		out.Username.PrefixPolicy = configv1.NoOpinion
	case v1alpha1.UsernamePrefixPolicyNoPrefix:
		out.Username.PrefixPolicy = configv1.NoPrefix
	case v1alpha1.UsernamePrefixPolicyPrefix:
		out.Username.PrefixPolicy = configv1.Prefix
		if in.Username.Prefix == "" {
			errs = append(errs, field.Required(username.Child("prefix"), "the prefix put before every user name, with prefixPolicy Prefix"))
		}
		out.Username.Prefix = &configv1.UsernamePrefix{PrefixString: in.Username.Prefix}
	default:
		errs = append(errs, field.NotSupported(username.Child("prefixPolicy"), in.Username.PrefixPolicy, []v1alpha1.UsernamePrefixPolicy{
			v1alpha1.UsernamePrefixPolicyNone, v1alpha1.UsernamePrefixPolicyPrefix, v1alpha1.UsernamePrefixPolicyNoPrefix}))
	}
	if in.Username.Prefix != "" && in.Username.PrefixPolicy != v1alpha1.UsernamePrefixPolicyPrefix {
		errs = append(errs, field.Invalid(username.Child("prefix"), in.Username.Prefix, "set a prefix only with prefixPolicy Prefix"))
	}
	if g := in.Groups; g != nil {
		if len(g.Claim) > maxClaimLength {
			errs = append(errs, field.TooLong(p.Child("groups", "claim"), g.Claim, maxClaimLength))
		}
		out.Groups = configv1.PrefixedClaimMapping{TokenClaimMapping: configv1.TokenClaimMapping{Claim: g.Claim}, Prefix: g.Prefix}
	}
	return out, errs
}

func claimValidationRules(in []v1alpha1.TokenClaimValidationRule, p *field.Path) ([]configv1.TokenClaimValidationRule, field.ErrorList) {
	var errs field.ErrorList
	var out []configv1.TokenClaimValidationRule
	for i, r := range in {
		rp := p.Index(i)
		if r.Type != "" && r.Type != v1alpha1.TokenValidationRuleRequiredClaim {
			errs = append(errs, field.NotSupported(rp.Child("type"), r.Type, []v1alpha1.TokenValidationRuleType{v1alpha1.TokenValidationRuleRequiredClaim}))
		}
		if r.RequiredClaim.Claim == "" {
			errs = append(errs, field.Required(rp.Child("requiredClaim", "claim"), "the claim a token must carry"))
		}
		if r.RequiredClaim.RequiredValue == "" {
			errs = append(errs, field.Required(rp.Child("requiredClaim", "requiredValue"), "the value the claim must have"))
		}
		out = append(out, configv1.TokenClaimValidationRule{
			Type:          configv1.TokenValidationRuleTypeRequiredClaim,
			RequiredClaim: &configv1.TokenRequiredClaim{Claim: r.RequiredClaim.Claim, RequiredValue: r.RequiredClaim.RequiredValue},
		})
	}
	return out, errs
}

// AwaitedClientSecrets returns the names (ClientSecretName) of the secrets of ea's confidential
// clients that HyperShift's report of the OIDC clients does not show in use, in the order of
// ea.spec.clients; none when ea has no confidential client. oidcClientsJSON is the
// FeedbackOIDCClients value: the JSON of the HostedCluster's
// status.configuration.authentication.oidcClients, a list of configv1.OIDCClientStatus, which
// HyperShift copies from the hosted cluster, where the client's component (the console operator, say)
// writes it. "" means HyperShift reports no OIDC client yet.
//
// A confidential client's secret counts as there once, and as long as, the entry of its component
// (componentNamespace and componentName) lists the client among its currentOIDCClients (the
// client's ID at the provider's issuer URL), with Available=True and without Degraded=True. Anything
// else is "not there yet": no entry (the component has not seen the client, or the cluster has not
// reported), another client in use (the component is still on an earlier configuration), Available
// False or Unknown (the component cannot get the secret: the console operator reports Degraded with
// `secret "<name>" not found` until it is created), or Degraded=True (also when a secret that was
// there is deleted, which leaves Available as it was). The report does not say why a client is not
// in use; its secret is the one cause the customer must act on, so every such client is listed.
func AwaitedClientSecrets(ea *v1alpha1.ExternalAuth, oidcClientsJSON string) (awaited []string, err error) {
	if ea == nil {
		return nil, nil
	}
	var reported []configv1.OIDCClientStatus
	if oidcClientsJSON != "" {
		if err := json.Unmarshal([]byte(oidcClientsJSON), &reported); err != nil {
			return nil, fmt.Errorf("status.configuration.authentication.oidcClients of the HostedCluster is not a list of OIDC client statuses: %w", err)
		}
	}
	for _, client := range ea.Spec.Clients {
		if client.Type != v1alpha1.ExternalAuthClientConfidential {
			continue
		}
		if !clientInUse(reported, client, ea.Spec.Issuer.URL) {
			awaited = append(awaited, ClientSecretName(ea, client))
		}
	}
	return awaited, nil
}

// clientInUse says whether the report shows the component of client using it: see AwaitedClientSecrets.
func clientInUse(reported []configv1.OIDCClientStatus, client v1alpha1.ExternalAuthClient, issuerURL string) bool {
	for _, st := range reported {
		if st.ComponentNamespace != client.Component.AuthClientNamespace || st.ComponentName != client.Component.Name {
			continue
		}
		current := false
		for _, ref := range st.CurrentOIDCClients {
			if ref.ClientID == client.ClientID && ref.IssuerURL == issuerURL {
				current = true
			}
		}
		return current && meta.IsStatusConditionTrue(st.Conditions, "Available") && !meta.IsStatusConditionTrue(st.Conditions, "Degraded")
	}
	return false
}
