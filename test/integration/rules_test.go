package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// The rules over several objects hold when requests race: each test fires racing requests of which
// only some may succeed, at one server and at two replicas sharing an etcd, and counts.

// racers is how many requests race in each test.
const racers = 50

// servers are the ways the tests reach the API: the package's server alone, and two replicas that share
// an etcd cluster (requests alternate between them).
func servers(t *testing.T) map[string][]versioned.Interface {
	t.Helper()
	etcd := framework.StartEtcd(t)
	var replicas []versioned.Interface
	for i := range 2 {
		s, err := framework.StartInProcessServer(context.Background(), t.TempDir(), framework.InProcessOptions{
			Args: []string{"--etcd-servers=" + strings.Join(etcd.ClientURLs, ",")},
		})
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		t.Cleanup(func() { _ = s.Stop() })
		replicas = append(replicas, s.Client)
	}
	return map[string][]versioned.Interface{"one server": {client()}, "two replicas": replicas}
}

// race runs request(i, client) for i in [0, racers) at once, spread over clients, and returns the errors.
func race(clients []versioned.Interface, request func(i int, c versioned.Interface) error) []error {
	errs := make([]error, racers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range racers {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = request(i, clients[i%len(clients)])
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// tally checks that exactly want requests succeeded and that every other was refused as refused says,
// with a message that says message.
func tally(t *testing.T, errs []error, want int, refused func(error) bool, message string) {
	t.Helper()
	succeeded := 0
	for _, err := range errs {
		switch {
		case err == nil:
			succeeded++
		case !refused(err) || !strings.Contains(err.Error(), message):
			t.Errorf("refused with %v; want a refusal that says %q", err, message)
		}
	}
	if succeeded != want {
		t.Errorf("%d of %d racing requests succeeded; want exactly %d", succeeded, len(errs), want)
	}
}

// Each piece of Azure infrastructure a cluster uses alone is claimed by one of racing creates; the others
// use their own of the two other kinds, so that only the one raced for is shared.
func TestRacingClustersGetOneOfEachInfrastructure(t *testing.T) {
	clients := servers(t)
	for _, tc := range []struct {
		name, field, rule string
		share             func(c *v1alpha1.HCPCluster, shared string, i int)
	}{
		{name: "subnet", field: "spec.platform.subnetID", rule: "a subnet can serve one cluster only",
			share: func(c *v1alpha1.HCPCluster, shared string, i int) { c.Spec.Platform.SubnetID = caseOf(shared, i) }},
		{name: "network security group", field: "spec.platform.networkSecurityGroupID", rule: "a network security group can serve one cluster only",
			share: func(c *v1alpha1.HCPCluster, shared string, i int) {
				c.Spec.Platform.NetworkSecurityGroupID = caseOf(shared, i)
			}},
		{name: "managed resource group", field: "spec.platform.managedResourceGroup", rule: "a managed resource group can serve one cluster only",
			share: func(c *v1alpha1.HCPCluster, shared string, i int) {
				c.Spec.Platform.ManagedResourceGroup = caseOf(shared, i)
			}},
	} {
		for name, replicas := range clients {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				ctx, ns := context.Background(), namespace(t)
				base := fixtures.HCPCluster(ns, "x")
				shared := map[string]string{
					"subnet":                 base.Spec.Platform.SubnetID + "-" + ns,
					"network security group": base.Spec.Platform.NetworkSecurityGroupID + "-" + ns,
					"managed resource group": "mrg-" + ns,
				}[tc.name]
				errs := race(replicas, func(i int, c versioned.Interface) error {
					cluster := fixtures.HCPCluster(ns, fmt.Sprintf("c%d", i))
					// Each racer's own infrastructure, then the piece they all race for.
					cluster.Spec.Platform.SubnetID = fmt.Sprintf("%s-%s-%d", base.Spec.Platform.SubnetID, ns, i)
					cluster.Spec.Platform.NetworkSecurityGroupID = fmt.Sprintf("%s-%s-%d", base.Spec.Platform.NetworkSecurityGroupID, ns, i)
					cluster.Spec.Platform.ManagedResourceGroup = fmt.Sprintf("mrg-%s-%d", ns, i)
					tc.share(cluster, shared, i)
					_, err := c.HcpV1alpha1().HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{})
					return err
				})
				tally(t, errs, 1, apierrors.IsInvalid, tc.field)
				for _, err := range errs {
					if err != nil && !strings.Contains(err.Error(), tc.rule) {
						t.Errorf("refusal %q does not say why", err)
					}
				}
			})
		}
	}
}

