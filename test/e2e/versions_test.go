package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
	"github.com/aro-hcp/hcp-apiserver/test/updateservice"
)

// TestVersionsFollowTheUpdateService runs the server against a stand-in OpenShift update service whose
// graph changes during the test: the versions offered are the graph's; a running cluster moves along a
// new edge without a user's action, but not along a conditional edge with a risk, nor when it opted
// out; a minor past its end of life takes no new cluster; the service down or answering garbage changes
// nothing; a restart serves the last good graph while the service is still down; a release pulled from
// the graph moves no cluster or pool down, and a restart after it takes nothing off the management cluster.
func TestVersionsFollowTheUpdateService(t *testing.T) {
	us := updateservice.Start(t)
	us.Set("fast-4.20", updateservice.Graph{
		Nodes: []updateservice.Node{{Version: "4.20.1"}, {Version: "4.20.2"}},
		Edges: []updateservice.Edge{{From: "4.20.1", To: "4.20.2"}},
	})
	us.Set("fast-4.21", updateservice.Graph{Nodes: []updateservice.Node{{Version: "4.21.0"}}})
	lifecycle := writeFile(t, "lifecycle.json", `{"endOfLife": {"4.20": "2099-01-01T00:00:00Z", "4.21": "2026-01-01T00:00:00Z"}}`)
	st := startDeliveryStack(t, hypershiftsim.Options{UpgradeDelay: time.Second},
		"--update-service-url="+us.URL, "--update-service-channels=fast-4.20,fast-4.21", "--update-service-interval=1s",
		"--version-lifecycle="+lifecycle)
	s := st.server
	// An agent that resyncs every two seconds: what a resync after a restart would delete shows at once.
	if err := st.agent.Stop(); err != nil {
		t.Fatal(err)
	}
	st.agentArgs = append(st.agentArgs, "--resync-interval=2s")
	st.startAgent(t)

	// The versions offered are the graph's, not the compiled-in ones.
	waitVersions(t, s, "fast-4.20.1 fast-4.20.2 fast-4.21.0")
	if got := s.mustKubectl(t, "get", "ocpv", "fast-4.21.0", "-o", "jsonpath={.spec.enabled} {.spec.endOfLifeTimestamp}"); got != "false 2026-01-01T00:00:00Z" {
		t.Errorf("fast-4.21.0 is %q; want disabled, past its end of life on 2026-01-01", got)
	}

	// A minor past its end of life takes no new cluster.
	out := s.failKubectl(t, "apply", "-f", clusterManifest(t, "eol", "4.21", ""))
	if !strings.Contains(out, `spec.version.id: Invalid value: "4.21": reached its end of life on 2026-01-01`) {
		t.Errorf("a cluster on 4.21 was not refused for its end of life:\n%s", out)
	}

	// Two clusters on 4.20 get the graph's newest fast release; one opts out of the service's upgrades.
	s.mustKubectl(t, "apply", "-f", clusterManifest(t, "auto", "4.20", ""), "-f", clusterManifest(t, "manual", "4.20", v1alpha1.UpgradePolicyManual))
	st.waitStates(t, "Succeeded", 2*time.Minute, "auto", "manual")
	for _, name := range []string{"auto", "manual"} {
		if got := clusterVersion(t, s, name); got.Desired != "4.20.2" || got.Actual != "4.20.2" {
			t.Errorf("cluster %s runs %+v; want 4.20.2, the graph's newest fast 4.20", name, got)
		}
	}

	// A pool of cluster auto that names its version.
	s.mustKubectl(t, "apply", "-f", writeFile(t, "pool.yaml", `apiVersion: hcp.aro.azure.com/v1alpha1
kind: NodePool
metadata:
  name: auto.workers
  namespace: default
spec:
  clusterName: auto
  version:
    id: 4.20.2
    channelGroup: fast
  platform:
    vmSize: Standard_D8s_v3
  replicas: 2
`))
	if out, err := s.kubectl(t, "wait", "--for=condition=Ready", "--timeout=120s", "nodepool/auto.workers"); err != nil {
		t.Fatalf("the pool: %v\n%s", err, out)
	}

	// The graph gains 4.20.3 with an edge from 4.20.2: the cluster moves there on its own, then its pool.
	us.AddNode("fast-4.20", "4.20.3")
	us.AddEdge("fast-4.20", "4.20.2", "4.20.3")
	waitCluster(t, s, "auto", "jsonpath={.status.version.actual}=4.20.3")
	if got := clusterVersion(t, s, "auto"); got.Desired != "4.20.3" || got.Reason != "UpgradeAlongGraph" || !strings.Contains(got.Message, "4.20.2 to 4.20.3") {
		t.Errorf("after the new edge, cluster auto is %+v; want 4.20.3 with the reason UpgradeAlongGraph", got)
	}
	if image := hostedClusterImage(t, st, "auto"); !strings.Contains(image, ":4.20.3-") {
		t.Errorf("the HostedCluster of cluster auto runs %s, want 4.20.3", image)
	}
	if out, err := s.kubectl(t, "wait", "--for=jsonpath={.status.version}=4.20.3", "--timeout=120s", "nodepool/auto.workers"); err != nil {
		desc, _ := s.kubectl(t, "get", "nodepool/auto.workers", "-o", "yaml")
		t.Fatalf("the pool did not follow its control plane to 4.20.3: %v\n%s\n%s", err, out, desc)
	}
	if got := s.mustKubectl(t, "get", "nodepool/auto.workers", "-o", "jsonpath={.spec.version.id} {.status.desiredVersion}"); got != "4.20.2 4.20.3" {
		t.Errorf("the pool's version.id and desiredVersion are %q; want the user's 4.20.2 kept and 4.20.3 desired", got)
	}
	waitCluster(t, s, "manual", "jsonpath={.status.conditions[?(@.type==\"VersionResolved\")].reason}=UpgradeAvailable")
	if got := clusterVersion(t, s, "manual"); got.Desired != "4.20.2" || !strings.Contains(got.Message, "upgradePolicy Manual") {
		t.Errorf("the opted-out cluster is %+v; want it kept on 4.20.2, saying why", got)
	}

	// 4.20.4 comes with a conditional edge only: offered with its risk, not taken.
	us.AddNode("fast-4.20", "4.20.4")
	us.AddConditionalEdge("fast-4.20", "4.20.3", "4.20.4", updateservice.Risk{Name: "EtcdStalls", Message: "etcd may stall",
		URL: "https://example.com/etcd", MatchingRules: []json.RawMessage{json.RawMessage(`{"type":"Always"}`)}})
	waitVersions(t, s, "fast-4.20.1 fast-4.20.2 fast-4.20.3 fast-4.20.4 fast-4.21.0")
	if out, err := s.kubectl(t, "wait", "--for=jsonpath={.spec.upgrades[0].risks[0].name}=EtcdStalls", "--timeout=30s", "ocpv/fast-4.20.3"); err != nil {
		t.Fatalf("fast-4.20.3 does not show the risky edge: %v\n%s", err, out)
	}
	consistently(t, 5*time.Second, func() string {
		if got := clusterVersion(t, s, "auto"); got.Desired != "4.20.3" {
			return fmt.Sprintf("cluster auto took the conditional edge: %+v", got)
		}
		return ""
	})

	// The service down, then answering garbage: no version and no cluster changes.
	before := versionsState(t, s)
	for _, fault := range []struct {
		name  string
		apply func(...string)
	}{{"down", us.Down}, {"garbage", us.Garbage}} {
		asked := us.Requests("fast-4.20")
		fault.apply()
		if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return us.Requests("fast-4.20") >= asked+3, nil
		}); err != nil {
			t.Fatalf("the server did not ask the update service again while it was %s", fault.name)
		}
		if after := versionsState(t, s); after != before {
			t.Errorf("with the update service %s the versions changed:\nbefore: %s\nafter:  %s", fault.name, before, after)
		}
		if got := clusterVersion(t, s, "auto"); got.Desired != "4.20.3" {
			t.Errorf("with the update service %s cluster auto moved to %s", fault.name, got.Desired)
		}
	}

	// A restart while the service is down serves the last good graph: a new cluster resolves to it.
	us.Down()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	st.startServer(t)
	s = st.server
	waitVersions(t, s, "fast-4.20.1 fast-4.20.2 fast-4.20.3 fast-4.20.4 fast-4.21.0")
	s.mustKubectl(t, "apply", "-f", clusterManifest(t, "late", "4.20", ""))
	if got := clusterVersion(t, s, "late"); got.Desired != "4.20.4" {
		t.Errorf("a cluster created after the restart resolved to %s; want 4.20.4, the stored graph's newest fast 4.20", got.Desired)
	}

	// 4.20.3 and 4.20.4 are pulled, and fast now resolves 4.20 to 4.20.2: cluster auto and its pool, on
	// 4.20.3, are not sent a downgrade. They stay where they are, saying why, and a restart of the server
	// (after which nothing renders their bundles) leaves the HostedCluster and NodePool on the management
	// cluster through the agent's resyncs.
	us.Set("fast-4.20", updateservice.Graph{
		Nodes: []updateservice.Node{{Version: "4.20.1"}, {Version: "4.20.2"}},
		Edges: []updateservice.Edge{{From: "4.20.1", To: "4.20.2"}},
	})
	us.Up()
	waitCluster(t, s, "auto", `jsonpath={.status.conditions[?(@.type=="VersionResolved")].reason}=NotInCatalog`)
	if got := clusterVersion(t, s, "auto"); got.Desired != "4.20.3" || !strings.Contains(got.Message, "no longer offers 4.20.3") {
		t.Errorf("after 4.20.3 was pulled, cluster auto is %+v; want 4.20.3 kept, saying the catalog no longer offers it", got)
	}
	if out, err := s.kubectl(t, "wait", `--for=jsonpath={.status.conditions[?(@.type=="Delivered")].reason}=VersionNotInCatalog`, "--timeout=60s", "nodepool/auto.workers"); err != nil {
		desc, _ := s.kubectl(t, "get", "nodepool/auto.workers", "-o", "yaml")
		t.Fatalf("the pool does not say its release was pulled: %v\n%s\n%s", err, out, desc)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	st.startServer(t)
	s = st.server
	// Four resyncs answered since the restart, the later ones after the server offered every bundle.
	waitForMetric(t, s.Kubeconfig, `maestro_source_resyncs_total{direction="received"} 4`)
	namespace := "ocm-dev-" + s.mustKubectl(t, "get", "hcpcluster/auto", "-o", "jsonpath={.status.clusterID}")
	consistently(t, 3*time.Second, func() string {
		for _, o := range []struct {
			resource schema.GroupVersionResource
			name     string
		}{{hostedClusters, "auto"}, {hyperShiftNodePools, "auto-workers"}} {
			obj, err := st.mc.Dynamic.Resource(o.resource).Namespace(namespace).Get(t.Context(), o.name, metav1.GetOptions{})
			if err != nil || obj.GetDeletionTimestamp() != nil {
				return fmt.Sprintf("after the restart, %s %s/%s is gone or going: %v", o.resource.Resource, namespace, o.name, err)
			}
		}
		if image := hostedClusterImage(t, st, "auto"); !strings.Contains(image, ":4.20.3-") {
			return "the HostedCluster of cluster auto runs " + image + " after the restart; want 4.20.3 kept"
		}
		return ""
	})
	if got := clusterVersion(t, s, "auto"); got.Desired != "4.20.3" || got.Reason != "NotInCatalog" {
		t.Errorf("after the restart cluster auto is %+v; want 4.20.3 kept, NotInCatalog", got)
	}
	// What the agent reports of the kept bundle still reaches the cluster's status.
	waitCluster(t, s, "auto", `jsonpath={.status.conditions[?(@.type=="Delivered")].reason}=Applied`)
	if got := s.mustKubectl(t, "get", "hcpcluster/auto", "-o", "jsonpath={.status.provisioningState}"); got != "Succeeded" {
		t.Errorf("cluster auto is %s after the restart; want Succeeded", got)
	}
	if got := s.mustKubectl(t, "get", "nodepool/auto.workers", "-o", "jsonpath={.status.provisioningState} {.status.desiredVersion}"); got != "Succeeded 4.20.3" {
		t.Errorf("the pool is %q after the restart; want Succeeded on 4.20.3", got)
	}
	if rejected := us.Rejected(); len(rejected) > 0 {
		t.Errorf("the update service refused requests the real one would refuse: %v", rejected)
	}
}

