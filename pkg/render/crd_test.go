package render_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// TestHyperShiftAcceptsBundles creates everything rendered for a cluster and its node pools on a
// real kube-apiserver with the HyperShift CRDs, as a strict client would: an unknown field, a
// value a schema or CEL rule refuses, or a resource identifier that names no resource fails.
// Then the agent applies the same bundles over them, twice, as it does on every resync: the
// CRDs' immutability rules must find nothing changed. Last, the HyperShift simulator brings the
// cluster up, and the feedback rules must read what it reports.
func TestHyperShiftAcceptsBundles(t *testing.T) {
	mc := framework.StartManagementCluster(t)
	applier, err := agent.NewApplier(mc.Config)
	if err != nil {
		t.Fatal(err)
	}
	hypershiftsim.StartForTest(t, mc.Config, hypershiftsim.Options{})

	t.Run("the check refuses what the CRDs refuse", func(t *testing.T) { testStrictCreateRefuses(t, mc) })

	for _, tc := range []struct {
		name    string
		cluster func(clusterID string) *v1alpha1.HCPCluster
		pools   func(t *testing.T, c *v1alpha1.HCPCluster) []*v1alpha1.NodePool
		// auth is the cluster's external auth; none when nil.
		auth func(t *testing.T, c *v1alpha1.HCPCluster) *v1alpha1.ExternalAuth
	}{
		{
			name:    "the fixtures, defaulted as the API defaults them",
			cluster: func(id string) *v1alpha1.HCPCluster { return minimalCluster("customer", "minimal", id) },
			pools: func(t *testing.T, c *v1alpha1.HCPCluster) []*v1alpha1.NodePool {
				return []*v1alpha1.NodePool{fixtures.NodePool(c.Namespace, c.Name, "workers")}
			},
		},
		{
			name:    "every field set, autoscaled pool with config and tuning documents",
			cluster: func(id string) *v1alpha1.HCPCluster { return fullCluster("customer", "full", id) },
			pools: func(t *testing.T, c *v1alpha1.HCPCluster) []*v1alpha1.NodePool {
				return []*v1alpha1.NodePool{fullNodePool(t, c, "gpu"), fixtures.NodePool(c.Namespace, c.Name, "workers")}
			},
		},
		{
			name: "ingress and image registry disabled, public API limited to some addresses",
			cluster: func(id string) *v1alpha1.HCPCluster {
				c := minimalCluster("customer", "no-ingress-cluster-with-a-long-name", id)
				c.Spec.DNS.BaseDomainPrefix = "noingress"
				c.Spec.Ingress.Type = "Disabled"
				c.Spec.ClusterImageRegistry.State = "Disabled"
				c.Spec.API.AuthorizedCIDRs = []string{"203.0.113.9"}
				return c
			},
			pools: func(t *testing.T, c *v1alpha1.HCPCluster) []*v1alpha1.NodePool {
				np := fixtures.NodePool(c.Namespace, c.Name, "pool-with-15ch")
				np.Spec.Replicas = nil
				np.Spec.AutoScaling = &v1alpha1.NodePoolAutoScaling{Min: 2, Max: 2}
				np.Spec.Config = fullNodePool(t, c, "x").Spec.Config
				return []*v1alpha1.NodePool{np}
			},
		},
		{
			name:    "an external auth with the issuer's CA, a confidential and a public client, a user name prefix and validation rules",
			cluster: func(id string) *v1alpha1.HCPCluster { return minimalCluster("customer", "oidc", id) },
			pools: func(t *testing.T, c *v1alpha1.HCPCluster) []*v1alpha1.NodePool {
				return []*v1alpha1.NodePool{fixtures.NodePool(c.Namespace, c.Name, "workers")}
			},
			auth: func(t *testing.T, c *v1alpha1.HCPCluster) *v1alpha1.ExternalAuth {
				return fullExternalAuth(t, c, "entra")
			},
		},
		{
			name:    "an external auth as the fixture has it: no CA, the platform's user name prefix",
			cluster: func(id string) *v1alpha1.HCPCluster { return minimalCluster("customer", "oidc-minimal", id) },
			pools: func(t *testing.T, c *v1alpha1.HCPCluster) []*v1alpha1.NodePool {
				return []*v1alpha1.NodePool{fixtures.NodePool(c.Namespace, c.Name, "workers")}
			},
			auth: func(t *testing.T, c *v1alpha1.HCPCluster) *v1alpha1.ExternalAuth {
				ea := externalAuth(c, "entra")
				ea.Spec.Claim.Mappings.Username = v1alpha1.UsernameClaim{Claim: "sub"}
				ea.Spec.Claim.Mappings.Groups = nil
				return ea
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			// Each case in its own namespace: a cluster ID of its own.
			c := tc.cluster(uuid.NewString())
			in := render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}
			if tc.auth != nil {
				in.ExternalAuth = tc.auth(t, c)
			}
			bundle, err := render.ClusterBundle(in, render.Options{})
			if err != nil {
				t.Fatal(err)
			}
			bundles := []*protocol.ManifestBundle{bundle}
			for _, np := range tc.pools(t, c) {
				b, err := render.NodePoolBundle(c, np, poolReleaseImage, render.Options{})
				if err != nil {
					t.Fatal(err)
				}
				bundles = append(bundles, b)
			}

			for _, b := range bundles {
				if err := createStrictly(ctx, mc, b); err != nil {
					t.Fatal(err)
				}
			}
			for _, generation := range []int64{1, 2} {
				for i, b := range bundles {
					results, err := applier.Apply(ctx, bundleID(c, i), generation, b)
					if err != nil {
						t.Fatalf("the agent applying generation %d of bundle %d: %v", generation, i, err)
					}
					for _, r := range results {
						if r.Object != nil && r.Object.GetGeneration() > 1 { // nil: a load balancer HyperShift has not made yet
							t.Errorf("applying the same bundle again changed the spec of %s %s/%s", r.Meta.Kind, r.Meta.Namespace, r.Meta.Name)
						}
					}
				}
			}

			checkFeedback(ctx, t, mc, bundles)
			if in.ExternalAuth != nil {
				checkExternalAuthFeedback(ctx, t, mc, bundles[0], in.ExternalAuth)
			}
		})
	}
}

