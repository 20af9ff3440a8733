package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/azureidentities"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/azurestandin"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// azureSide is a delivery stack whose hcp-apiserver provisions Azure, against a stand-in Azure that
// refuses any request the REST API documents would (the test fails on one at its end).
type azureSide struct {
	*deliveryStack
	az *azurestandin.Server
	// config is the server's --azure-config, and clients the service's clients made from it, which the
	// test reads Azure back with.
	config  string
	clients *azure.Clients
	zoneID  string
}

const (
	azureServiceSubscription = "11111111-1111-1111-1111-111111111111"
	identityType             = "Microsoft.ManagedIdentity/userAssignedIdentities"
)

func startAzureSide(t *testing.T) *azureSide {
	t.Helper()
	zoneID := "/subscriptions/" + azureServiceSubscription + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/" + render.DefaultDNSZone
	az := azurestandin.Start(t, azurestandin.Options{ResourceGroupDeleteDuration: 3 * time.Second, PollRetryAfter: time.Second})
	az.AddZone(zoneID)
	cfg := az.WriteConfig(t, t.TempDir(), azureServiceSubscription, zoneID)
	loaded, err := azure.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := azure.NewClients(loaded)
	if err != nil {
		t.Fatal(err)
	}
	// The server starts without Azure; enableAzure restarts it with.
	st := startDeliveryStack(t, hypershiftsim.Options{}, "--azure-recheck-interval=1s")
	return &azureSide{deliveryStack: st, az: az, config: cfg, clients: clients, zoneID: zoneID}
}

// recordNames are the names of the cluster's API and applications relative to the service's zone, as its
// status.api.url says them.
func (a *azureSide) recordNames(t *testing.T, cluster string) (api, apps string) {
	t.Helper()
	url := a.server.mustKubectl(t, "get", "hcpcluster/"+cluster, "-o", "jsonpath={.status.api.url}")
	host := strings.TrimSuffix(strings.TrimPrefix(url, "https://"), ":443")
	relative, ok := strings.CutSuffix(host, "."+render.DefaultDNSZone)
	if !ok || !strings.HasPrefix(relative, "api.") {
		t.Fatalf("%s: status.api.url %q is not api.<name> in the zone %s", cluster, url, render.DefaultDNSZone)
	}
	return relative, "*.apps." + strings.TrimPrefix(relative, "api.")
}

// recordAddress reads the A record of name back through Azure DNS's REST API: its one address, "" when
// there is no record.
func (a *azureSide) recordAddress(t *testing.T, name string) string {
	t.Helper()
	rs, err := a.clients.DNS.GetRecordSet(t.Context(), a.zoneID, azure.RecordTypeA, name)
	if azure.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var addresses []string
	for _, r := range rs.Properties.ARecords {
		addresses = append(addresses, r.IPv4Address)
	}
	return strings.Join(addresses, ",")
}

// loadBalancerAddress is the address the management cluster gives the load balancer service of the
// cluster's control plane.
func (a *azureSide) loadBalancerAddress(t *testing.T, cluster, service string) string {
	t.Helper()
	clusterID := a.server.mustKubectl(t, "get", "hcpcluster/"+cluster, "-o", "jsonpath={.status.clusterID}")
	svc, err := a.mc.Kube.CoreV1().Services(hypershiftsim.ControlPlaneNamespace("ocm-dev-"+clusterID, cluster)).Get(t.Context(), service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Status.LoadBalancer.Ingress) == 0 {
		t.Fatalf("%s: the load balancer %s has no address", cluster, service)
	}
	return svc.Status.LoadBalancer.Ingress[0].IP
}

// checkRecords checks that the cluster's names resolve, through the service's zone, to its load balancers.
func (a *azureSide) checkRecords(t *testing.T, cluster string) {
	t.Helper()
	api, apps := a.recordNames(t, cluster)
	for _, r := range []struct{ name, service, status string }{
		{api, hypershiftsim.RouterServiceName, "{.status.api.address}"},
		{apps, hypershiftsim.AppsIngressServiceName, "{.status.console.address}"},
	} {
		want := a.loadBalancerAddress(t, cluster, r.service)
		if got := a.recordAddress(t, r.name); got != want {
			t.Errorf("%s: the A record %s is %q, want the address of its load balancer %s, %s", cluster, r.name, got, r.service, want)
		}
		if got := a.server.mustKubectl(t, "get", "hcpcluster/"+cluster, "-o", "jsonpath="+r.status); got != want {
			t.Errorf("%s: %s is %q, want %s", cluster, r.status, got, want)
		}
	}
}

