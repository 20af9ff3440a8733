package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// TestExternalAuthSignsInThroughTheHostedCluster follows the README's external auth steps: an
// ExternalAuth applied with kubectl to an available cluster becomes the OIDC provider of its HostedCluster
// (accepted by the real CRD); it waits for the console's client secret in the hosted cluster, and is
// Succeeded once HyperShift sees it; a change reaches the HostedCluster; a second one is refused; a
// deleted one leaves the HostedCluster.
func TestExternalAuthSignsInThroughTheHostedCluster(t *testing.T) {
	st := startDeliveryStack(t, hypershiftsim.Options{})
	mc, s := st.mc, st.server
	clusterNamespace := st.exampleClusterUp(t)
	const auth = "externalauth/dev-cluster.entra"

	waitAuth := func(condition string) {
		t.Helper()
		if out, err := s.kubectl(t, "wait", "--for="+condition, "--timeout=60s", auth); err != nil {
			desc, _ := s.kubectl(t, "get", auth, "-o", "yaml")
			t.Fatalf("kubectl wait --for=%s: %v\n%s\n%s", condition, err, out, desc)
		}
	}
	provider := func() map[string]any {
		t.Helper()
		hc, err := mc.Dynamic.Resource(hostedClusters).Namespace(clusterNamespace).Get(t.Context(), "dev", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the HostedCluster on the management cluster: %v", err)
		}
		authn, _, _ := unstructured.NestedMap(hc.Object, "spec", "configuration", "authentication")
		if authn == nil {
			return nil
		}
		if authn["type"] != "OIDC" {
			t.Errorf("the HostedCluster's authentication type is %v, want OIDC", authn["type"])
		}
		providers, _ := authn["oidcProviders"].([]any)
		if len(providers) != 1 {
			t.Fatalf("the HostedCluster has %d OIDC providers, want 1: %v", len(providers), authn)
		}
		return providers[0].(map[string]any)
	}

	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "30-externalauth.yaml"))
	waitAuth("jsonpath={.status.provisioningState}=AwaitingSecret")

	// The provider as the HostedCluster has it, which the management cluster's CRD accepted.
	p := provider()
	if p == nil {
		t.Fatal("the HostedCluster has no authentication configuration")
	}
	want := map[string]string{
		"issuer.issuerURL":                     "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000001/v2.0",
		"issuer.audiences":                     `["console-app","cli-app"]`,
		"claimMappings.username.claim":         "email",
		"claimMappings.username.prefixPolicy":  "NoPrefix",
		"claimMappings.groups.claim":           "groups",
		"claimMappings.groups.prefix":          "entra:",
		"claimValidationRules.0.requiredClaim": `{"claim":"tid","requiredValue":"00000000-0000-0000-0000-000000000001"}`,
		"oidcClients.0.componentName":          "console",
		"oidcClients.0.componentNamespace":     "openshift-console",
		"oidcClients.0.clientID":               "console-app",
		"oidcClients.1.componentName":          "cli",
		"oidcClients.1.clientID":               "cli-app",
		"oidcClients.1.extraScopes":            `["email"]`,
	}
	for path, value := range want {
		if got := lookup(p, path); got != value {
			t.Errorf("the HostedCluster's OIDC provider has %s = %s, want %s", path, got, value)
		}
	}
	// configv1 writes an empty secret reference for a client without one.
	if name := lookup(p, "oidcClients.1.clientSecret.name"); name != "" && name != "<none>" {
		t.Errorf("the public client has the client secret %q: %v", name, p["oidcClients"])
	}

	// The state says which secret is awaited, and where; the secret's name is the console client's.
	ea := getExternalAuth(t, s, "dev-cluster.entra")
	secret := render.ClientSecretName(ea, ea.Spec.Clients[0])
	if got := lookup(p, "oidcClients.0.clientSecret.name"); got != secret {
		t.Errorf("the confidential client's secret is %q in the HostedCluster, want %q", got, secret)
	}
	message := s.mustKubectl(t, "get", auth, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].message}`)
	if !strings.Contains(message, secret) || !strings.Contains(message, "openshift-config") {
		t.Errorf("the Available condition %q does not say that the secret %s is awaited in openshift-config", message, secret)
	}
	if got := s.mustKubectl(t, "get", "hcpcluster/dev-cluster", "-o", "jsonpath={.status.provisioningState}"); got != "Succeeded" {
		t.Errorf("the cluster is %s while its external auth waits for a secret, want Succeeded", got)
	}

	// The customer creates the secret in the hosted cluster (the simulator's stand-in for its openshift-config).
	hosted := hypershiftsim.HostedConfigNamespace(clusterNamespace, "dev")
	if _, err := mc.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hosted}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := mc.Kube.CoreV1().Secrets(hosted).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret},
		StringData: map[string]string{"clientSecret": "s3cret"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAuth("jsonpath={.status.provisioningState}=Succeeded")
	waitAuth("condition=Available")

	// A change is a new generation, Updating until the HostedCluster carries it.
	if state := s.mustKubectl(t, "patch", auth, "--type=merge", "-p", `{"spec":{"claim":{"mappings":{"groups":{"prefix":"aad:"}}}}}`,
		"-o", "jsonpath={.status.provisioningState}"); state != "Updating" {
		t.Errorf("provisioningState %q right after the change, want Updating", state)
	}
	waitAuth("jsonpath={.status.observedGeneration}=2")
	waitAuth("jsonpath={.status.provisioningState}=Succeeded")
	if got := lookup(provider(), "claimMappings.groups.prefix"); got != "aad:" {
		t.Errorf("after the change the HostedCluster's groups prefix is %q, want aad:", got)
	}

	// A second identity provider for the cluster is refused, with the reason.
	second := writeFile(t, "second.yaml", strings.ReplaceAll(readExample(t, "30-externalauth.yaml"), "dev-cluster.entra", "dev-cluster.okta"))
	out := s.failKubectl(t, "apply", "-f", second)
	if !strings.Contains(out, "Conflict") || !strings.Contains(out, "a cluster can have one external auth only") {
		t.Errorf("a second external auth was not refused with a conflict that says why:\n%s", out)
	}

	// kubectl waits for the external auth to be gone; by then the HostedCluster no longer has it.
	s.mustKubectl(t, "delete", auth, "--timeout=60s")
	if p := provider(); p != nil {
		t.Errorf("the deleted external auth is still the HostedCluster's OIDC provider: %v", p)
	}
	// And the cluster may have another one.
	s.mustKubectl(t, "apply", "-f", second)
	if out, err := s.kubectl(t, "wait", "--for=jsonpath={.status.provisioningState}=AwaitingSecret", "--timeout=60s", "externalauth/dev-cluster.okta"); err != nil {
		t.Fatalf("the next external auth: %v\n%s", err, out)
	}

	// Deleting the cluster takes its external auth.
	s.mustKubectl(t, "delete", "hcpcluster/dev-cluster", "--timeout=60s")
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err := s.kubectl(t, "get", "externalauths", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "", nil
	})
	if err != nil {
		out, _ := s.kubectl(t, "get", "externalauths", "-o", "yaml")
		t.Errorf("the deleted cluster's external auth is still there:\n%s", out)
	}
}

func getExternalAuth(t *testing.T, s *server, name string) *v1alpha1.ExternalAuth {
	t.Helper()
	var ea v1alpha1.ExternalAuth
	if err := yaml.Unmarshal([]byte(s.mustKubectl(t, "get", "externalauth/"+name, "-o", "yaml")), &ea); err != nil {
		t.Fatal(err)
	}
	return &ea
}

// lookupValue follows a dotted path of map keys and list indexes.
func lookupValue(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, part := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i := 0
			for _, r := range part {
				if r < '0' || r > '9' {
					return nil, false
				}
				i = i*10 + int(r-'0')
			}
			if i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// lookup is lookupValue printed: strings as they are, anything else as JSON.
func lookup(obj map[string]any, path string) string {
	v, ok := lookupValue(obj, path)
	if !ok {
		return "<none>"
	}
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}
