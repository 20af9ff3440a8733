package clusterdns

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/azurestandin"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const (
	clusterID = "7c3f2a10-5b4e-4d8a-9c1f-2e3d4a5b6c7d"
	zoneID    = "/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/dns/providers/Microsoft.Network/dnszones/hcp.aro.example"
)

type testController struct {
	*Controller
	az       *azurestandin.Server
	client   *fake.Clientset
	clusters cache.Indexer
}

func newTestController(t *testing.T, cluster *v1alpha1.HCPCluster) *testController {
	t.Helper()
	az, clients := controllertest.AzureStandIn(t, azurestandin.Options{})
	client := fake.NewSimpleClientset(cluster) //nolint:staticcheck // NewClientset needs the kinds' apply schema, which the generated fake lacks
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	c, err := New(client, hcp.HCPClusters(), clients.DNS, Options{ZoneID: zoneID, Facts: clusterfacts.Settings{Azure: true}, PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tc := &testController{Controller: c, az: az, client: client, clusters: hcp.HCPClusters().Informer().GetIndexer()}
	if err := tc.clusters.Add(cluster); err != nil {
		t.Fatal(err)
	}
	return tc
}

// sync syncs the cluster as the informer holds it, then holds the cluster as stored, as its watch event
// would; it returns the stored cluster, the requeue and the sync's error.
func (tc *testController) sync(t *testing.T, cluster *v1alpha1.HCPCluster) (*v1alpha1.HCPCluster, time.Duration, error) {
	t.Helper()
	after, syncErr := tc.Sync(context.Background(), cluster.Namespace+"/"+cluster.Name)
	got, err := tc.client.HcpV1alpha1().HCPClusters(cluster.Namespace).Get(context.Background(), cluster.Name, metav1.GetOptions{})
	if err != nil {
		return nil, after, syncErr
	}
	if err := tc.clusters.Update(got); err != nil {
		t.Fatal(err)
	}
	return got, after, syncErr
}

// store writes a change the test makes to the cluster, as another writer would.
func (tc *testController) store(t *testing.T, cluster *v1alpha1.HCPCluster) {
	t.Helper()
	if err := tc.client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("hcpclusters"), cluster, cluster.Namespace); err != nil {
		t.Fatal(err)
	}
	if err := tc.clusters.Update(cluster); err != nil {
		t.Fatal(err)
	}
}

// addresses returns the A records of the zone, by relative name, as the stand-in holds them.
func (tc *testController) addresses() map[string]string {
	out := map[string]string{}
	for key, rs := range tc.az.RecordSets(zoneID) {
		name, ok := strings.CutPrefix(key, "A/")
		if !ok {
			continue
		}
		var ips []string
		records, _ := rs.Properties["ARecords"].([]any)
		for _, r := range records {
			if m, ok := r.(map[string]any); ok {
				ips = append(ips, m["ipv4Address"].(string))
			}
		}
		out[name] = strings.Join(ips, ",")
	}
	return out
}

func validCluster() *v1alpha1.HCPCluster {
	cluster := fixtures.HCPCluster("ns", "c")
	cluster.Status.ClusterID = clusterID
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateProvisioning
	return cluster
}

// names returns the cluster's API and applications names relative to the zone.
func names(cluster *v1alpha1.HCPCluster) (api, apps string) {
	a, err := render.ClusterAddresses(cluster, render.Options{})
	if err != nil {
		panic(err)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(a.API, "https://"), ":443")
	relative := strings.TrimSuffix(strings.TrimPrefix(host, "api."), ".hcp.aro.example")
	return "api." + relative, "*.apps." + relative
}

func dnsReady(t *testing.T, cluster *v1alpha1.HCPCluster) metav1.Condition {
	t.Helper()
	cond := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionDNSReady)
	if cond == nil {
		t.Fatalf("no DNSReady in %+v", cluster.Status.Conditions)
	}
	return *cond
}

