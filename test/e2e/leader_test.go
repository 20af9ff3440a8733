package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"sigs.k8s.io/yaml"
)

// TestControllersFollowTheLeader runs two replicas on one etcd cluster: both serve the API, one runs the
// controllers; when it dies, the other takes over.
func TestControllersFollowTheLeader(t *testing.T) {
	etcd := framework.StartEtcd(t)
	args := []string{"--etcd-servers=" + strings.Join(etcd.ClientURLs, ","), "--mqtt-bind-address="}
	replicas := []*server{}
	for range 2 {
		replicas = append(replicas, &server{
			HCPAPIServerProcess: framework.StartHCPAPIServerProcess(t, t.TempDir(), args...),
			cacheDir:            filepath.Join(t.TempDir(), "kubectl-cache"),
		})
	}
	leader := waitForLeader(t, replicas)
	follower := replicas[1-leader]

	// The follower serves the API; the leader's controllers act on what it stores. The placement controller
	// is the one that acts here: with a management cluster whose agent never connects (Maestro is off), it
	// says in Placed why that one cannot take the cluster, which the create's own Placed does not.
	mc := fixtures.ManagementCluster("mc-1")
	mc.APIVersion, mc.Kind = "hcp.aro.azure.com/v1alpha1", "ManagementCluster"
	raw, err := yaml.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	follower.mustKubectl(t, "apply", "-f", writeFile(t, "mc-1.yaml", string(raw)))
	applyCluster(t, follower, "first")
	waitPlacementTried(t, follower, "first")

	if err := replicas[leader].Kill(); err != nil {
		t.Fatal(err)
	}
	applyCluster(t, follower, "second")
	// The dead leader's session expires within its TTL; then the follower leads.
	waitPlacementTried(t, follower, "second")
	if !leads(t, follower) {
		t.Error("the surviving replica's controllers placed the cluster but it never logged that it became the leader")
	}
}

func leads(t *testing.T, s *server) bool {
	t.Helper()
	log, err := os.ReadFile(s.LogFile)
	return err == nil && strings.Contains(string(log), "Became the leader")
}

func waitForLeader(t *testing.T, replicas []*server) int {
	t.Helper()
	leader := -1
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		n := 0
		for i, s := range replicas {
			if leads(t, s) {
				leader, n = i, n+1
			}
		}
		if n > 1 {
			t.Fatal("both replicas say they lead")
		}
		return n == 1, nil
	})
	if err != nil {
		t.Fatal("no replica became the leader within a minute")
	}
	return leader
}

func applyCluster(t *testing.T, s *server, name string) {
	t.Helper()
	c := fixtures.HCPCluster("default", name)
	c.APIVersion, c.Kind = "hcp.aro.azure.com/v1alpha1", "HCPCluster"
	raw, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	s.mustKubectl(t, "apply", "-f", writeFile(t, name+".yaml", string(raw)))
}

// waitPlacementTried waits until the placement controller looked for a management cluster for the cluster
// and found mc-1 without an agent. The registry stores a cluster unplaced and with its version resolved, so
// only what placement adds to Placed says a controller acted.
func waitPlacementTried(t *testing.T, s *server, name string) {
	t.Helper()
	want := clusterfacts.UnplacedMessage("eastus") + "; without a connected agent: mc-1"
	var message string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 50*time.Second, true, func(context.Context) (bool, error) {
		message = s.mustKubectl(t, "get", "hcpcluster/"+name, "-o", `jsonpath={.status.conditions[?(@.type=="Placed")].message}`)
		return message == want, nil
	})
	if err != nil {
		t.Fatalf("cluster %s: Placed says %q, want %q from the leader's placement controller", name, message, want)
	}
}