// clusterManifest writes an HCPCluster of channel group fast on version, with its own infrastructure.
func clusterManifest(t *testing.T, name, version string, policy v1alpha1.UpgradePolicy) string {
	t.Helper()
	c := fixtures.HCPCluster("default", name)
	c.TypeMeta = metav1.TypeMeta{APIVersion: "hcp.aro.azure.com/v1alpha1", Kind: "HCPCluster"}
	c.Spec.DNS.BaseDomainPrefix = name
	c.Spec.Version = v1alpha1.VersionProfile{ID: version, ChannelGroup: "fast", UpgradePolicy: policy}
	c.Spec.Platform.SubnetID += "-" + name
	c.Spec.Platform.NetworkSecurityGroupID += "-" + name
	c.Spec.Platform.ManagedResourceGroup = "mrg-" + name
	raw, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, name+".yaml", string(raw))
}

type versionState struct {
	Desired, Actual, Reason, Message string
}

func clusterVersion(t *testing.T, s *server, name string) versionState {
	t.Helper()
	var c v1alpha1.HCPCluster
	if err := yaml.Unmarshal([]byte(s.mustKubectl(t, "get", "hcpcluster/"+name, "-o", "json")), &c); err != nil {
		t.Fatal(err)
	}
	v := versionState{Desired: c.Status.Version.Desired, Actual: c.Status.Version.Actual}
	for _, cond := range c.Status.Conditions {
		if cond.Type == v1alpha1.ConditionVersionResolved {
			v.Reason, v.Message = cond.Reason, cond.Message
		}
	}
	return v
}

