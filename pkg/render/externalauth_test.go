package render_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const externalAuthUID = "7d6a1c52-3e0f-4b8e-9a57-2f3c1e6b9d40"

// externalAuth is the fixture identity provider of the cluster c as the API hands it over: with its
// UID and a generation.
func externalAuth(c *v1alpha1.HCPCluster, name string) *v1alpha1.ExternalAuth {
	ea := fixtures.ExternalAuth(c.Namespace, c.Name, name)
	ea.UID = types.UID(externalAuthUID)
	ea.Generation = 3
	return ea
}

// fullExternalAuth sets every field rendering reads: the issuer's CA, a client with extra scopes,
// a user name prefix and validation rules.
func fullExternalAuth(t *testing.T, c *v1alpha1.HCPCluster, name string) *v1alpha1.ExternalAuth {
	ea := externalAuth(c, name)
	ea.Spec.Issuer.CA = testCAPEM(t)
	ea.Spec.Clients[0].ExtraScopes = []string{"offline_access", "profile"}
	ea.Spec.Claim.Mappings.Username = v1alpha1.UsernameClaim{Claim: "preferred_username", PrefixPolicy: v1alpha1.UsernamePrefixPolicyPrefix, Prefix: "entra:"}
	ea.Spec.Claim.ValidationRules = []v1alpha1.TokenClaimValidationRule{
		{Type: v1alpha1.TokenValidationRuleRequiredClaim, RequiredClaim: v1alpha1.TokenRequiredClaim{Claim: "tid", RequiredValue: "00000000-0000-0000-0000-000000000001"}},
		{RequiredClaim: v1alpha1.TokenRequiredClaim{Claim: "ver", RequiredValue: "2.0"}},
	}
	return ea
}

func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "issuer-ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestClusterBundleWithExternalAuth(t *testing.T) {
	const namespace = "ocm-dev-" + clusterID
	c := minimalCluster("customer", "minimal", clusterID)
	ea := fullExternalAuth(t, c, "entra")
	b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: ea}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkBundleShape(t, b, []string{"Namespace", "Secret", "ConfigMap", "Secret", "Service", "Service", "HostedCluster"})
	labels := map[string]string{
		"api.openshift.com/environment": "dev",
		"api.openshift.com/id":          clusterID,
		"api.openshift.com/name":        c.Name,
	}

	var ca corev1.ConfigMap
	fromJSON(t, string(b.Manifests[2]), &ca)
	if ca.Namespace != namespace || ca.Data[render.IssuerCAKey] != ea.Spec.Issuer.CA || len(ca.Data) != 1 || !apiequality.Semantic.DeepEqual(ca.Labels, labels) {
		t.Errorf("CA ConfigMap %s, want the issuer's CA under %s in %s", b.Manifests[2], render.IssuerCAKey, namespace)
	}
	var secret corev1.Secret
	fromJSON(t, string(b.Manifests[3]), &secret)
	console := ea.Spec.Clients[0]
	if secret.Namespace != namespace || secret.Name != render.ClientSecretName(ea, console) || len(secret.Data) != 0 || len(secret.StringData) != 0 ||
		secret.Annotations[hyperv1.HostedClusterSourcedAnnotation] != "true" || !apiequality.Semantic.DeepEqual(secret.Labels, labels) {
		t.Errorf("client Secret %s, want an empty one named %s, sourced from the hosted cluster", b.Manifests[3], render.ClientSecretName(ea, console))
	}

	var hc hyperv1.HostedCluster
	fromJSON(t, string(b.Manifests[len(b.Manifests)-1]), &hc)
	checkHostedClusterBasics(t, &hc, c)
	if got := hc.Annotations[render.ExternalAuthAnnotation]; got != externalAuthUID+"/3" {
		t.Errorf("%s = %q, want the external auth's UID/generation", render.ExternalAuthAnnotation, got)
	}
	if hc.Spec.Configuration == nil || hc.Spec.Configuration.Authentication == nil {
		t.Fatalf("no spec.configuration.authentication: %s", b.Manifests[len(b.Manifests)-1])
	}
	want := &configv1.AuthenticationSpec{
		Type: configv1.AuthenticationTypeOIDC,
		OIDCProviders: []configv1.OIDCProvider{{
			Name: "entra",
			Issuer: configv1.TokenIssuer{
				URL:                  ea.Spec.Issuer.URL,
				Audiences:            []configv1.TokenAudience{"console-app", "cli-app"},
				CertificateAuthority: configv1.ConfigMapNameReference{Name: ca.Name},
			},
			OIDCClients: []configv1.OIDCClientConfig{
				{ComponentName: "console", ComponentNamespace: "openshift-console", ClientID: "console-app",
					ClientSecret: configv1.SecretNameReference{Name: secret.Name}, ExtraScopes: []string{"offline_access", "profile"}},
				{ComponentName: "cli", ComponentNamespace: "openshift-console", ClientID: "cli-app"},
			},
			ClaimMappings: configv1.TokenClaimMappings{
				Username: configv1.UsernameClaimMapping{Claim: "preferred_username", PrefixPolicy: configv1.Prefix,
					Prefix: &configv1.UsernamePrefix{PrefixString: "entra:"}},
				Groups: configv1.PrefixedClaimMapping{TokenClaimMapping: configv1.TokenClaimMapping{Claim: "groups"}, Prefix: "entra:"},
			},
			ClaimValidationRules: []configv1.TokenClaimValidationRule{
				{Type: configv1.TokenValidationRuleTypeRequiredClaim, RequiredClaim: &configv1.TokenRequiredClaim{Claim: "tid", RequiredValue: "00000000-0000-0000-0000-000000000001"}},
				{Type: configv1.TokenValidationRuleTypeRequiredClaim, RequiredClaim: &configv1.TokenRequiredClaim{Claim: "ver", RequiredValue: "2.0"}},
			},
		}},
	}
	if got := hc.Spec.Configuration.Authentication; !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("authentication (-want +got):\n%s", diff.Diff(want, got))
	}

	wantFeedback := []string{
		render.FeedbackAvailable, render.FeedbackAvailableMessage, render.FeedbackProgressing, render.FeedbackProgressingMessage,
		render.FeedbackDegraded, render.FeedbackDegradedMessage, render.FeedbackVersionHistory, render.FeedbackControlPlaneVersionHistory,
		render.FeedbackAPIHost, render.FeedbackAPIPort, render.FeedbackExternalAuth, render.FeedbackOIDCClients,
		render.FeedbackGeneration, render.FeedbackObservedGeneration,
	}
	checkFeedbackNames(t, b, map[int][]string{4: {render.FeedbackAPIAddress}, 5: {render.FeedbackAppsAddress}, 6: wantFeedback})
}