// recordWrites counts the writes of the A record name that Azure took.
func (a *azureSide) recordWrites(name string) int {
	path := a.zoneID + "/A/" + name
	return a.answered(http.MethodPut, path, http.StatusCreated) + a.answered(http.MethodPut, path, http.StatusOK)
}

// enableAzure restarts the server with --azure-config.
func (a *azureSide) enableAzure(t *testing.T) {
	t.Helper()
	if err := a.server.Stop(); err != nil {
		t.Fatal(err)
	}
	a.args = append(a.args, "--azure-config="+a.config)
	a.startServer(t)
}

// grant makes the identities of the fixture cluster name exist, as the customer makes them, and gives
// them the roles the service requires; without the role named skip.
func (a *azureSide) grant(name string, skipNSG bool) {
	networkContributor := "/subscriptions/" + fixtures.SubscriptionID + azureidentities.NetworkContributor
	vnet := fixtures.ARMID("Microsoft.Network/virtualNetworks", "vnet")
	nsg := fixtures.ARMID("Microsoft.Network/networkSecurityGroups", "default-"+name)
	cp := a.az.AddIdentity(fixtures.ARMID(identityType, name+"-cp"))
	svc := a.az.AddIdentity(fixtures.ARMID(identityType, name+"-service"))
	a.az.AddRoleAssignment(vnet, cp.PrincipalID, networkContributor) // covers the subnet
	a.az.AddRoleAssignment(vnet, svc.PrincipalID, networkContributor)
	a.az.AddRoleAssignment(nsg, svc.PrincipalID, networkContributor)
	if !skipNSG {
		a.az.AddRoleAssignment(nsg, cp.PrincipalID, networkContributor)
	}
}

func managedGroupID(name string) string {
	return "/subscriptions/" + fixtures.SubscriptionID + "/resourceGroups/default-" + name + "-managed"
}

// answered counts the requests the stand-in answered with method on path (any case) and status (any, if 0).
func (a *azureSide) answered(method, path string, status int) int {
	n := 0
	for _, r := range a.az.Requests() {
		if r.Method == method && strings.EqualFold(r.Path, path) && (status == 0 || r.Status == status) {
			n++
		}
	}
	return n
}

func (a *azureSide) condition(t *testing.T, cluster, conditionType, field string) string {
	t.Helper()
	return a.server.mustKubectl(t, "get", "hcpcluster/"+cluster, "-o",
		fmt.Sprintf(`jsonpath={.status.conditions[?(@.type==%q)].%s}`, conditionType, field))
}