// The records follow the addresses the management cluster reports: none until there is one, each
// rewritten when its address moves, both deleted with the cluster.
func TestRecordsFollowTheReportedAddresses(t *testing.T) {
	cluster := validCluster()
	tc := newTestController(t, cluster)
	api, apps := names(cluster)

	got, _, err := tc.sync(t, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if cond := dnsReady(t, got); cond.Status != metav1.ConditionFalse || cond.Reason != ReasonAwaitingAddresses ||
		!strings.Contains(cond.Message, "API and applications") {
		t.Errorf("DNSReady %+v, want False %s naming both addresses", cond, ReasonAwaitingAddresses)
	}
	if !slices.Contains(got.Finalizers, Finalizer) {
		t.Errorf("finalizers %v lack %s", got.Finalizers, Finalizer)
	}
	if n := len(tc.addresses()); n != 0 {
		t.Errorf("%d records before any address is reported: %v", n, tc.addresses())
	}

	got.Status.API.Address = "198.51.100.10"
	tc.store(t, got)
	got, _, _ = tc.sync(t, got)
	if cond := dnsReady(t, got); cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "applications") {
		t.Errorf("DNSReady %+v with only the API's address, want False awaiting the applications'", cond)
	}
	got.Status.Console.Address = "203.0.113.20"
	tc.store(t, got)
	got, _, _ = tc.sync(t, got)
	if cond := dnsReady(t, got); cond.Status != metav1.ConditionTrue || cond.Reason != ReasonRecordsWritten ||
		!strings.Contains(cond.Message, "203.0.113.20") || !strings.Contains(cond.Message, "198.51.100.10") {
		t.Errorf("DNSReady %+v, want True naming both records", cond)
	}
	want := map[string]string{api: "198.51.100.10", apps: "203.0.113.20"}
	if got := tc.addresses(); !equalMaps(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
	for _, rs := range tc.az.RecordSets(zoneID) {
		if rs.TTL != TTL || rs.Properties["metadata"].(map[string]any)[azure.OwnershipTag] != clusterID {
			t.Errorf("record set %s %s: TTL %d metadata %v, want %d and the cluster's ID", rs.Type, rs.Name, rs.TTL, rs.Properties["metadata"], TTL)
		}
	}

	// A sync with nothing new writes nothing.
	before := len(tc.az.Requests())
	got, _, _ = tc.sync(t, got)
	for _, r := range tc.az.Requests()[before:] {
		if r.Method != http.MethodGet {
			t.Errorf("a sync with nothing new sent %s %s", r.Method, r.Path)
		}
	}

	// The API's load balancer moves: its record follows, the other stays.
	got.Status.API.Address = "198.51.100.11"
	tc.store(t, got)
	got, _, _ = tc.sync(t, got)
	want[api] = "198.51.100.11"
	if got := tc.addresses(); !equalMaps(got, want) {
		t.Errorf("records after the API's address moved %v, want %v", got, want)
	}

	// Deleted: both go, and then the finalizer.
	got.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tc.store(t, got)
	got, _, err = tc.sync(t, got)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tc.addresses()); n != 0 {
		t.Errorf("records left after the cluster's delete: %v", tc.addresses())
	}
	if got != nil && slices.Contains(got.Finalizers, Finalizer) {
		t.Errorf("finalizers %v still hold %s with the records gone", got.Finalizers, Finalizer)
	}
	if v := tc.az.Violations(); len(v) > 0 {
		t.Errorf("requests the REST API documents refuse: %v", v)
	}
}

