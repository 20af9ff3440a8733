package integration

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// refusedWith checks the kind of a refusal and that its message names the plugin and the rule.
func refusedWith(t *testing.T, err error, is func(error) bool, plugin, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("admitted; want %s to refuse with %q", plugin, message)
	}
	if !is(err) {
		t.Fatalf("refused with %v; want another status", err)
	}
	if !strings.Contains(err.Error(), plugin) || !strings.Contains(err.Error(), message) {
		t.Errorf("refusal %q does not name %s and %q", err.Error(), plugin, message)
	}
}

func succeeded(t *testing.T, ns, name string) {
	t.Helper()
	_, err := updateClusterStatus(context.Background(), ns, name, func(c *v1alpha1.HCPCluster) {
		c.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVersionPolicyAdmission(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clusters := client().HcpV1alpha1().HCPClusters(ns)

	old := fixtures.HCPCluster(ns, "old")
	old.Spec.Version.ID = "4.18"
	_, err := clusters.Create(ctx, old, metav1.CreateOptions{})
	refusedWith(t, err, apierrors.IsInvalid, "VersionPolicy", `spec.version.id: Invalid value: "4.18": must be one of 4.20, 4.21 in channel group stable`)

	if _, err := clusters.Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Spec.Version.ID = "4.22" })
	refusedWith(t, err, apierrors.IsInvalid, "VersionPolicy", "must be one of 4.20, 4.21")

	if _, err := updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Spec.Version.ID = "4.21" }); err != nil {
		t.Errorf("one minor up was refused: %v", err)
	}

	pool := fixtures.NodePool(ns, "dev", "workers")
	pool.Spec.Version.ID = "4.20.99"
	_, err = client().HcpV1alpha1().NodePools(ns).Create(ctx, pool, metav1.CreateOptions{})
	refusedWith(t, err, apierrors.IsInvalid, "VersionPolicy", "is not a release of channel group stable")
}

func TestClusterReferenceAdmission(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	hc := client().HcpV1alpha1()

	_, err := hc.NodePools(ns).Create(ctx, fixtures.NodePool(ns, "missing", "workers"), metav1.CreateOptions{})
	refusedWith(t, err, apierrors.IsInvalid, "ClusterReference", `spec.clusterName: Not found: "missing"`)

	// A cluster and its pool created back to back, as kubectl apply -f does.
	if _, err := hc.HCPClusters(ns).Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := hc.NodePools(ns).Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a pool of a cluster created just before was refused: %v", err)
	}

	// Nothing new joins a cluster that is being deleted (a finalizer keeps it visible meanwhile).
	held := fixtures.HCPCluster(ns, "leaving")
	held.Finalizers = []string{"test.hcp.aro.azure.com/hold"}
	if _, err := hc.HCPClusters(ns).Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = hc.HCPClusters(ns).Patch(context.Background(), "leaving", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := hc.HCPClusters(ns).Delete(ctx, "leaving", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = hc.BreakglassCredentials(ns).Create(ctx, fixtures.BreakglassCredential(ns, "leaving", "late"), metav1.CreateOptions{})
	refusedWith(t, err, apierrors.IsConflict, "ClusterReference", "HCPCluster leaving is being deleted")
}

func TestBreakglassPolicyAdmission(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	hc := client().HcpV1alpha1()
	if _, err := hc.HCPClusters(ns).Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := hc.BreakglassCredentials(ns).Create(ctx, fixtures.BreakglassCredential(ns, "dev", "early"), metav1.CreateOptions{})
	refusedWith(t, err, apierrors.IsConflict, "BreakglassPolicy", "Succeeded")

	succeeded(t, ns, "dev")
	if _, err := hc.BreakglassCredentials(ns).Create(ctx, fixtures.BreakglassCredential(ns, "dev", "oncall"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a credential of a Succeeded cluster was refused: %v", err)
	}
}

func TestManagementClusterProtectionAdmission(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	hc := client().HcpV1alpha1()
	mc := ns + "-mc"
	if _, err := hc.ManagementClusters().Create(ctx, fixtures.ManagementCluster(mc), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := hc.HCPClusters(ns).Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Placed by hand: no agent is connected here for the placement controller to place it.
	if _, err := updateClusterStatus(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Status.ManagementCluster = mc }); err != nil {
		t.Fatal(err)
	}
	err := hc.ManagementClusters().Delete(ctx, mc, metav1.DeleteOptions{})
	refusedWith(t, err, apierrors.IsForbidden, "ManagementClusterProtection", ns+"/dev")

	if err := hc.HCPClusters(ns).Delete(ctx, "dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// While its control plane may still run there, the deleted cluster keeps its management cluster.
	err = hc.ManagementClusters().Delete(ctx, mc, metav1.DeleteOptions{})
	refusedWith(t, err, apierrors.IsForbidden, "ManagementClusterProtection", ns+"/dev")
	// No agent will report the control plane gone: let the cluster go by hand, as an SRE would.
	if _, err := updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) { c.Finalizers = nil }); err != nil {
		t.Fatal(err)
	}
	waitClusterGone(t, ns, "dev")
	if err := hc.ManagementClusters().Delete(ctx, mc, metav1.DeleteOptions{}); err != nil {
		t.Errorf("an empty management cluster could not be deleted: %v", err)
	}
}

func TestAdmissionPluginsCanBeDisabled(t *testing.T) {
	ctx := context.Background()
	s, err := framework.StartInProcessServer(ctx, t.TempDir(), framework.InProcessOptions{
		Args: []string{"--disable-admission-plugins=VersionPolicy,ClusterReference"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	old := fixtures.HCPCluster("default", "old")
	old.Spec.Version.ID = "4.18"
	if _, err := s.Client.HcpV1alpha1().HCPClusters("default").Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Errorf("with VersionPolicy disabled, 4.18 was refused: %v", err)
	}
	if _, err := s.Client.HcpV1alpha1().NodePools("default").Create(ctx, fixtures.NodePool("default", "missing", "workers"), metav1.CreateOptions{}); err != nil {
		t.Errorf("with ClusterReference disabled, a pool of a missing cluster was refused: %v", err)
	}
	// The plugins left on still refuse: old is not Succeeded.
	_, err = s.Client.HcpV1alpha1().BreakglassCredentials("default").Create(ctx, fixtures.BreakglassCredential("default", "old", "early"), metav1.CreateOptions{})
	refusedWith(t, err, apierrors.IsConflict, "BreakglassPolicy", "Succeeded")
}

func TestStandaloneRefusesPluginsThatNeedKubeAPIServer(t *testing.T) {
	_, err := framework.StartInProcessServer(context.Background(), t.TempDir(), framework.InProcessOptions{
		Args: []string{"--enable-admission-plugins=NamespaceLifecycle"},
	})
	if err == nil || !strings.Contains(err.Error(), "NamespaceLifecycle needs kube-apiserver") {
		t.Errorf("got %v, want a refusal of NamespaceLifecycle in standalone mode", err)
	}
}
