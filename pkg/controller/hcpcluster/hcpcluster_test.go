package hcpcluster

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// newTestController fills the informers and the fake clientset with objects by hand; the clusters'
// informer store is returned too, for a test to change what the controller sees.
func newTestController(t *testing.T, publisher *controllertest.RecordingPublisher, cluster *v1alpha1.HCPCluster, mc *v1alpha1.ManagementCluster) (*bundle.Reconciler[*v1alpha1.HCPCluster], *fake.Clientset, cache.Indexer) {
	t.Helper()
	return newTestControllerWith(t, Options{CreateDeadline: time.Hour}, publisher, cluster, mc)
}

func newTestControllerWith(t *testing.T, opts Options, publisher *controllertest.RecordingPublisher, cluster *v1alpha1.HCPCluster, mc *v1alpha1.ManagementCluster) (*bundle.Reconciler[*v1alpha1.HCPCluster], *fake.Clientset, cache.Indexer) {
	t.Helper()
	client := fake.NewClientset(cluster, mc)
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	c, err := New(client, hcp.HCPClusters(), hcp.ManagementClusters(), hcp.NodePools(), hcp.ExternalAuths(), hcp.BreakglassCredentials(),
		versioncatalog.Default(), publisher, opts)
	if err != nil {
		t.Fatal(err)
	}
	clusters := hcp.HCPClusters().Informer().GetIndexer()
	if err := clusters.Add(cluster); err != nil {
		t.Fatal(err)
	}
	if err := hcp.ManagementClusters().Informer().GetIndexer().Add(mc); err != nil {
		t.Fatal(err)
	}
	return c, client, clusters
}

func placedCluster() (*v1alpha1.HCPCluster, *v1alpha1.ManagementCluster) {
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.UID, cluster.Generation = types.UID("uid-1"), 1
	// As the server defaults it.
	cluster.Spec.Version.ChannelGroup = "stable"
	cluster.Finalizers = []string{v1alpha1.DeliveryFinalizer}
	cluster.Status = v1alpha1.HCPClusterStatus{
		ProvisioningState: v1alpha1.ProvisioningStateAccepted, ClusterID: "5f0d2a8e-1111-4222-8333-944455556666",
		ManagementCluster: "mc-1", Version: v1alpha1.ClusterVersionStatus{Desired: "4.20.8"},
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionVersionResolved, Status: metav1.ConditionTrue, ObservedGeneration: 1}},
	}
	mc := fixtures.ManagementCluster("mc-1")
	mc.Spec.ConsumerName = "consumer-1"
	return cluster, mc
}

// An upgrade changes generation and version together: nothing is published for the new generation until
// its version is resolved, or the generation would go out with the old release for good.
func TestNothingPublishedBeforeTheVersionIsResolvedForTheGeneration(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	cluster, mc := placedCluster()
	cluster.Generation = 2 // VersionResolved is for generation 1
	c, _, _ := newTestController(t, publisher, cluster, mc)
	if _, err := c.Sync(context.Background(), "ns/dev"); err != nil {
		t.Fatal(err)
	}
	if len(publisher.Applied) != 0 {
		t.Fatalf("published %v before generation 2's version was resolved", publisher.Applied)
	}
}

