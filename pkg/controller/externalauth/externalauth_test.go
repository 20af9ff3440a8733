package externalauth

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
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
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

type testController struct {
	*Controller
	client    *fake.Clientset
	auths     cache.Indexer
	clusters  cache.Indexer
	publisher *controllertest.RecordingPublisher
}

func newTestController(t *testing.T, objs ...any) *testController {
	t.Helper()
	client := fake.NewClientset()
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	publisher := controllertest.NewRecordingPublisher()
	c, err := New(client, hcp.ExternalAuths(), hcp.HCPClusters(), hcp.ManagementClusters(), publisher)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testController{Controller: c, client: client, auths: hcp.ExternalAuths().Informer().GetIndexer(),
		clusters: hcp.HCPClusters().Informer().GetIndexer(), publisher: publisher}
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *v1alpha1.HCPCluster:
			err = tc.clusters.Add(o)
		case *v1alpha1.ManagementCluster:
			err = hcp.ManagementClusters().Informer().GetIndexer().Add(o)
		case *v1alpha1.ExternalAuth:
			tc.put(t, o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return tc
}

// put stores ea in the fake server and the informer, as a write and its watch event would.
func (tc *testController) put(t *testing.T, ea *v1alpha1.ExternalAuth) {
	t.Helper()
	if _, err := tc.client.Tracker().Get(v1alpha1.SchemeGroupVersion.WithResource("externalauths"), ea.Namespace, ea.Name); err == nil {
		err = tc.client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("externalauths"), ea, ea.Namespace)
		if err != nil {
			t.Fatal(err)
		}
	} else if err := tc.client.Tracker().Add(ea); err != nil {
		t.Fatal(err)
	}
	if err := tc.auths.Update(ea); err != nil {
		t.Fatal(err)
	}
}

// sync syncs the external auth and returns it as stored.
func (tc *testController) sync(t *testing.T) *v1alpha1.ExternalAuth {
	t.Helper()
	if _, err := tc.Controller.sync(context.Background(), "ns/dev.entra"); err != nil {
		t.Fatal(err)
	}
	ea, err := tc.client.HcpV1alpha1().ExternalAuths("ns").Get(context.Background(), "dev.entra", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	if err := tc.auths.Update(ea); err != nil {
		t.Fatal(err)
	}
	return ea
}

func objects() (*v1alpha1.HCPCluster, *v1alpha1.ManagementCluster, *v1alpha1.ExternalAuth) {
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.UID, cluster.Generation = types.UID("cluster-uid"), 1
	cluster.Status.ManagementCluster = "mc-1"
	mc := fixtures.ManagementCluster("mc-1")
	mc.Spec.ConsumerName = "consumer-1"
	ea := fixtures.ExternalAuth("ns", "dev", "entra")
	ea.UID, ea.Generation = types.UID("ea-uid"), 1
	ea.Finalizers = []string{v1alpha1.DeliveryFinalizer}
	ea.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
	return cluster, mc, ea
}

// report is the agent's report of the cluster's bundle: the HostedCluster applied with the external auth
// annotation applied (none when ""), and HyperShift's OIDC client status.
func report(applied string, clients []configv1.OIDCClientStatus) source.BundleStatus {
	var values []protocol.FeedbackValue
	if applied != "" {
		values = append(values, protocol.FeedbackValue{Name: render.FeedbackExternalAuth,
			Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To(applied)}})
	}
	if clients != nil {
		data, _ := json.Marshal(clients)
		values = append(values, protocol.FeedbackValue{Name: render.FeedbackOIDCClients,
			Value: protocol.FieldValue{Type: protocol.ValueJSONRaw, JSONRaw: ptr.To(string(data))}})
	}
	applyCondition := []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}}
	return source.BundleStatus{Consumer: "consumer-1", ResourceID: "cluster-uid", Generation: 1, Status: &protocol.ManifestBundleStatus{
		Conditions: applyCondition,
		ResourceStatus: []protocol.ManifestCondition{{
			ResourceMeta:   protocol.ManifestResourceMeta{Kind: "HostedCluster", Name: "dev"},
			StatusFeedback: protocol.StatusFeedbackResult{Values: values},
			Conditions:     applyCondition,
		}},
	}}
}