// Without an external auth the cluster signs users in with its OAuth server, as before the kind
// existed; with one that has no CA and no confidential client, only the HostedCluster changes.
func TestClusterBundleExternalAuthAddsOnlyWhatItNeeds(t *testing.T) {
	c := minimalCluster("customer", "minimal", clusterID)
	b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hc hyperv1.HostedCluster
	fromJSON(t, string(b.Manifests[len(b.Manifests)-1]), &hc)
	if _, ok := hc.Annotations[render.ExternalAuthAnnotation]; ok || hc.Spec.Configuration != nil {
		t.Errorf("without an external auth: annotations %v, configuration %s; want neither", hc.Annotations, toJSON(t, hc.Spec.Configuration))
	}

	ea := externalAuth(c, "public-only")
	ea.Spec.Clients = ea.Spec.Clients[1:]
	b, err = render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: ea}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkBundleShape(t, b, []string{"Namespace", "Secret", "Service", "Service", "HostedCluster"})
	fromJSON(t, string(b.Manifests[len(b.Manifests)-1]), &hc)
	auth := hc.Spec.Configuration.Authentication
	if p := auth.OIDCProviders[0]; p.Name != "public-only" || p.Issuer.CertificateAuthority.Name != "" || p.OIDCClients[0].ClientSecret.Name != "" {
		t.Errorf("provider %s, want one named after the ARM name, without a CA or a client secret", toJSON(t, p))
	}

	// A new generation of the external auth is a new HostedCluster annotation, and so new bytes.
	again := ea.DeepCopy()
	again.Generation++
	b2, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: again}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(b2.Manifests[len(b2.Manifests)-1]) == string(b.Manifests[len(b.Manifests)-1]) || !strings.Contains(string(b2.Manifests[len(b2.Manifests)-1]), externalAuthUID+"/4") {
		t.Errorf("generation 4 renders %s", b2.Manifests[len(b2.Manifests)-1])
	}
}

// The source compares a bundle's bytes to tell new content from a resync: an external auth must
// render to the same bytes every time.
func TestClusterBundleWithExternalAuthIsDeterministic(t *testing.T) {
	c := fullCluster("customer", "full", clusterID)
	in := render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: fullExternalAuth(t, c, "entra")}
	first, err := render.ClusterBundle(in, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := render.ClusterBundle(in, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if toJSON(t, again) != toJSON(t, first) {
			t.Fatalf("rendering again gave other bytes:\n%s\n%s", toJSON(t, first), toJSON(t, again))
		}
	}
}