// caseOf spells every other racer's value in upper case: Azure IDs and names ignore case.
func caseOf(value string, i int) string {
	if i%2 == 1 {
		return strings.ToUpper(value)
	}
	return value
}

func TestRacingManagementClustersGetOneConsumerName(t *testing.T) {
	for name, clients := range servers(t) {
		t.Run(name, func(t *testing.T) {
			ctx, ns := context.Background(), namespace(t)
			errs := race(clients, func(i int, c versioned.Interface) error {
				mc := fixtures.ManagementCluster(fmt.Sprintf("%s-%d", ns, i))
				mc.Spec.ConsumerName = ns
				_, err := c.HcpV1alpha1().ManagementClusters().Create(ctx, mc, metav1.CreateOptions{})
				return err
			})
			tally(t, errs, 1, apierrors.IsInvalid, "spec.consumerName")
		})
	}
}

// A cluster has one external auth: of racing creates of its first one, through one server or two, one wins
// and the others are told why, with 409 Conflict as ARM answers.
func TestRacingExternalAuthsGetOnePerCluster(t *testing.T) {
	for name, clients := range servers(t) {
		t.Run(name, func(t *testing.T) {
			ctx, ns := context.Background(), namespace(t)
			succeededCluster(t, clients[0], ns, "dev")
			errs := race(clients, func(i int, c versioned.Interface) error {
				_, err := c.HcpV1alpha1().ExternalAuths(ns).Create(ctx, fixtures.ExternalAuth(ns, "dev", fmt.Sprintf("idp-%d", i)), metav1.CreateOptions{})
				return err
			})
			tally(t, errs, 1, apierrors.IsConflict, "a cluster can have one external auth only")
			list, err := clients[1%len(clients)].HcpV1alpha1().ExternalAuths(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 {
				t.Fatalf("stored external auths: %v, %v; want exactly one", list, err)
			}
			// Once it is gone, the cluster may have another.
			winner := list.Items[0]
			if err := clients[0].HcpV1alpha1().ExternalAuths(ns).Delete(ctx, winner.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			removeFinalizers(t, clients[0], ns, winner.Name)
			if _, err := clients[1%len(clients)].HcpV1alpha1().ExternalAuths(ns).Create(ctx, fixtures.ExternalAuth(ns, "dev", "next"), metav1.CreateOptions{}); err != nil {
				t.Errorf("a new external auth after the first is gone: %v", err)
			}
		})
	}
}

func TestRacingCredentialsStopAtTheLimit(t *testing.T) {
	for name, clients := range servers(t) {
		t.Run(name, func(t *testing.T) {
			ctx, ns := context.Background(), namespace(t)
			succeededCluster(t, clients[0], ns, "dev")
			errs := race(clients, func(i int, c versioned.Interface) error {
				_, err := c.HcpV1alpha1().BreakglassCredentials(ns).Create(ctx, fixtures.BreakglassCredential(ns, "dev", fmt.Sprintf("oncall-%d", i)), metav1.CreateOptions{})
				return err
			})
			tally(t, errs, 10, apierrors.IsForbidden, "HCPCluster dev already has 10 unexpired break-glass credentials and at most 10 are allowed")
		})
	}
}

func TestRacingDeletesKeepTheLastNodePool(t *testing.T) {
	const pools = 5
	for name, clients := range servers(t) {
		t.Run(name, func(t *testing.T) {
			ctx, ns := context.Background(), namespace(t)
			succeededCluster(t, clients[0], ns, "dev")
			for i := range pools {
				if _, err := clients[0].HcpV1alpha1().NodePools(ns).Create(ctx, fixtures.NodePool(ns, "dev", fmt.Sprintf("p%d", i)), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Every pool is deleted by racers/pools requests at once; a pool already being deleted answers
			// a second delete without error, so what counts is how many pools are left standing.
			errs := race(clients, func(i int, c versioned.Interface) error {
				return c.HcpV1alpha1().NodePools(ns).Delete(ctx, fmt.Sprintf("dev.p%d", i%pools), metav1.DeleteOptions{})
			})
			for _, err := range errs {
				if err != nil && !apierrors.IsNotFound(err) &&
					(!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "is the last node pool of HCPCluster dev")) {
					t.Errorf("refused with %v; want the last-pool refusal", err)
				}
			}
			list, err := clients[0].HcpV1alpha1().NodePools(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var standing []string
			for _, p := range list.Items {
				if p.DeletionTimestamp == nil {
					standing = append(standing, p.Name)
				}
			}
			if len(standing) != 1 {
				t.Errorf("pools left standing after racing deletes: %v; want exactly one", standing)
			}
		})
	}
}

// succeededCluster creates an HCPCluster and marks it Succeeded, as its delivery would.
func succeededCluster(t *testing.T, c versioned.Interface, ns, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.HcpV1alpha1().HCPClusters(ns).Create(ctx, fixtures.HCPCluster(ns, name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster, err := c.HcpV1alpha1().HCPClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
		_, err = c.HcpV1alpha1().HCPClusters(ns).UpdateStatus(ctx, cluster, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTheLastNodePoolStaysOnlyWhileItsClusterRuns(t *testing.T) {
	ctx := context.Background()
	hc := client().HcpV1alpha1()
	for _, tc := range []struct {
		name string
		// prepare brings the cluster dev, with the pool dev.workers, into the state the case needs.
		prepare func(t *testing.T, ns string)
		refused bool
	}{
		{name: "last pool of a Succeeded cluster", prepare: func(t *testing.T, ns string) { succeeded(t, ns, "dev") }, refused: true},
		{name: "another pool remains", prepare: func(t *testing.T, ns string) {
			succeeded(t, ns, "dev")
			if _, err := hc.NodePools(ns).Create(ctx, fixtures.NodePool(ns, "dev", "infra"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "last pool of a cluster still provisioning", prepare: func(*testing.T, string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t)
			createCluster(t, ns, "dev")
			if _, err := hc.NodePools(ns).Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, ns)
			err := hc.NodePools(ns).Delete(ctx, "dev.workers", metav1.DeleteOptions{})
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "NodePool dev.workers is the last node pool of HCPCluster dev, which is Succeeded; create another node pool first, or delete the cluster") {
				t.Fatalf("got %v; want the last-pool refusal", err)
			}
			// Deleting the cluster deletes its pools, the last one too.
			if err := hc.HCPClusters(ns).Delete(ctx, "dev", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := hc.NodePools(ns).Delete(ctx, "dev.workers", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("the last pool of a cluster being deleted was refused: %v", err)
			}
		})
	}
}

// TestClustersStoredWithoutClaimsGetThemAtStart starts a server on an etcd whose clusters were stored
// by a server that kept no claims (here: the claims are removed from etcd), and expects their subnets
// held all the same.
func TestClustersStoredWithoutClaimsGetThemAtStart(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	etcd := framework.StartEtcd(t)
	args := framework.InProcessOptions{Args: []string{"--etcd-servers=" + strings.Join(etcd.ClientURLs, ",")}}
	first, err := framework.StartInProcessServer(ctx, t.TempDir(), args)
	if err != nil {
		t.Fatal(err)
	}
	old := fixtures.HCPCluster(ns, "old")
	if _, err := first.Client.HcpV1alpha1().HCPClusters(ns).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	raw, err := clientv3.New(clientv3.Config{Endpoints: etcd.ClientURLs})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Delete(ctx, "/hcp-apiserver/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}

	second, err := framework.StartInProcessServer(ctx, t.TempDir(), args)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Stop() })
	newer := fixtures.HCPCluster(ns, "new")
	newer.Spec.Platform.SubnetID = old.Spec.Platform.SubnetID
	_, err = second.Client.HcpV1alpha1().HCPClusters(ns).Create(ctx, newer, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "is already used by HCPCluster "+ns+"/old") {
		t.Errorf("a subnet of a cluster stored without claims: got %v, want it refused as used by %s/old", err, ns)
	}
}

// removeFinalizers lets a deleted object go as its controller would once what it delivered is gone, and
// waits until it is.
func removeFinalizers(t *testing.T, c versioned.Interface, ns, name string) {
	t.Helper()
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ea, err := c.HcpV1alpha1().ExternalAuths(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		ea.Finalizers = nil
		if _, err := c.HcpV1alpha1().ExternalAuths(ns).Update(ctx, ea, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return false, err
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("external auth %s/%s is still there: %v", ns, name, err)
	}
}