// A service that provisions Azure delivers a cluster the first time only once its identities are valid for
// its generation and its managed resource group is ready; the cluster's Delivered says which it waits for.
// A cluster delivered once is offered its bundle whatever its Azure conditions say.
func TestNothingPublishedBeforeTheAzureSideIsReady(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		// waiting is what Delivered says the cluster waits for; empty when it is delivered.
		waiting string
	}{
		{name: "nothing checked yet", waiting: v1alpha1.ConditionAzureIdentitiesValid},
		{name: "identities refused", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionFalse, Reason: "RoleAssignmentMissing", ObservedGeneration: 1},
		}, waiting: v1alpha1.ConditionAzureIdentitiesValid},
		{name: "identities valid for an older generation", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: "IdentitiesValid", ObservedGeneration: 0},
			{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionTrue, Reason: "Created"},
		}, waiting: v1alpha1.ConditionAzureIdentitiesValid},
		{name: "created while Azure was disabled", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonAzureDisabled, ObservedGeneration: 1},
			{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonAzureDisabled, ObservedGeneration: 1},
		}, waiting: v1alpha1.ConditionAzureIdentitiesValid},
		{name: "group not made yet", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: "IdentitiesValid", ObservedGeneration: 1},
			{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionFalse, Reason: "AzureError"},
		}, waiting: v1alpha1.ConditionManagedResourceGroupReady},
		// Holding it back now would have the agent's next resync delete its control plane.
		{name: "delivered before the service provisioned Azure", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionDelivered, Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: 1},
		}},
		{name: "delivered, then refused at a new generation", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionDelivered, Status: metav1.ConditionFalse, Reason: "Pending", ObservedGeneration: 1},
			{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionFalse, Reason: "RoleAssignmentMissing", ObservedGeneration: 1},
			{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionTrue, Reason: "Created"},
		}},
		{name: "ready", conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: "IdentitiesValid", ObservedGeneration: 1},
			{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionTrue, Reason: "Created"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			publisher := controllertest.NewRecordingPublisher()
			cluster, mc := placedCluster()
			cluster.Status.Conditions = append(cluster.Status.Conditions, tc.conditions...)
			c, client, _ := newTestControllerWith(t, Options{CreateDeadline: time.Hour, Azure: true}, publisher, cluster, mc)
			if _, err := c.Sync(context.Background(), "ns/dev"); err != nil {
				t.Fatal(err)
			}
			if published := publisher.Applied["consumer-1/uid-1"] == 1; published != (tc.waiting == "") {
				t.Fatalf("published %v; want the bundle published only when the Azure side is ready", publisher.Applied)
			}
			if tc.waiting == "" {
				return
			}
			got, err := client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "dev", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			delivered := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDelivered)
			if delivered == nil || delivered.Status != metav1.ConditionFalse || delivered.Reason != v1alpha1.ReasonAwaitingAzure || !strings.Contains(delivered.Message, tc.waiting) {
				t.Errorf("Delivered %+v, want False %s naming %s", delivered, v1alpha1.ReasonAwaitingAzure, tc.waiting)
			}
		})
	}
}

// A cluster nothing could place waits for Azure as a placed one does; once Azure is ready, what it waited
// for is gone from its Delivered, which no report keeps up to date before it is placed.
func TestUnplacedClusterDoesNotKeepWaitingForAzure(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	cluster, mc := placedCluster()
	cluster.Status.ManagementCluster = ""
	cluster.Status.Conditions = append(cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionPlaced,
		Status: metav1.ConditionFalse, Reason: "NoManagementCluster", Message: "no management cluster serves eastus"})
	c, client, clusters := newTestControllerWith(t, Options{CreateDeadline: time.Hour, Azure: true}, publisher, cluster, mc)
	sync := func() *v1alpha1.HCPCluster {
		t.Helper()
		if _, err := c.Sync(context.Background(), "ns/dev"); err != nil {
			t.Fatal(err)
		}
		got, err := client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "dev", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := clusters.Update(got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := sync()
	if delivered := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDelivered); delivered == nil || delivered.Reason != v1alpha1.ReasonAwaitingAzure {
		t.Fatalf("an unplaced cluster whose identities are unchecked: Delivered %+v, want %s", delivered, v1alpha1.ReasonAwaitingAzure)
	}
	got.Status.Conditions = append(got.Status.Conditions,
		metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: "IdentitiesValid", ObservedGeneration: 1},
		metav1.Condition{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionTrue, Reason: "Created"})
	if _, err := client.HcpV1alpha1().HCPClusters("ns").UpdateStatus(context.Background(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = sync()
	if delivered := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDelivered); delivered != nil {
		t.Errorf("an unplaced cluster whose Azure side is ready still says Delivered %+v", delivered)
	}
	if placed := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPlaced); placed == nil || placed.Status != metav1.ConditionFalse {
		t.Errorf("Placed %+v, want the placement's False kept", placed)
	}
	if len(publisher.Applied) != 0 {
		t.Errorf("published %v for an unplaced cluster", publisher.Applied)
	}
}