func (a *azureSide) waitFor(t *testing.T, what string, timeout time.Duration, done func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return done(), nil
	}); err != nil {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

// TestAzureSide: a cluster running before the server had --azure-config keeps its control plane when it gets
// it, and its group; with --azure-config a cluster is delivered only once its managed identities are valid
// and its managed resource group exists, tagged as its own, in the customer's subscription; Azure
// throttling and failing for a while changes nothing but the time it takes; a cluster whose identity or
// role is missing is refused, naming it, and never delivered, until the customer grants the role; a group
// that is not the cluster's is neither adopted nor deleted; kill -9 while a group is created or deleted
// leaves no orphan and no second group; a deleted cluster's group goes after its control plane.
func TestAzureSide(t *testing.T) {
	a := startAzureSide(t)

	// A cluster delivered while the server provisioned no Azure says AzureDisabled, and keeps its control
	// plane when the server is restarted with Azure: it is not held back, and gets its group.
	a.grant("before", false)
	a.applyClusters(t, "before")
	a.waitStates(t, "Succeeded", 2*time.Minute, "before")
	if reason := a.condition(t, "before", "ManagedResourceGroupReady", "reason"); reason != "AzureDisabled" {
		t.Errorf("a cluster made without Azure has ManagedResourceGroupReady reason %q, want AzureDisabled", reason)
	}
	beforeID := a.server.mustKubectl(t, "get", "hcpcluster/before", "-o", "jsonpath={.status.clusterID}")
	beforeHC, err := a.mc.Dynamic.Resource(hostedClusters).Namespace("ocm-dev-"+beforeID).Get(t.Context(), "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Azure is slow to answer for it: a server that held it back meanwhile would have the agent's resync
	// delete its control plane.
	a.az.Unavailable(http.MethodGet, fixtures.ARMID(identityType, "before-cp"), 20*time.Second)
	a.enableAzure(t)
	s := a.server
	a.grant("good", false)
	a.grant("norole", true)
	a.grant("crash", false)
	a.grant("taken", false)

	// Someone else's group where "taken" wants its managed group.
	if _, err := a.clients.ResourceGroups.EnsureResourceGroup(t.Context(), fixtures.SubscriptionID, "default-taken-managed", "eastus",
		map[string]string{azure.OwnershipTag: "someone-else"}); err != nil {
		t.Fatal(err)
	}

	// Azure is busy: identities are read through 429s, groups written through 503s.
	a.az.Throttle(http.MethodGet, "/subscriptions/"+fixtures.SubscriptionID+"/resourceGroups/rg/providers/Microsoft.ManagedIdentity", 3, time.Second)
	a.az.Unavailable(http.MethodPut, managedGroupID("good"), 6*time.Second)
	a.applyClusters(t, "good", "noidentity", "norole", "taken")
	// And DNS: the writes of good's records are throttled, and fail, a few times each. Its names are known
	// from its create; its records are written only once it is delivered and its load balancers reported.
	goodAPI, goodApps := a.recordNames(t, "good")
	a.az.Throttle(http.MethodPut, a.zoneID+"/A/"+goodAPI, 2, time.Second)
	a.az.UnavailableTimes(http.MethodPut, a.zoneID+"/A/"+goodApps, 6)

	// Refused: the missing identity and the missing role are named, and nothing is made or delivered.
	a.waitStates(t, "Failed", time.Minute, "noidentity", "norole", "taken")
	if reason, msg := a.condition(t, "noidentity", "AzureIdentitiesValid", "reason"), a.condition(t, "noidentity", "AzureIdentitiesValid", "message"); reason != azureidentities.ReasonIdentityMissing ||
		!strings.Contains(msg, fixtures.ARMID(identityType, "noidentity-cp")) {
		t.Errorf("noidentity: AzureIdentitiesValid %s %q, want %s naming its control plane identity", reason, msg, azureidentities.ReasonIdentityMissing)
	}
	nsg := fixtures.ARMID("Microsoft.Network/networkSecurityGroups", "default-norole")
	if reason, msg := a.condition(t, "norole", "AzureIdentitiesValid", "reason"), a.condition(t, "norole", "AzureIdentitiesValid", "message"); reason != azureidentities.ReasonRoleMissing ||
		!strings.Contains(msg, fixtures.ARMID(identityType, "norole-cp")) || !strings.Contains(msg, "4d97b98b-1d4f-4787-a291-c67834d212e7") || !strings.Contains(msg, nsg) {
		t.Errorf("norole: AzureIdentitiesValid %s %q, want %s naming the identity, Network Contributor and the NSG", reason, msg, azureidentities.ReasonRoleMissing)
	}
	if reason, msg := a.condition(t, "taken", "ManagedResourceGroupReady", "reason"), a.condition(t, "taken", "ManagedResourceGroupReady", "message"); reason != "ResourceGroupNotOurs" ||
		!strings.Contains(msg, managedGroupID("taken")) {
		t.Errorf("taken: ManagedResourceGroupReady %s %q, want ResourceGroupNotOurs naming the group", reason, msg)
	}
	for _, name := range []string{"noidentity", "norole"} {
		if reason := a.condition(t, name, "Delivered", "reason"); reason != "AwaitingAzure" {
			t.Errorf("%s: Delivered reason %q, want AwaitingAzure", name, reason)
		}
		if _, ok := a.az.ResourceGroup(managedGroupID(name)); ok {
			t.Errorf("%s: a managed resource group was made for a refused cluster", name)
		}
	}

	// The good one converges through the faults, with one group, tagged as its own, made before delivery.
	a.waitStates(t, "Succeeded", 2*time.Minute, "good")
	if a.answered(http.MethodPut, managedGroupID("good"), http.StatusServiceUnavailable) == 0 ||
		a.answered(http.MethodGet, fixtures.ARMID(identityType, "good-cp"), http.StatusTooManyRequests)+
			a.answered(http.MethodGet, fixtures.ARMID(identityType, "good-service"), http.StatusTooManyRequests)+
			a.answered(http.MethodGet, fixtures.ARMID(identityType, "norole-cp"), http.StatusTooManyRequests)+
			a.answered(http.MethodGet, fixtures.ARMID(identityType, "noidentity-cp"), http.StatusTooManyRequests) == 0 {
		t.Errorf("the faults were not met: requests %v", a.az.Requests())
	}
	clusterID := s.mustKubectl(t, "get", "hcpcluster/good", "-o", "jsonpath={.status.clusterID}")
	group, ok := a.az.ResourceGroup(managedGroupID("good"))
	if !ok || group.Tags[azure.OwnershipTag] != clusterID || group.Tags["aro-hcp.environment"] != "dev" || group.Location != "eastus" {
		t.Fatalf("good's managed group %+v (exists %v), want it in eastus tagged %s=%s", group, ok, azure.OwnershipTag, clusterID)
	}
	if n := a.answered(http.MethodPut, managedGroupID("good"), http.StatusCreated) + a.answered(http.MethodPut, managedGroupID("good"), http.StatusOK); n != 1 {
		t.Errorf("good's group was written %d times, want once", n)
	}
	hc, err := a.mc.Dynamic.Resource(hostedClusters).Namespace("ocm-dev-"+clusterID).Get(t.Context(), "good", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	readyAt, err := time.Parse(time.RFC3339, a.condition(t, "good", "ManagedResourceGroupReady", "lastTransitionTime"))
	if err != nil || hc.GetCreationTimestamp().Time.Before(readyAt) {
		t.Errorf("the HostedCluster was made at %v, before the managed group was ready at %v (%v)", hc.GetCreationTimestamp(), readyAt, err)
	}
	// Succeeded, its names resolve to its load balancers, each record written once through the faults.
	a.checkRecords(t, "good")
	if reason := a.condition(t, "good", "DNSReady", "reason"); reason != "RecordsWritten" {
		t.Errorf("good: DNSReady reason %q, want RecordsWritten", reason)
	}
	if a.answered(http.MethodPut, a.zoneID+"/A/"+goodAPI, http.StatusTooManyRequests) != 2 ||
		a.answered(http.MethodPut, a.zoneID+"/A/"+goodApps, http.StatusServiceUnavailable) != 6 {
		t.Errorf("the DNS faults were not met: requests %v", a.az.Requests())
	}
	for _, name := range []string{goodAPI, goodApps} {
		if n := a.recordWrites(name); n != 1 {
			t.Errorf("good: the record %s was written %d times, want once", name, n)
		}
	}
	counts := a.hostedClustersByName(t)
	for _, name := range []string{"noidentity", "norole", "taken"} {
		if counts[name] != 0 {
			t.Errorf("%s, refused, was delivered: %d HostedClusters", name, counts[name])
		}
	}

	// The API's load balancer gets a new address: its record follows, the applications' stays.
	hcpNamespace := hypershiftsim.ControlPlaneNamespace("ocm-dev-"+clusterID, "good")
	router, err := a.mc.Kube.CoreV1().Services(hcpNamespace).Get(t.Context(), hypershiftsim.RouterServiceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appsBefore := a.recordAddress(t, goodApps)
	router.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.77"}}
	if _, err := a.mc.Kube.CoreV1().Services(hcpNamespace).UpdateStatus(t.Context(), router, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.waitFor(t, "good's API record following its load balancer", time.Minute, func() bool {
		return a.recordAddress(t, goodAPI) == "192.0.2.77"
	})
	a.checkRecords(t, "good")
	if got := a.recordAddress(t, goodApps); got != appsBefore {
		t.Errorf("good's applications record moved from %s to %s with the API's load balancer", appsBefore, got)
	}

	// The cluster from before Azure kept its HostedCluster through the restart and the agent's resync,
	// and has its group now.
	a.waitFor(t, "before's managed group", time.Minute, func() bool {
		g, ok := a.az.ResourceGroup(managedGroupID("before"))
		return ok && g.Tags[azure.OwnershipTag] == beforeID
	})
	if hc, err := a.mc.Dynamic.Resource(hostedClusters).Namespace("ocm-dev-"+beforeID).Get(t.Context(), "before", metav1.GetOptions{}); err != nil || hc.GetUID() != beforeHC.GetUID() {
		t.Errorf("the HostedCluster of the cluster from before Azure was replaced or deleted (%v)", err)
	}
	if state := s.mustKubectl(t, "get", "hcpcluster/before", "-o", "jsonpath={.status.provisioningState}"); state != "Succeeded" {
		t.Errorf("the cluster from before Azure is %s, want Succeeded", state)
	}
	a.waitFor(t, "before's DNS records", time.Minute, func() bool {
		return a.condition(t, "before", "DNSReady", "reason") == "RecordsWritten"
	})
	a.checkRecords(t, "before")

	// The customer grants the missing role: the refused cluster is checked again and comes up.
	a.az.AddRoleAssignment(nsg, a.principal(t, "norole-cp"), "/subscriptions/"+fixtures.SubscriptionID+azureidentities.NetworkContributor)
	a.waitStates(t, "Succeeded", 2*time.Minute, "norole")

	// kill -9 while a group is being made: the restarted server makes no second one and leaves none behind.
	a.az.Unavailable(http.MethodPut, managedGroupID("crash"), 8*time.Second)
	a.applyClusters(t, "crash")
	a.waitFor(t, "a refused write of crash's group", time.Minute, func() bool {
		return a.answered(http.MethodPut, managedGroupID("crash"), http.StatusServiceUnavailable) > 0
	})
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	a.startServer(t)
	s = a.server
	a.waitStates(t, "Succeeded", 2*time.Minute, "crash")
	if n := a.answered(http.MethodPut, managedGroupID("crash"), http.StatusCreated) + a.answered(http.MethodPut, managedGroupID("crash"), http.StatusOK); n != 1 {
		t.Errorf("crash's group was written %d times, want once", n)
	}
	a.checkRecords(t, "crash")
	crashAPI, crashApps := a.recordNames(t, "crash")
	for _, name := range []string{crashAPI, crashApps} {
		if n := a.recordWrites(name); n != 1 {
			t.Errorf("crash: the record %s was written %d times, want once", name, n)
		}
	}
	beforeAPI, beforeApps := a.recordNames(t, "before")
	noroleAPI, noroleApps := a.recordNames(t, "norole")
	a.checkRecords(t, "norole")

	// Deletes: each group goes once its control plane is gone, including across a kill -9 during the
	// group's deletion; the group that is not ours stays.
	s.mustKubectl(t, "delete", "hcpcluster/good", "hcpcluster/crash", "hcpcluster/taken", "hcpcluster/noidentity", "hcpcluster/before", "--wait=false")
	a.waitFor(t, "the deletion of good's group", 2*time.Minute, func() bool {
		return a.answered(http.MethodDelete, managedGroupID("good"), http.StatusAccepted) > 0
	})
	if _, err := a.mc.Dynamic.Resource(hostedClusters).Namespace("ocm-dev-"+clusterID).Get(t.Context(), "good", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("good's managed group was deleted while its HostedCluster is still there (%v)", err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	a.startServer(t)
	s = a.server
	if out, err := s.kubectl(t, "wait", "--for=delete", "hcpcluster/good", "hcpcluster/crash", "hcpcluster/taken", "hcpcluster/noidentity", "hcpcluster/before", "--timeout=2m"); err != nil {
		desc, _ := s.kubectl(t, "get", "hcpclusters", "-o", "yaml")
		t.Fatalf("deleted clusters did not go: %v\n%s\n%s", err, out, desc)
	}
	for _, name := range []string{"good", "crash", "before"} {
		if g, ok := a.az.ResourceGroup(managedGroupID(name)); ok {
			t.Errorf("%s's managed group is left behind: %+v", name, g)
		}
	}
	if g, ok := a.az.ResourceGroup(managedGroupID("taken")); !ok || g.Tags[azure.OwnershipTag] != "someone-else" {
		t.Errorf("the group that was not taken's is %+v (exists %v), want it as its owner left it", g, ok)
	}
	if _, ok := a.az.ResourceGroup(managedGroupID("norole")); !ok {
		t.Errorf("norole's group went with the other clusters")
	}
	// The deleted clusters' records are gone, and only theirs: what is left is norole's.
	left := map[string]bool{}
	for key := range a.az.RecordSets(a.zoneID) {
		left[key] = true
	}
	want := map[string]bool{"A/" + strings.ToLower(noroleAPI): true, "A/" + strings.ToLower(noroleApps): true}
	if !maps.Equal(left, want) {
		t.Errorf("record sets left in the zone %v, want norole's alone %v (deleted: %s %s %s %s %s %s)", left, want,
			goodAPI, goodApps, crashAPI, crashApps, beforeAPI, beforeApps)
	}
}

// principal is the principal ID of the stand-in's identity of the fixtures named name.
func (a *azureSide) principal(t *testing.T, name string) string {
	t.Helper()
	id, ok := a.az.Identity(fixtures.ARMID(identityType, name))
	if !ok {
		t.Fatalf("no identity %s", name)
	}
	return id.PrincipalID
}
