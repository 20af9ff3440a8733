package managedresourcegroup

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/azurestandin"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const clusterID = "7c3f2a10-5b4e-4d8a-9c1f-2e3d4a5b6c7d"

type testController struct {
	*Controller
	az       *azurestandin.Server
	client   *fake.Clientset
	clusters cache.Indexer
}

func newTestController(t *testing.T, cluster *v1alpha1.HCPCluster) *testController {
	t.Helper()
	az, clients := controllertest.AzureStandIn(t, azurestandin.Options{ResourceGroupDeletePolls: 2})
	client := fake.NewSimpleClientset(cluster) //nolint:staticcheck // NewClientset needs the kinds' apply schema, which the generated fake lacks
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	c, err := New(client, hcp.HCPClusters(), clients.ResourceGroups, Options{PollInterval: time.Second, Tags: map[string]string{"aro-hcp.environment": "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	tc := &testController{Controller: c, az: az, client: client, clusters: hcp.HCPClusters().Informer().GetIndexer()}
	if err := tc.clusters.Add(cluster); err != nil {
		t.Fatal(err)
	}
	return tc
}

// sync syncs the cluster as the informer holds it and then holds the cluster as stored, as its watch
// event would; it returns the stored cluster (nil once gone) and the requeue.
func (tc *testController) sync(t *testing.T, cluster *v1alpha1.HCPCluster) (*v1alpha1.HCPCluster, time.Duration) {
	t.Helper()
	after, err := tc.Controller.sync(context.Background(), cluster.Namespace+"/"+cluster.Name)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	got, err := tc.client.HcpV1alpha1().HCPClusters(cluster.Namespace).Get(context.Background(), cluster.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.clusters.Update(got); err != nil {
		t.Fatal(err)
	}
	return got, after
}

// armRequests counts the requests to Resource Manager, leaving out Entra ID's.
func (tc *testController) armRequests() int {
	n := 0
	for _, r := range tc.az.Requests() {
		if strings.HasPrefix(r.Path, "/subscriptions/") {
			n++
		}
	}
	return n
}

func validCluster() *v1alpha1.HCPCluster {
	cluster := fixtures.HCPCluster("ns", "c")
	cluster.Status.ClusterID = clusterID
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: "IdentitiesValid"})
	return cluster
}

func groupID(cluster *v1alpha1.HCPCluster) string {
	return "/subscriptions/" + fixtures.SubscriptionID + "/resourceGroups/" + cluster.Spec.Platform.ManagedResourceGroup
}

// A cluster's group is made once, tagged as the cluster's, with its finalizer on first; the cluster
// deleted, the group goes only once the control plane is gone, and then the cluster may go.
func TestGroupFollowsTheCluster(t *testing.T) {
	cluster := validCluster()
	tc := newTestController(t, cluster)

	got, _ := tc.sync(t, cluster)
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionManagedResourceGroupReady)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != ReasonCreated || !strings.Contains(cond.Message, groupID(cluster)) {
		t.Fatalf("ManagedResourceGroupReady %+v, want True %s naming the group", cond, ReasonCreated)
	}
	if !slices.Contains(got.Finalizers, Finalizer) {
		t.Errorf("finalizers %v lack %s", got.Finalizers, Finalizer)
	}
	group, ok := tc.az.ResourceGroup(groupID(cluster))
	if !ok || group.Location != "eastus" || group.Tags[azure.OwnershipTag] != clusterID || group.Tags["aro-hcp.environment"] != "dev" {
		t.Fatalf("the group %+v (exists %v), want it in eastus tagged as the cluster's", group, ok)
	}
	tc.sync(t, got)
	if n := tc.armRequests(); n != 2 {
		t.Errorf("%d requests to Resource Manager for a group made once and a sync after, want its GET and PUT: %v", n, tc.az.Requests())
	}

	// Deleted, with the control plane still there: nothing happens to the group.
	got.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	got.Finalizers = append(got.Finalizers, v1alpha1.DeliveryFinalizer)
	if err := tc.client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("hcpclusters"), got, got.Namespace); err != nil {
		t.Fatal(err)
	}
	if err := tc.clusters.Update(got); err != nil {
		t.Fatal(err)
	}
	got, _ = tc.sync(t, got)
	if _, ok := tc.az.ResourceGroup(groupID(cluster)); !ok {
		t.Fatal("the group was deleted while the control plane was still there")
	}

	// The control plane is gone: the group is deleted and followed until it is gone.
	got.Finalizers = slices.DeleteFunc(got.Finalizers, func(f string) bool { return f == v1alpha1.DeliveryFinalizer })
	if err := tc.client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("hcpclusters"), got, got.Namespace); err != nil {
		t.Fatal(err)
	}
	if err := tc.clusters.Update(got); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		var after time.Duration
		got, after = tc.sync(t, got)
		if !slices.Contains(got.Finalizers, Finalizer) {
			break
		}
		if after != time.Second || i > 5 {
			t.Fatalf("sync %d of a deletion in progress requeued after %v, want the poll interval", i, after)
		}
	}
	if g, ok := tc.az.ResourceGroup(groupID(cluster)); ok {
		t.Errorf("the finalizer went while the group %+v is still there", g)
	}
}