func TestSyncPublishesTheBundleAndFinishesTheDelete(t *testing.T) {
	ctx := context.Background()
	publisher := controllertest.NewRecordingPublisher()
	cluster, mc := placedCluster()
	c, client, clusters := newTestController(t, publisher, cluster, mc)

	if _, err := c.Sync(ctx, "ns/dev"); err != nil {
		t.Fatal(err)
	}
	if got := publisher.Applied["consumer-1/uid-1"]; got != 1 {
		t.Fatalf("published %v, want generation 1 of uid-1 to consumer-1", publisher.Applied)
	}
	if n := len(publisher.Bundles["uid-1"].Manifests); n != 5 {
		t.Errorf("the bundle has %d manifests, want the namespace, the pull secret, the two load balancers read and the HostedCluster", n)
	}
	stored, _ := client.HcpV1alpha1().HCPClusters("ns").Get(ctx, "dev", metav1.GetOptions{})
	if d := meta.FindStatusCondition(stored.Status.Conditions, v1alpha1.ConditionDelivered); d == nil || d.Reason != "Pending" {
		t.Errorf("Delivered %+v, want Pending until the agent reports", d)
	}

	// Deleted: the bundle's delete goes out, and the finalizer stays until the agent reports it done.
	deleting := cluster.DeepCopy()
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	if err := clusters.Update(deleting); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(ctx, "ns/dev"); err != nil {
		t.Fatal(err)
	}
	if !publisher.Deleted.Has("consumer-1/uid-1") {
		t.Fatalf("no delete published: %v", publisher.Deleted)
	}
	stored, _ = client.HcpV1alpha1().HCPClusters("ns").Get(ctx, "dev", metav1.GetOptions{})
	if len(stored.Finalizers) != 1 {
		t.Fatalf("finalizers %v before the agent reported the delete, want the delivery finalizer kept", stored.Finalizers)
	}
	publisher.Report(source.BundleStatus{Consumer: "consumer-1", ResourceID: "uid-1", Deleted: true})
	if _, err := c.Sync(ctx, "ns/dev"); err != nil {
		t.Fatal(err)
	}
	stored, _ = client.HcpV1alpha1().HCPClusters("ns").Get(ctx, "dev", metav1.GetOptions{})
	if len(stored.Finalizers) != 0 {
		t.Errorf("finalizers %v after the agent reported the delete, want none", stored.Finalizers)
	}
}

// hostedClusterStatus is what the agent reports of a HostedCluster.
func hostedClusterStatus(generation int64, applied bool, available string, history string) source.BundleStatus {
	appliedStatus := metav1.ConditionTrue
	if !applied {
		appliedStatus = metav1.ConditionFalse
	}
	value := func(name, s string) protocol.FeedbackValue {
		return protocol.FeedbackValue{Name: name, Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To(s)}}
	}
	raw := func(name, s string) protocol.FeedbackValue {
		return protocol.FeedbackValue{Name: name, Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To(s)}}
	}
	port := int64(6443)
	values := []protocol.FeedbackValue{value(render.FeedbackAvailable, available), value(render.FeedbackAvailableMessage, "as reported"),
		value(render.FeedbackAPIHost, "api.dev.example"), {Name: render.FeedbackAPIPort, Value: protocol.FieldValue{Type: protocol.ValueInteger, Integer: &port}}}
	if history != "" {
		values = append(values, raw(render.FeedbackControlPlaneVersionHistory, history))
	}
	return source.BundleStatus{Generation: generation, Status: &protocol.ManifestBundleStatus{
		Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: appliedStatus, Message: "refused"}},
		ResourceStatus: []protocol.ManifestCondition{{
			ResourceMeta:   protocol.ManifestResourceMeta{Kind: "Service", Name: render.RouterServiceName},
			StatusFeedback: protocol.StatusFeedbackResult{Values: []protocol.FeedbackValue{value(render.FeedbackAPIAddress, "198.51.100.7")}},
			Conditions:     []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		}, {
			ResourceMeta:   protocol.ManifestResourceMeta{Kind: "Service", Name: render.AppsIngressServiceName},
			StatusFeedback: protocol.StatusFeedbackResult{Values: []protocol.FeedbackValue{value(render.FeedbackAppsAddress, "203.0.113.7")}},
			Conditions:     []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		}, {
			ResourceMeta:   protocol.ManifestResourceMeta{Kind: "HostedCluster", Name: "dev"},
			StatusFeedback: protocol.StatusFeedbackResult{Values: values},
			Conditions:     []metav1.Condition{{Type: protocol.ConditionApplied, Status: appliedStatus, Message: "the CRD says no"}},
		}},
	}}
}