// A record of one of the cluster's names that is another's is never taken over, nor deleted.
func TestAnothersRecordIsLeftAlone(t *testing.T) {
	cluster := validCluster()
	cluster.Status.API.Address, cluster.Status.Console.Address = "198.51.100.10", "203.0.113.20"
	tc := newTestController(t, cluster)
	api, apps := names(cluster)

	other := "0a0a0a0a-0000-4000-8000-000000000000"
	_, clients := tc.az, tc.dns.(*azure.DNSClient)
	if _, err := clients.PutRecordSet(context.Background(), zoneID, azure.RecordTypeA, apps, azure.RecordSet{Properties: azure.RecordSetProperties{
		TTL: 60, Metadata: map[string]string{azure.OwnershipTag: other}, ARecords: []azure.ARecord{{IPv4Address: "192.0.2.1"}},
	}}, "", true); err != nil {
		t.Fatal(err)
	}
	got, after, err := tc.sync(t, cluster)
	if err != nil {
		t.Fatal(err)
	}
	cond := dnsReady(t, got)
	if cond.Status != metav1.ConditionFalse || cond.Reason != ReasonRecordNotOurs || !strings.Contains(cond.Message, apps) || after != time.Second {
		t.Errorf("DNSReady %+v requeue %v, want False %s naming %s, looked at again in a second", cond, after, ReasonRecordNotOurs, apps)
	}
	if a := tc.addresses(); a[strings.ToLower(apps)] != "192.0.2.1" || a[api] != "198.51.100.10" {
		t.Errorf("records %v: want the other's kept and the API's written", a)
	}

	got.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tc.store(t, got)
	if _, _, err := tc.sync(t, got); err != nil {
		t.Fatal(err)
	}
	if a := tc.addresses(); len(a) != 1 || a[strings.ToLower(apps)] != "192.0.2.1" {
		t.Errorf("records after the delete %v, want only the other's", a)
	}
}

// Azure throttling and failing for a while is retried, and each record is still written once.
func TestAzureFaultsAreRetried(t *testing.T) {
	cluster := validCluster()
	cluster.Status.API.Address, cluster.Status.Console.Address = "198.51.100.10", "203.0.113.20"
	tc := newTestController(t, cluster)
	tc.az.Throttle(http.MethodPut, "/subscriptions/", 1, time.Millisecond)
	tc.az.Unavailable(http.MethodPut, "/subscriptions/", 1500*time.Millisecond)

	got, _, err := tc.sync(t, cluster)
	for err != nil {
		// The SDK's retries may outlast the fault or not; the queue retries what they did not.
		if cond := dnsReady(t, got); cond.Status != metav1.ConditionFalse || cond.Reason != ReasonAzureError {
			t.Errorf("DNSReady %+v after %v, want False %s", cond, err, ReasonAzureError)
		}
		got, _, err = tc.sync(t, got)
	}
	if cond := dnsReady(t, got); cond.Status != metav1.ConditionTrue {
		t.Errorf("DNSReady %+v once Azure answers, want True", cond)
	}
	written := 0
	for _, r := range tc.az.Requests() {
		if r.Method == http.MethodPut && r.Status < 300 {
			written++
		}
	}
	if n := len(tc.addresses()); n != 2 || written != 2 {
		t.Errorf("records %v written by %d PUTs, want the two, each written once", tc.addresses(), written)
	}
}

// A server without Azure lets a deleted cluster go that holds the finalizer from a time it had Azure.
func TestWithoutAzureTheFinalizerIsReleased(t *testing.T) {
	cluster := validCluster()
	cluster.Finalizers = []string{Finalizer}
	cluster.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	client := fake.NewSimpleClientset(cluster) //nolint:staticcheck // as above
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	c, err := New(client, hcp.HCPClusters(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := hcp.HCPClusters().Informer().GetIndexer().Add(cluster); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(context.Background(), "ns/c"); err != nil {
		t.Fatal(err)
	}
	got, err := client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "c", metav1.GetOptions{})
	if err == nil && slices.Contains(got.Finalizers, Finalizer) {
		t.Errorf("finalizers %v, want %s released", got.Finalizers, Finalizer)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[strings.ToLower(k)] != v {
			return false
		}
	}
	return true
}