// checkFeedback waits until the HostedCluster is Available and every NodePool Ready, as the
// feedback rules read them, then checks the rest of what they report.
func checkFeedback(ctx context.Context, t *testing.T, mc *framework.ManagementCluster, bundles []*protocol.ManifestBundle) {
	t.Helper()
	hostedClusterIndex := len(bundles[0].Manifests) - 1
	hc := waitForFeedback(ctx, t, mc, bundles[0], hostedClusterIndex, render.FeedbackAvailable, "True")
	var rendered struct {
		Spec struct {
			Services []struct {
				Service                   string
				ServicePublishingStrategy struct{ Route struct{ Hostname string } }
			}
		}
	}
	if err := json.Unmarshal(bundles[0].Manifests[hostedClusterIndex], &rendered); err != nil {
		t.Fatal(err)
	}
	if got, want := feedbackString(hc, render.FeedbackAPIHost), rendered.Spec.Services[0].ServicePublishingStrategy.Route.Hostname; got != want {
		t.Errorf("%s = %q, want the API server route's host name %q", render.FeedbackAPIHost, got, want)
	}
	if port := hc[render.FeedbackAPIPort].Integer; port == nil || *port != 443 {
		t.Errorf("%s = %+v, want 443", render.FeedbackAPIPort, hc[render.FeedbackAPIPort])
	}
	for _, name := range []string{render.FeedbackVersionHistory, render.FeedbackControlPlaneVersionHistory} {
		var history []struct{ State, Version string }
		if raw := hc[name].JSONRaw; raw == nil || json.Unmarshal([]byte(*raw), &history) != nil {
			t.Fatalf("%s = %+v, want the JSON of a version history", name, hc[name])
		}
		if len(history) == 0 || history[0].State != "Completed" || history[0].Version != "4.20.8" {
			t.Errorf("%s = %+v, want 4.20.8 Completed first", name, history)
		}
	}
	for _, name := range []string{render.FeedbackProgressing, render.FeedbackDegraded, render.FeedbackAvailableMessage} {
		if feedbackString(hc, name) == "" {
			t.Errorf("%s is not reported", name)
		}
	}

	// The load balancers of the control plane's router and of the cluster's ingress report an address
	// each, which the cluster's DNS records point at.
	for i, name := range map[int]string{hostedClusterIndex - 2: render.FeedbackAPIAddress, hostedClusterIndex - 1: render.FeedbackAppsAddress} {
		values, err := feedbackOf(ctx, mc, bundles[0], i)
		if err != nil {
			t.Fatal(err)
		}
		if address := net.ParseIP(feedbackString(values, name)); address == nil || address.To4() == nil {
			t.Errorf("%s = %+v, want the IPv4 address of the load balancer", name, values[name])
		}
	}

	for _, b := range bundles[1:] {
		np := waitForFeedback(ctx, t, mc, b, len(b.Manifests)-1, render.FeedbackReady, "True")
		if got := feedbackString(np, render.FeedbackVersion); got != "4.20.7" {
			t.Errorf("%s = %q, want the version of the pool's release image, 4.20.7", render.FeedbackVersion, got)
		}
		if r := np[render.FeedbackReplicas].Integer; r == nil || *r < 1 {
			t.Errorf("%s = %+v, want the pool's node count", render.FeedbackReplicas, np[render.FeedbackReplicas])
		}
		if feedbackString(np, render.FeedbackUpdatingVersion) != "False" {
			t.Errorf("%s = %+v, want False once Ready", render.FeedbackUpdatingVersion, np[render.FeedbackUpdatingVersion])
		}
	}
}