// refusedWith gives a report's refused HostedCluster the management cluster's words.
func refusedWith(st source.BundleStatus, message string) source.BundleStatus {
	st.Status.ResourceStatus[2].Conditions[0].Message = "Failed to apply manifest: " + message
	return st
}

// seenBy adds to a report the HostedCluster's generation on the management cluster and the one HyperShift set
// its conditions on.
func seenBy(st source.BundleStatus, generation, observed int64) source.BundleStatus {
	controllertest.SeenBy(&st.Status.ResourceStatus[2], generation, observed)
	return st
}

func TestApplyReport(t *testing.T) {
	completed, _ := json.Marshal([]map[string]string{{"version": "4.20.8", "state": "Completed"}})
	partial, _ := json.Marshal([]map[string]string{{"version": "4.20.8", "state": "Partial"}})
	for _, tc := range []struct {
		name       string
		generation int64
		state      v1alpha1.ProvisioningState
		report     *source.BundleStatus
		// dnsReady is the status of DNSReady, when the cluster has it.
		dnsReady  metav1.ConditionStatus
		wantState v1alpha1.ProvisioningState
		delivered string // reason of Delivered
	}{
		{name: "nothing reported yet", generation: 1, state: v1alpha1.ProvisioningStateAccepted, wantState: v1alpha1.ProvisioningStateAccepted, delivered: "Pending"},
		{name: "applied, installing", generation: 1, state: v1alpha1.ProvisioningStateAccepted,
			report: ptr.To(hostedClusterStatus(1, true, "False", string(partial))), wantState: v1alpha1.ProvisioningStateProvisioning, delivered: "Applied"},
		{name: "available with a completed version", generation: 1, state: v1alpha1.ProvisioningStateProvisioning,
			report: ptr.To(hostedClusterStatus(1, true, "True", string(completed))), wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied"},
		{name: "available, its names not in DNS yet", generation: 1, state: v1alpha1.ProvisioningStateProvisioning, dnsReady: metav1.ConditionFalse,
			report: ptr.To(hostedClusterStatus(1, true, "True", string(completed))), wantState: v1alpha1.ProvisioningStateProvisioning, delivered: "Applied"},
		{name: "available, its names in DNS", generation: 1, state: v1alpha1.ProvisioningStateProvisioning, dnsReady: metav1.ConditionTrue,
			report: ptr.To(hostedClusterStatus(1, true, "True", string(completed))), wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied"},
		{name: "refused by the management cluster", generation: 1, state: v1alpha1.ProvisioningStateProvisioning,
			report: ptr.To(hostedClusterStatus(1, false, "", "")), wantState: v1alpha1.ProvisioningStateFailed, delivered: "ApplyFailed"},
		{name: "a webhook that timed out is retried by the agent", generation: 1, state: v1alpha1.ProvisioningStateProvisioning,
			report:    ptr.To(refusedWith(hostedClusterStatus(1, false, "", ""), `Internal error occurred: failed calling webhook "hostedclusters.hypershift.openshift.io": context deadline exceeded`)),
			wantState: v1alpha1.ProvisioningStateProvisioning, delivered: bundle.ReasonApplyRetrying},
		{name: "a change of settings HyperShift has not looked at yet", generation: 2, state: v1alpha1.ProvisioningStateUpdating,
			report: ptr.To(seenBy(hostedClusterStatus(2, true, "True", string(completed)), 3, 2)), wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Applied"},
		{name: "a change of settings HyperShift took", generation: 2, state: v1alpha1.ProvisioningStateUpdating,
			report: ptr.To(seenBy(hostedClusterStatus(2, true, "True", string(completed)), 3, 3)), wantState: v1alpha1.ProvisioningStateSucceeded, delivered: "Applied"},
		{name: "an update not reported yet", generation: 2, state: v1alpha1.ProvisioningStateUpdating,
			report: ptr.To(hostedClusterStatus(1, true, "True", string(completed))), wantState: v1alpha1.ProvisioningStateUpdating, delivered: "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, _ := placedCluster()
			cluster.Generation = tc.generation
			cluster.Status.ProvisioningState = tc.state
			if tc.dnsReady != "" {
				meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionDNSReady, Status: tc.dnsReady, Reason: "Test"})
			}
			var st source.BundleStatus
			if tc.report != nil {
				st = *tc.report
			}
			applyReport(cluster, st, tc.report != nil, "consumer-1", render.Options{})
			if cluster.Status.ProvisioningState != tc.wantState {
				t.Errorf("provisioningState %s, want %s", cluster.Status.ProvisioningState, tc.wantState)
			}
			d := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionDelivered)
			if d == nil || d.Reason != tc.delivered {
				t.Fatalf("Delivered %+v, want reason %s", d, tc.delivered)
			}
			if tc.delivered == "ApplyFailed" && !strings.Contains(d.Message, "the CRD says no") {
				t.Errorf("Delivered message %q does not carry the management cluster's refusal", d.Message)
			}
			if tc.delivered == "Applied" && (cluster.Status.API.Address != "198.51.100.7" || cluster.Status.Console.Address != "203.0.113.7") {
				t.Errorf("api.address %q console.address %q, want the load balancers' reported addresses", cluster.Status.API.Address, cluster.Status.Console.Address)
			}
			if tc.wantState == v1alpha1.ProvisioningStateSucceeded {
				if cluster.Status.Version.Actual != "4.20.8" || cluster.Status.API.URL != "https://api.dev.example:6443" {
					t.Errorf("version.actual %q api.url %q", cluster.Status.Version.Actual, cluster.Status.API.URL)
				}
				// ARM requires properties.platform.issuerUrl of every cluster; HyperShift reports neither it nor the console.
				if cluster.Status.IssuerURL != "https://oidc.hcp.aro.example/5f0d2a8e-1111-4222-8333-944455556666" ||
					!strings.HasPrefix(cluster.Status.Console.URL, "https://console-openshift-console.apps.") {
					t.Errorf("issuerURL %q console.url %q, want the service's OIDC issuer of the cluster ID and the console's address",
						cluster.Status.IssuerURL, cluster.Status.Console.URL)
				}
				if a := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionAvailable); a == nil || a.Status != metav1.ConditionTrue || a.Message != "as reported" {
					t.Errorf("Available %+v", a)
				}
			}
		})
	}
}