// A group of that name that is not the cluster's fails the cluster, naming it, and is neither tagged
// nor deleted with the cluster.
func TestGroupNotOurs(t *testing.T) {
	cluster := validCluster()
	tc := newTestController(t, cluster)
	cfgGroups := tc.groups.(*azure.ResourceGroupsClient)
	if _, err := cfgGroups.EnsureResourceGroup(context.Background(), fixtures.SubscriptionID, cluster.Spec.Platform.ManagedResourceGroup, "eastus",
		map[string]string{azure.OwnershipTag: "another-cluster"}); err != nil {
		t.Fatal(err)
	}

	got, _ := tc.sync(t, cluster)
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionManagedResourceGroupReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonNotOurs || !strings.Contains(cond.Message, groupID(cluster)) ||
		got.Status.ProvisioningState != v1alpha1.ProvisioningStateFailed {
		t.Fatalf("ManagedResourceGroupReady %+v, state %s; want False %s naming the group, and Failed", cond, got.Status.ProvisioningState, ReasonNotOurs)
	}

	got.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if err := tc.client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("hcpclusters"), got, got.Namespace); err != nil {
		t.Fatal(err)
	}
	if err := tc.clusters.Update(got); err != nil {
		t.Fatal(err)
	}
	got, _ = tc.sync(t, got)
	if slices.Contains(got.Finalizers, Finalizer) {
		t.Errorf("the cluster is kept for a group that is not its own")
	}
	if g, ok := tc.az.ResourceGroup(groupID(cluster)); !ok || g.Tags[azure.OwnershipTag] != "another-cluster" || g.Deleting {
		t.Errorf("the other's group is %+v (exists %v), want it as its owner left it", g, ok)
	}
}

// A cluster failed for another's group, before its first delivery, is provisioned again once that group
// is gone.
func TestGroupFreedAgain(t *testing.T) {
	cluster := validCluster()
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionManagedResourceGroupReady,
		Status: metav1.ConditionFalse, Reason: ReasonNotOurs})
	tc := newTestController(t, cluster)
	got, _ := tc.sync(t, cluster)
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionManagedResourceGroupReady) ||
		got.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted {
		t.Errorf("state %s, conditions %+v; want Accepted again with the group made", got.Status.ProvisioningState, got.Status.Conditions)
	}
}

// Nothing is made for a cluster whose identities are not valid yet, or were never checked.
func TestNothingBeforeIdentities(t *testing.T) {
	for _, reason := range []string{"", v1alpha1.ReasonAzureDisabled} {
		cluster := validCluster()
		cluster.Status.Conditions = nil
		if reason != "" {
			meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: reason})
		}
		tc := newTestController(t, cluster)
		got, _ := tc.sync(t, cluster)
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionManagedResourceGroupReady)
		if cond == nil || cond.Reason != ReasonAwaitingIdentities || tc.armRequests() != 0 {
			t.Errorf("identities %q: ManagedResourceGroupReady %+v after %d requests to Resource Manager; want %s and none", reason, cond, tc.armRequests(), ReasonAwaitingIdentities)
		}
	}
}

// refusing is Azure refusing to make any group, as a policy of the customer's would.
type refusing struct{}

func (refusing) EnsureResourceGroup(context.Context, string, string, string, map[string]string) (bool, error) {
	return false, &azure.CloudError{StatusCode: 403, Code: "RequestDisallowedByPolicy", Message: "resource groups must carry the cost-center tag"}
}

func (refusing) DeleteResourceGroup(context.Context, string, string, string, string) (*azure.DeleteOperation, error) {
	return nil, &azure.CloudError{StatusCode: 403, Code: "RequestDisallowedByPolicy"}
}

// Azure refusing the group for good fails a cluster not delivered yet, with Azure's reason, and looks
// again later; it is no error retried at once for ever.
func TestGroupRefusedByAzure(t *testing.T) {
	cluster := validCluster()
	tc := newTestController(t, cluster)
	tc.groups = refusing{}
	got, after := tc.sync(t, cluster)
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionManagedResourceGroupReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonAzureRefused || !strings.Contains(cond.Message, "RequestDisallowedByPolicy") ||
		got.Status.ProvisioningState != v1alpha1.ProvisioningStateFailed || after != time.Second {
		t.Errorf("ManagedResourceGroupReady %+v, state %s, requeue %v; want False %s with Azure's code, Failed, and a look again after the poll interval",
			cond, got.Status.ProvisioningState, after, ReasonAzureRefused)
	}
}

// A server that provisions no Azure (any more) lets a deleted cluster go that holds the finalizer, and
// asks nothing of Azure.
func TestWithoutAzureTheFinalizerGoes(t *testing.T) {
	cluster := validCluster()
	cluster.Finalizers = []string{Finalizer}
	cluster.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tc := newTestController(t, cluster)
	tc.groups = nil
	got, _ := tc.sync(t, cluster)
	if slices.Contains(got.Finalizers, Finalizer) || tc.armRequests() != 0 {
		t.Errorf("finalizers %v after %d requests to Resource Manager; want the finalizer gone and none", got.Finalizers, tc.armRequests())
	}
}