func TestUsernamePrefixPolicy(t *testing.T) {
	c := minimalCluster("customer", "c", clusterID)
	for policy, want := range map[v1alpha1.UsernamePrefixPolicy]configv1.UsernamePrefixPolicy{
		"":                                    configv1.NoOpinion,
		v1alpha1.UsernamePrefixPolicyNone:     configv1.NoOpinion,
		v1alpha1.UsernamePrefixPolicyNoPrefix: configv1.NoPrefix,
	} {
		ea := externalAuth(c, "entra")
		ea.Spec.Claim.Mappings.Username = v1alpha1.UsernameClaim{Claim: "sub", PrefixPolicy: policy}
		b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: ea}, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var hc hyperv1.HostedCluster
		fromJSON(t, string(b.Manifests[len(b.Manifests)-1]), &hc)
		username := hc.Spec.Configuration.Authentication.OIDCProviders[0].ClaimMappings.Username
		if username.PrefixPolicy != want || username.Prefix != nil || username.Claim != "sub" {
			t.Errorf("prefixPolicy %q renders %s, want policy %q and no prefix", policy, toJSON(t, username), want)
		}
	}
}

func TestClientSecretName(t *testing.T) {
	c := minimalCluster("customer", "c", clusterID)
	ea := externalAuth(c, "entra")
	client := func(namespace, name string) v1alpha1.ExternalAuthClient {
		return v1alpha1.ExternalAuthClient{Component: v1alpha1.ExternalAuthClientComponent{Name: name, AuthClientNamespace: namespace}}
	}
	console := client("openshift-console", "console")
	if got := render.ClientSecretName(ea, console); got != "entra.openshift-console.console" {
		t.Errorf("ClientSecretName = %q, want entra.openshift-console.console", got)
	}
	// The name depends on the ARM name and the component, not on the rest of the object.
	other := ea.DeepCopy()
	other.Generation, other.UID, other.Spec.Issuer.URL = 9, "other", "https://elsewhere.example.com"
	if render.ClientSecretName(other, console) != render.ClientSecretName(ea, console) {
		t.Error("the name changes with the generation, the UID or the issuer")
	}
	if same := fixtures.ExternalAuth(c.Namespace, c.Name, "entra"); render.ClientSecretName(same, console) != render.ClientSecretName(ea, console) {
		t.Error("the name depends on more than the ARM name")
	}

	names := map[string]v1alpha1.ExternalAuthClient{}
	for _, cl := range []v1alpha1.ExternalAuthClient{
		console,
		client("openshift-console", "Console"),
		client("openshift-console", "console.app"),
		client("openshift-console", "console_app"),
		client("openshift", "console-console"),
		client("openshift-console", strings.Repeat("a-long-component-name-", 12)),
		client("openshift-console", strings.Repeat("a-long-component-name-", 12)+"2"),
		client("openshift-console", "-"),
	} {
		name := render.ClientSecretName(ea, cl)
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 || len(name) > validation.DNS1123LabelMaxLength {
			t.Errorf("ClientSecretName(%+v) = %q, not a DNS subdomain of at most 63 characters: %v", cl.Component, name, msgs)
		}
		if prev, ok := names[name]; ok {
			t.Errorf("components %+v and %+v share the Secret %q", prev.Component, cl.Component, name)
		}
		names[name] = cl
	}
}

func TestClusterBundleExternalAuthErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(ea *v1alpha1.ExternalAuth)
		wantErr []string
	}{
		{"another cluster's", func(ea *v1alpha1.ExternalAuth) { ea.Spec.ClusterName = "other" },
			[]string{`externalAuth.spec.clusterName: Invalid value: "other"`, "not its own"}},
		{"no UID", func(ea *v1alpha1.ExternalAuth) { ea.UID = "" },
			[]string{"externalAuth.metadata.uid: Required value"}},
		{"an http issuer", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Issuer.URL = "http://login.example.com" },
			[]string{`externalAuth.spec.issuer.url: Invalid value: "http://login.example.com": must use the https scheme`}},
		{"an issuer with a query", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Issuer.URL = "https://login.example.com/?tenant=1" },
			[]string{"externalAuth.spec.issuer.url", "must not have a query"}},
		{"an issuer with user info", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Issuer.URL = "https://me@login.example.com" },
			[]string{"externalAuth.spec.issuer.url", "must not have user info"}},
		{"no audience", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Issuer.Audiences = nil },
			[]string{"externalAuth.spec.issuer.audiences: Required value"}},
		{"an audience twice", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Issuer.Audiences = []string{"a", "a"} },
			[]string{`externalAuth.spec.issuer.audiences[1]: Duplicate value: "a"`}},
		{"a CA that is no PEM", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Issuer.CA = "not a certificate" },
			[]string{"externalAuth.spec.issuer.ca: Invalid value", "CERTIFICATE"}},
		{"a client without an ID", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Clients[1].ClientID = "" },
			[]string{"externalAuth.spec.clients[1].clientID: Required value"}},
		{"a client of an unknown type", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Clients[0].Type = "Private" },
			[]string{`externalAuth.spec.clients[0].type: Unsupported value: "Private"`}},
		{"a component namespace that is no DNS label", func(ea *v1alpha1.ExternalAuth) {
			ea.Spec.Clients[0].Component.AuthClientNamespace = "Openshift_Console"
		},
			[]string{`externalAuth.spec.clients[0].component.authClientNamespace: Invalid value: "Openshift_Console"`}},
		{"a component twice", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Clients[1].Component = ea.Spec.Clients[0].Component },
			[]string{`externalAuth.spec.clients[1].component: Duplicate value: "openshift-console/console"`}},
		{"a scope twice", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Clients[0].ExtraScopes = []string{"email", "email"} },
			[]string{`externalAuth.spec.clients[0].extraScopes[1]: Duplicate value: "email"`}},
		{"no user name claim", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Claim.Mappings.Username.Claim = "" },
			[]string{"externalAuth.spec.claim.mappings.username.claim: Invalid value"}},
		{"prefix policy Prefix without a prefix", func(ea *v1alpha1.ExternalAuth) {
			ea.Spec.Claim.Mappings.Username.PrefixPolicy = v1alpha1.UsernamePrefixPolicyPrefix
		}, []string{"externalAuth.spec.claim.mappings.username.prefix: Required value"}},
		{"a prefix with another policy", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Claim.Mappings.Username.Prefix = "x:" },
			[]string{`externalAuth.spec.claim.mappings.username.prefix: Invalid value: "x:"`}},
		{"an unknown prefix policy", func(ea *v1alpha1.ExternalAuth) { ea.Spec.Claim.Mappings.Username.PrefixPolicy = "Always" },
			[]string{`externalAuth.spec.claim.mappings.username.prefixPolicy: Unsupported value: "Always"`}},
		{"a rule without a value", func(ea *v1alpha1.ExternalAuth) {
			ea.Spec.Claim.ValidationRules = []v1alpha1.TokenClaimValidationRule{{RequiredClaim: v1alpha1.TokenRequiredClaim{Claim: "tid"}}}
		}, []string{"externalAuth.spec.claim.validationRules[0].requiredClaim.requiredValue: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := minimalCluster("customer", "c", clusterID)
			ea := externalAuth(c, "entra")
			tc.mutate(ea)
			b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: ea}, render.Options{})
			if err == nil {
				t.Fatalf("no error, and a bundle of %d manifests", len(b.Manifests))
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestAwaitedClientSecrets(t *testing.T) {
	c := minimalCluster("customer", "c", clusterID)
	ea := externalAuth(c, "entra")
	ea.Spec.Clients = append(ea.Spec.Clients, v1alpha1.ExternalAuthClient{
		Component: v1alpha1.ExternalAuthClientComponent{Name: "grafana", AuthClientNamespace: "monitoring"},
		ClientID:  "grafana-app", Type: v1alpha1.ExternalAuthClientConfidential,
	})
	consoleSecret := render.ClientSecretName(ea, ea.Spec.Clients[0])
	grafanaSecret := render.ClientSecretName(ea, ea.Spec.Clients[2])
	issuer := ea.Spec.Issuer.URL

	condition := func(t string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: "Test", LastTransitionTime: metav1.Now()}
	}
	inUse := func(namespace, name, clientID string, conditions ...metav1.Condition) configv1.OIDCClientStatus {
		st := configv1.OIDCClientStatus{ComponentNamespace: namespace, ComponentName: name, Conditions: conditions}
		if clientID != "" {
			st.CurrentOIDCClients = []configv1.OIDCClientReference{{OIDCProviderName: "entra", IssuerURL: issuer, ClientID: clientID}}
		}
		return st
	}
	available := []metav1.Condition{condition("Available", metav1.ConditionTrue), condition("Progressing", metav1.ConditionFalse), condition("Degraded", metav1.ConditionFalse)}
	missing := []metav1.Condition{condition("Progressing", metav1.ConditionFalse), condition("Degraded", metav1.ConditionTrue)}

	for _, tc := range []struct {
		name     string
		reported []configv1.OIDCClientStatus
		raw      string
		want     []string
	}{
		{name: "nothing reported yet", raw: "", want: []string{consoleSecret, grafanaSecret}},
		{name: "an empty report", raw: "[]", want: []string{consoleSecret, grafanaSecret}},
		{name: "both in use", reported: []configv1.OIDCClientStatus{
			inUse("openshift-console", "console", "console-app", available...),
			inUse("monitoring", "grafana", "grafana-app", available...),
		}},
		{name: "the console's secret missing", reported: []configv1.OIDCClientStatus{
			inUse("openshift-console", "console", "console-app", missing...),
			inUse("monitoring", "grafana", "grafana-app", available...),
		}, want: []string{consoleSecret}},
		{name: "a secret deleted after it was in use: Available stays, Degraded says so", reported: []configv1.OIDCClientStatus{
			inUse("openshift-console", "console", "console-app", condition("Available", metav1.ConditionTrue), condition("Degraded", metav1.ConditionTrue)),
			inUse("monitoring", "grafana", "grafana-app", available...),
		}, want: []string{consoleSecret}},
		{name: "available, but with an earlier client", reported: []configv1.OIDCClientStatus{
			inUse("openshift-console", "console", "old-console-app", available...),
			inUse("monitoring", "grafana", "grafana-app", available...),
		}, want: []string{consoleSecret}},
		{name: "no current client", reported: []configv1.OIDCClientStatus{
			inUse("openshift-console", "console", "", available...),
			inUse("monitoring", "grafana", "grafana-app", condition("Available", metav1.ConditionUnknown)),
		}, want: []string{consoleSecret, grafanaSecret}},
		{name: "a component of another namespace", reported: []configv1.OIDCClientStatus{
			inUse("console", "console", "console-app", available...),
			inUse("monitoring", "grafana", "grafana-app", available...),
		}, want: []string{consoleSecret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.raw
			if tc.reported != nil {
				raw = toJSON(t, tc.reported)
			}
			got, err := render.AwaitedClientSecrets(ea, raw)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("AwaitedClientSecrets = %q, want %q", got, tc.want)
			}
		})
	}

	if _, err := render.AwaitedClientSecrets(ea, `{"not":"a list"}`); err == nil {
		t.Error("a report that is no list is read without an error")
	}
	public := externalAuth(c, "entra")
	public.Spec.Clients = public.Spec.Clients[1:]
	if got, err := render.AwaitedClientSecrets(public, ""); err != nil || len(got) != 0 {
		t.Errorf("public clients only: %q, %v; want none awaited", got, err)
	}
}