// A cluster that does not become available within the deadline is Failed, with the reason.
func TestCreateDeadline(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	cluster, mc := placedCluster()
	cluster.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
	c, client, _ := newTestController(t, publisher, cluster, mc)
	if _, err := c.Sync(context.Background(), "ns/dev"); err != nil {
		t.Fatal(err)
	}
	stored, _ := client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "dev", metav1.GetOptions{})
	p := meta.FindStatusCondition(stored.Status.Conditions, v1alpha1.ConditionProgressing)
	if stored.Status.ProvisioningState != v1alpha1.ProvisioningStateFailed || p == nil || p.Reason != "DeadlineExceeded" {
		t.Errorf("after the deadline: provisioningState %s, Progressing %+v; want Failed, DeadlineExceeded", stored.Status.ProvisioningState, p)
	}
}

// The deadline counts from when nothing held the cluster back: a cluster that waited for capacity, or for
// its Azure side, has the whole deadline to come up once it is placed and ready.
func TestCreateDeadlineCountsFromDelivery(t *testing.T) {
	publisher := controllertest.NewRecordingPublisher()
	cluster, mc := placedCluster()
	now := time.Now()
	cluster.CreationTimestamp = metav1.NewTime(now.Add(-2 * time.Hour))
	cluster.Status.Conditions = append(cluster.Status.Conditions,
		metav1.Condition{Type: v1alpha1.ConditionPlaced, Status: metav1.ConditionTrue, Reason: "Placed", LastTransitionTime: metav1.NewTime(now.Add(-90 * time.Minute))},
		metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid, Status: metav1.ConditionTrue, Reason: "IdentitiesValid", ObservedGeneration: 1,
			LastTransitionTime: metav1.NewTime(now.Add(-10 * time.Minute))},
		metav1.Condition{Type: v1alpha1.ConditionManagedResourceGroupReady, Status: metav1.ConditionTrue, Reason: "Created",
			LastTransitionTime: metav1.NewTime(now.Add(-9 * time.Minute))})
	c, client, _ := newTestControllerWith(t, Options{CreateDeadline: time.Hour, Azure: true}, publisher, cluster, mc)
	after, err := c.Sync(context.Background(), "ns/dev")
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := client.HcpV1alpha1().HCPClusters("ns").Get(context.Background(), "dev", metav1.GetOptions{})
	if stored.Status.ProvisioningState == v1alpha1.ProvisioningStateFailed {
		t.Fatalf("a cluster ready for 9 minutes failed: %+v", stored.Status.Conditions)
	}
	if after < 50*time.Minute || after > 52*time.Minute {
		t.Errorf("looked at again after %v, want the deadline's 51 minutes left", after)
	}
	if publisher.Applied["consumer-1/uid-1"] != 1 {
		t.Errorf("published %v, want the cluster's bundle", publisher.Applied)
	}
}