// checkExternalAuthFeedback checks that the feedback rules read the external auth's generation as
// applied, and that the simulator's report of the OIDC clients (HyperShift's, from the hosted
// cluster) says the confidential client's secret is awaited until it is created in the hosted
// cluster's openshift-config.
func checkExternalAuthFeedback(ctx context.Context, t *testing.T, mc *framework.ManagementCluster, b *protocol.ManifestBundle, ea *v1alpha1.ExternalAuth) {
	t.Helper()
	i := len(b.Manifests) - 1
	want := string(ea.UID) + "/" + strconv.FormatInt(ea.Generation, 10)
	hc := waitForFeedback(ctx, t, mc, b, i, render.FeedbackExternalAuth, want)
	secret := render.ClientSecretName(ea, ea.Spec.Clients[0])
	awaited := func(values map[string]protocol.FieldValue) []string {
		var report string
		if raw := values[render.FeedbackOIDCClients].JSONRaw; raw != nil {
			report = *raw
		}
		names, err := render.AwaitedClientSecrets(ea, report)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := awaited(hc); len(got) != 1 || got[0] != secret {
		t.Errorf("awaited client secrets %q (report %+v), want the console's %q", got, hc[render.FeedbackOIDCClients], secret)
	}

	id := b.ManifestConfigs[i].ResourceIdentifier
	namespace := hypershiftsim.HostedConfigNamespace(id.Namespace, id.Name)
	_, err := mc.Kube.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: namespace},
		Data:       map[string][]byte{"clientSecret": []byte("s3cr3t")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the client secret in the hosted cluster: %v", err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		values, err := feedbackOf(ctx, mc, b, i)
		if err != nil {
			return false, err
		}
		hc = values
		return len(awaited(values)) == 0, nil
	})
	if err != nil {
		t.Errorf("once the client secret exists, still awaited: %q (report %+v)", awaited(hc), hc[render.FeedbackOIDCClients])
	}
}

// waitForFeedback evaluates the feedback rules of manifest i of b, as the agent does, until the
// value name is want, and returns all the values.
func waitForFeedback(ctx context.Context, t *testing.T, mc *framework.ManagementCluster, b *protocol.ManifestBundle, i int, name, want string) map[string]protocol.FieldValue {
	t.Helper()
	var values map[string]protocol.FieldValue
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		values, err = feedbackOf(ctx, mc, b, i)
		if err != nil {
			return false, err
		}
		return feedbackString(values, name) == want, nil
	})
	if err != nil {
		cfg := b.ManifestConfigs[i]
		t.Fatalf("waiting for %s=%s on %s %s/%s: %v; last reported %+v", name, want, cfg.ResourceIdentifier.Resource,
			cfg.ResourceIdentifier.Namespace, cfg.ResourceIdentifier.Name, err, values)
	}
	return values
}