// The agent reads the applied annotation and HyperShift's report of the OIDC clients with the
// HostedCluster's feedback rules.
func TestExternalAuthFeedback(t *testing.T) {
	c := minimalCluster("customer", "c", clusterID)
	ea := externalAuth(c, "entra")
	b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage, ExternalAuth: ea}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := len(b.Manifests) - 1
	hc := &unstructured.Unstructured{}
	if err := json.Unmarshal(b.Manifests[i], &hc.Object); err != nil {
		t.Fatal(err)
	}
	clients := []any{map[string]any{
		"componentName": "console", "componentNamespace": "openshift-console",
		"currentOIDCClients": []any{map[string]any{"oidcProviderName": "entra", "issuerURL": ea.Spec.Issuer.URL, "clientID": "console-app"}},
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "OIDCConfigAvailable", "message": "",
			"lastTransitionTime": "2026-12-01T00:00:00Z"}},
	}}
	if err := unstructured.SetNestedSlice(hc.Object, clients, "status", "configuration", "authentication", "oidcClients"); err != nil {
		t.Fatal(err)
	}
	got := feedbackOn(t, hc, b.ManifestConfigs[i])
	if got[render.FeedbackExternalAuth] != externalAuthUID+"/3" {
		t.Errorf("%s = %q, want %s/3", render.FeedbackExternalAuth, got[render.FeedbackExternalAuth], externalAuthUID)
	}
	awaited, err := render.AwaitedClientSecrets(ea, got[render.FeedbackOIDCClients])
	if err != nil || len(awaited) != 0 {
		t.Errorf("AwaitedClientSecrets of the reported %s = %q, %v; want none", got[render.FeedbackOIDCClients], awaited, err)
	}
}