// A cluster's external auth is an input of its HostedCluster: adding, changing or deleting it renders the
// bundle again at the same cluster generation, with the provider's UID and generation on the HostedCluster.
func TestExternalAuthChangesRenderTheHostedClusterAgain(t *testing.T) {
	ctx := context.Background()
	publisher := controllertest.NewRecordingPublisher()
	cluster, mc := placedCluster()
	client := fake.NewClientset(cluster, mc)
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	c, err := New(client, hcp.HCPClusters(), hcp.ManagementClusters(), hcp.NodePools(), hcp.ExternalAuths(), hcp.BreakglassCredentials(),
		versioncatalog.Default(), publisher, Options{CreateDeadline: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, add := range []func() error{
		func() error { return hcp.HCPClusters().Informer().GetIndexer().Add(cluster) },
		func() error { return hcp.ManagementClusters().Informer().GetIndexer().Add(mc) },
	} {
		if err := add(); err != nil {
			t.Fatal(err)
		}
	}
	auths := hcp.ExternalAuths().Informer().GetIndexer()
	annotation := func() string {
		t.Helper()
		if _, err := c.Sync(ctx, "ns/dev"); err != nil {
			t.Fatal(err)
		}
		if got := publisher.Applied["consumer-1/uid-1"]; got != 1 {
			t.Fatalf("published generation %d, want the cluster's generation 1", got)
		}
		var hc struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		for _, m := range publisher.Bundles["uid-1"].Manifests {
			if strings.Contains(string(m), `"kind":"HostedCluster"`) {
				if err := json.Unmarshal(m, &hc); err != nil {
					t.Fatal(err)
				}
			}
		}
		return hc.Metadata.Annotations[render.ExternalAuthAnnotation]
	}
	if got := annotation(); got != "" || publisher.Renders != 1 {
		t.Fatalf("without an external auth: annotation %q after %d renders, want none after 1", got, publisher.Renders)
	}
	ea := fixtures.ExternalAuth("ns", "dev", "entra")
	ea.UID, ea.Generation = types.UID("ea-1"), 1
	if err := auths.Add(ea); err != nil {
		t.Fatal(err)
	}
	if got := annotation(); got != "ea-1/1" || publisher.Renders != 2 {
		t.Errorf("with an external auth: annotation %q after %d renders, want ea-1/1 after 2", got, publisher.Renders)
	}
	changed := ea.DeepCopy()
	changed.Generation = 2
	if err := auths.Update(changed); err != nil {
		t.Fatal(err)
	}
	if got := annotation(); got != "ea-1/2" || publisher.Renders != 3 {
		t.Errorf("after a change: annotation %q after %d renders, want ea-1/2 after 3", got, publisher.Renders)
	}
	deleting := changed.DeepCopy()
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	if err := auths.Update(deleting); err != nil {
		t.Fatal(err)
	}
	if got := annotation(); got != "" || publisher.Renders != 4 {
		t.Errorf("being deleted: annotation %q after %d renders, want none after 4", got, publisher.Renders)
	}
}