// consoleInUse is how HyperShift reports the console using its client once its secret is there.
func consoleInUse(ea *v1alpha1.ExternalAuth) []configv1.OIDCClientStatus {
	return []configv1.OIDCClientStatus{{
		ComponentNamespace: "openshift-console", ComponentName: "console",
		CurrentOIDCClients: []configv1.OIDCClientReference{{OIDCProviderName: "entra", IssuerURL: ea.Spec.Issuer.URL, ClientID: "console-app"}},
		Conditions:         []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}, {Type: "Degraded", Status: metav1.ConditionFalse}},
	}}
}

func condition(ea *v1alpha1.ExternalAuth, conditionType string) metav1.Condition {
	if c := meta.FindStatusCondition(ea.Status.Conditions, conditionType); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// An external auth is Provisioning until the applied HostedCluster carries its generation and HyperShift has
// looked at it, AwaitingSecret
// while HyperShift does not see the confidential client's secret (naming it), Succeeded once it does.
func TestStateFollowsTheHostedCluster(t *testing.T) {
	cluster, mc, ea := objects()
	tc := newTestController(t, cluster, mc, ea)

	got := tc.sync(t)
	if got.Status.ProvisioningState != v1alpha1.ProvisioningStateProvisioning || condition(got, v1alpha1.ConditionDelivered).Reason != ReasonPending {
		t.Fatalf("before any report: %s, Delivered %+v; want Provisioning, Pending", got.Status.ProvisioningState, condition(got, v1alpha1.ConditionDelivered))
	}

	// The HostedCluster applied carries an older external auth: still on its way.
	tc.publisher.Report(report("other-uid/3", nil))
	if got = tc.sync(t); got.Status.ProvisioningState != v1alpha1.ProvisioningStateProvisioning {
		t.Errorf("with another external auth applied: %s, want Provisioning", got.Status.ProvisioningState)
	}

	// Applied, and HyperShift has not looked at the HostedCluster's new spec yet.
	unseen := report("ea-uid/1", nil)
	controllertest.SeenBy(&unseen.Status.ResourceStatus[0], 3, 2)
	tc.publisher.Report(unseen)
	got = tc.sync(t)
	if available := condition(got, v1alpha1.ConditionAvailable); got.Status.ProvisioningState != v1alpha1.ProvisioningStateProvisioning ||
		available.Status != metav1.ConditionFalse || !strings.Contains(available.Message, "not rolled it out") {
		t.Errorf("applied, not seen by HyperShift: %s, Available %+v; want Provisioning, False saying it is not rolled out", got.Status.ProvisioningState, available)
	}

	tc.publisher.Report(report("ea-uid/1", nil))
	got = tc.sync(t)
	secret := render.ClientSecretName(ea, ea.Spec.Clients[0])
	available := condition(got, v1alpha1.ConditionAvailable)
	if got.Status.ProvisioningState != v1alpha1.ProvisioningStateAwaitingSecret || available.Reason != ReasonAwaitingSecret ||
		!strings.Contains(available.Message, secret) || !strings.Contains(available.Message, "openshift-config") {
		t.Errorf("applied, no client reported: %s, Available %+v; want AwaitingSecret naming %s in openshift-config",
			got.Status.ProvisioningState, available, secret)
	}
	if d := condition(got, v1alpha1.ConditionDelivered); d.Status != metav1.ConditionTrue || got.Status.ObservedGeneration != 1 {
		t.Errorf("applied: Delivered %+v at observed generation %d, want True at 1", d, got.Status.ObservedGeneration)
	}

	// A newer report of the same bundle generation replaces the older one.
	r := report("ea-uid/1", consoleInUse(ea))
	r.SequenceID = 2
	tc.publisher.Report(r)
	if got = tc.sync(t); got.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded || condition(got, v1alpha1.ConditionAvailable).Status != metav1.ConditionTrue {
		t.Errorf("console using its client: %s, Available %+v; want Succeeded, True", got.Status.ProvisioningState, condition(got, v1alpha1.ConditionAvailable))
	}

	// A later change of the HostedCluster, the cluster's own, not yet seen by HyperShift: the external auth
	// it took before stays as it is.
	later := report("ea-uid/1", consoleInUse(ea))
	later.SequenceID = 3
	controllertest.SeenBy(&later.Status.ResourceStatus[0], 5, 4)
	tc.publisher.Report(later)
	if got = tc.sync(t); got.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded || condition(got, v1alpha1.ConditionAvailable).Status != metav1.ConditionTrue {
		t.Errorf("after a change of the cluster's own: %s, Available %+v; want Succeeded, True kept", got.Status.ProvisioningState, condition(got, v1alpha1.ConditionAvailable))
	}

	// An older report, as a resync may race a status update, changes nothing.
	tc.publisher.Report(report("ea-uid/1", nil))
	if got = tc.sync(t); got.Status.ProvisioningState != v1alpha1.ProvisioningStateSucceeded {
		t.Errorf("after a stale report: %s, want Succeeded kept", got.Status.ProvisioningState)
	}
}

// A cluster that is not placed yet leaves a new external auth Accepted: nothing is on its way.
func TestUnplacedClusterLeavesItAccepted(t *testing.T) {
	cluster, mc, ea := objects()
	cluster.Status.ManagementCluster = ""
	tc := newTestController(t, cluster, mc, ea)
	got := tc.sync(t)
	if got.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted || !strings.Contains(condition(got, v1alpha1.ConditionDelivered).Message, "not on a management cluster") {
		t.Errorf("%s, Delivered %+v; want Accepted, waiting for a management cluster", got.Status.ProvisioningState, condition(got, v1alpha1.ConditionDelivered))
	}
}

// syncRefused syncs the external auth after its cluster's HostedCluster was refused in the words given.
func syncRefused(t *testing.T, message string) *v1alpha1.ExternalAuth {
	t.Helper()
	cluster, mc, ea := objects()
	tc := newTestController(t, cluster, mc, ea)
	r := report("", nil)
	r.Status.Conditions[0].Status = metav1.ConditionFalse
	r.Status.ResourceStatus[0].Conditions = []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionFalse, Message: message}}
	tc.publisher.Report(r)
	return tc.sync(t)
}