// feedbackOf evaluates the feedback rules of manifest i of b on the object as it is now, as the
// agent does.
func feedbackOf(ctx context.Context, mc *framework.ManagementCluster, b *protocol.ManifestBundle, i int) (map[string]protocol.FieldValue, error) {
	cfg := b.ManifestConfigs[i]
	var gvk struct{ APIVersion string }
	if err := json.Unmarshal(b.Manifests[i], &gvk); err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(gvk.APIVersion)
	if err != nil {
		return nil, err
	}
	obj, err := mc.Dynamic.Resource(gv.WithResource(cfg.ResourceIdentifier.Resource)).Namespace(cfg.ResourceIdentifier.Namespace).
		Get(ctx, cfg.ResourceIdentifier.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	found, err := agent.FeedbackValues(obj, cfg.FeedbackRules)
	if err != nil {
		return nil, err
	}
	values := map[string]protocol.FieldValue{}
	for _, v := range found {
		values[v.Name] = v.Value
	}
	return values, nil
}

func feedbackString(values map[string]protocol.FieldValue, name string) string {
	if s := values[name].String; s != nil {
		return *s
	}
	return ""
}

// An acceptance test that accepts anything proves nothing: the same check must refuse a field
// the CRD does not have, and a value its CEL rules refuse.
func testStrictCreateRefuses(t *testing.T, mc *framework.ManagementCluster) {
	for _, tc := range []struct {
		name, want string
		mutate     func(hc map[string]any)
	}{
		{"an unknown field", `unknown field "spec.notAField"`, func(hc map[string]any) {
			_ = unstructured.SetNestedField(hc, "x", "spec", "notAField")
		}},
		{"an empty etcd management type", "managementType", func(hc map[string]any) {
			_ = unstructured.SetNestedField(hc, "", "spec", "etcd", "managementType")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := minimalCluster("customer", "refused", uuid.NewString())
			b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}, render.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hc := map[string]any{}
			if err := json.Unmarshal(b.Manifests[len(b.Manifests)-1], &hc); err != nil {
				t.Fatal(err)
			}
			tc.mutate(hc)
			if b.Manifests[len(b.Manifests)-1], err = json.Marshal(hc); err != nil {
				t.Fatal(err)
			}
			err = createStrictly(t.Context(), mc, b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error about %s", err, tc.want)
			}
		})
	}
}

// createStrictly creates each manifest of b, in order, through the resource its manifest
// config names, refusing unknown fields.
func createStrictly(ctx context.Context, mc *framework.ManagementCluster, b *protocol.ManifestBundle) error {
	for i, raw := range b.Manifests {
		if st := b.ManifestConfigs[i].UpdateStrategy; st != nil && st.Type == protocol.UpdateStrategyReadOnly {
			continue // read from the management cluster, never written to it
		}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &obj.Object); err != nil {
			return err
		}
		id := b.ManifestConfigs[i].ResourceIdentifier
		gvk := obj.GroupVersionKind()
		if id.Group != gvk.Group || id.Name != obj.GetName() || id.Namespace != obj.GetNamespace() {
			return fmt.Errorf("manifest %d is %s %s/%s, but its manifest config names %+v", i, gvk, obj.GetNamespace(), obj.GetName(), id)
		}
		gvr := schema.GroupVersionResource{Group: id.Group, Version: gvk.Version, Resource: id.Resource}
		var err error
		if id.Namespace == "" {
			_, err = mc.Dynamic.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		} else {
			_, err = mc.Dynamic.Resource(gvr).Namespace(id.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		}
		if err != nil {
			return fmt.Errorf("creating %s %s/%s: %w\n%s", gvk.Kind, obj.GetNamespace(), obj.GetName(), err, raw)
		}
	}
	return nil
}

// bundleID is a stable bundle ID per cluster and bundle, as the source derives one from a UID.
func bundleID(c *v1alpha1.HCPCluster, i int) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(c.Status.ClusterID+"/"+string(rune('a'+i)))).String()
}