func waitCluster(t *testing.T, s *server, name, condition string) {
	t.Helper()
	if out, err := s.kubectl(t, "wait", "--for="+condition, "--timeout=120s", "hcpcluster/"+name); err != nil {
		desc, _ := s.kubectl(t, "get", "hcpcluster/"+name, "-o", "yaml")
		t.Fatalf("kubectl wait --for=%s hcpcluster/%s: %v\n%s\n%s", condition, name, err, out, desc)
	}
}

// waitVersions waits until the server offers exactly the named OpenShiftVersions.
func waitVersions(t *testing.T, s *server, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		out, err := s.kubectl(t, "get", "ocpv", "-o", `jsonpath={range .items[*]}{.metadata.name} {end}`)
		got = strings.TrimSpace(out)
		return err == nil && got == want, nil
	})
	if err != nil {
		t.Fatalf("the server offers %q; want %q", got, want)
	}
}

// versionsState prints every OpenShiftVersion with its resourceVersion.
func versionsState(t *testing.T, s *server) string {
	t.Helper()
	return s.mustKubectl(t, "get", "ocpv", "-o", `jsonpath={range .items[*]}{.metadata.name}@{.metadata.resourceVersion} {end}`)
}

// consistently checks that check finds nothing wrong for the whole of d.
func consistently(t *testing.T, d time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if msg := check(); msg != "" {
			t.Fatal(msg)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func hostedClusterImage(t *testing.T, st *deliveryStack, name string) string {
	t.Helper()
	id := st.server.mustKubectl(t, "get", "hcpcluster/"+name, "-o", "jsonpath={.status.clusterID}")
	hc, err := st.mc.Dynamic.Resource(hostedClusters).Namespace("ocm-dev-"+id).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the HostedCluster of %s: %v", name, err)
	}
	image, _ := hc.Object["spec"].(map[string]any)["release"].(map[string]any)["image"].(string)
	return image
}