// A management cluster that refuses the HostedCluster with the new provider fails the external auth, and
// says why.
func TestRefusedHostedClusterFailsIt(t *testing.T) {
	got := syncRefused(t, "spec.configuration.authentication: Invalid value")
	if got.Status.ProvisioningState != v1alpha1.ProvisioningStateFailed || !strings.Contains(condition(got, v1alpha1.ConditionDelivered).Message, "Invalid value") {
		t.Errorf("%s, Delivered %+v; want Failed with the management cluster's refusal", got.Status.ProvisioningState, condition(got, v1alpha1.ConditionDelivered))
	}
}

// A HostedCluster the management cluster could not apply for a reason that passes (its webhook timed out)
// is retried by the agent: the external auth waits, saying why, and is not Failed.
func TestHostedClusterRetriedKeepsItWaiting(t *testing.T) {
	got := syncRefused(t, `Failed to apply manifest: Internal error occurred: failed calling webhook "hostedclusters.hypershift.openshift.io": context deadline exceeded`)
	delivered := condition(got, v1alpha1.ConditionDelivered)
	if got.Status.ProvisioningState == v1alpha1.ProvisioningStateFailed || delivered.Status != metav1.ConditionFalse || delivered.Reason != bundle.ReasonApplyRetrying ||
		!strings.Contains(delivered.Message, "its agent retries") || !strings.Contains(delivered.Message, "context deadline exceeded") {
		t.Errorf("%s, Delivered %+v; want it waiting for the agent's retry, with the management cluster's words", got.Status.ProvisioningState, delivered)
	}
}

// A deleted external auth goes once the applied HostedCluster no longer carries it, and not before.
func TestDeletedExternalAuthGoesWithItsProvider(t *testing.T) {
	cluster, mc, ea := objects()
	ea.DeletionTimestamp = ptr.To(metav1.Now())
	tc := newTestController(t, cluster, mc, ea)
	tc.publisher.Report(report("ea-uid/1", nil))
	if got := tc.sync(t); got == nil || len(got.Finalizers) != 1 {
		t.Fatalf("let go while the HostedCluster still has its provider: %+v", got)
	}
	r := report("", nil)
	r.SequenceID = 2
	tc.publisher.Report(r)
	if got := tc.sync(t); got != nil && len(got.Finalizers) != 0 {
		t.Errorf("finalizers %v once the HostedCluster no longer has the provider, want none", got.Finalizers)
	}
}

// The external auth of a deleted cluster goes with it.
func TestExternalAuthOfADeletedClusterGoes(t *testing.T) {
	cluster, mc, ea := objects()
	cluster.DeletionTimestamp = ptr.To(metav1.Now())
	ea.DeletionTimestamp = ptr.To(metav1.Now())
	tc := newTestController(t, cluster, mc, ea)
	tc.publisher.Report(report("ea-uid/1", nil))
	if got := tc.sync(t); got != nil && len(got.Finalizers) != 0 {
		t.Errorf("finalizers %v of the external auth of a deleted cluster, want none", got.Finalizers)
	}
}
