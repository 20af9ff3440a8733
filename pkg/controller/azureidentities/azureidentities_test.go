package azureidentities

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/azurestandin"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const identityType = "Microsoft.ManagedIdentity/userAssignedIdentities"

// standIn is a stand-in Azure and the service's clients of it.
func standIn(t *testing.T) (*azurestandin.Server, *azure.Clients) {
	t.Helper()
	return controllertest.AzureStandIn(t, azurestandin.Options{})
}

// check runs the controller's sync of cluster and returns the cluster as it wrote it, and the requeue.
func check(t *testing.T, identities Identities, cluster *v1alpha1.HCPCluster) (*v1alpha1.HCPCluster, time.Duration, error) {
	t.Helper()
	client := fake.NewSimpleClientset(cluster) //nolint:staticcheck // NewClientset needs the kinds' apply schema, which the generated fake lacks
	hcp := informers.NewSharedInformerFactory(client, 0).Hcp().V1alpha1()
	if err := hcp.HCPClusters().Informer().GetIndexer().Add(cluster); err != nil {
		t.Fatal(err)
	}
	c, err := New(client, hcp.HCPClusters(), identities, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	after, syncErr := c.sync(context.Background(), cluster.Namespace+"/"+cluster.Name)
	got, err := client.HcpV1alpha1().HCPClusters(cluster.Namespace).Get(context.Background(), cluster.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got, after, syncErr
}

func TestIdentitiesChecked(t *testing.T) {
	networkContributor := "/subscriptions/" + fixtures.SubscriptionID + NetworkContributor
	vnet := fixtures.ARMID("Microsoft.Network/virtualNetworks", "vnet")
	for _, tc := range []struct {
		name string
		// seed makes what the customer made in Azure for the fixture cluster c.
		seed       func(az *azurestandin.Server, nsg string)
		wantStatus metav1.ConditionStatus
		wantReason string
		// wantNamed are in the condition's message.
		wantNamed []string
	}{{
		name: "identities exist and hold their roles, one through its scope's parent, one as Owner",
		seed: func(az *azurestandin.Server, nsg string) {
			cp, svc := az.AddIdentity(fixtures.ARMID(identityType, "c-cp")), az.AddIdentity(fixtures.ARMID(identityType, "c-service"))
			ccm := az.AddIdentity(fixtures.ARMID(identityType, "c-ccm"))
			az.AddRoleAssignment("/subscriptions/"+fixtures.SubscriptionID, ccm.PrincipalID, "/subscriptions/"+fixtures.SubscriptionID+Owner)
			az.AddRoleAssignment("/subscriptions/"+fixtures.SubscriptionID, cp.PrincipalID, networkContributor)
			az.AddRoleAssignment(vnet, svc.PrincipalID, networkContributor)
			az.AddRoleAssignment(nsg, svc.PrincipalID, networkContributor)
		},
		wantStatus: metav1.ConditionTrue, wantReason: ReasonValid,
	}, {
		name: "the service identity does not exist",
		seed: func(az *azurestandin.Server, _ string) {
			az.AddIdentity(fixtures.ARMID(identityType, "c-cp"))
			az.AddIdentity(fixtures.ARMID(identityType, "c-ccm"))
		},
		wantStatus: metav1.ConditionFalse, wantReason: ReasonIdentityMissing,
		wantNamed: []string{fixtures.ARMID(identityType, "c-service"), "the service managed identity"},
	}, {
		name: "the control plane identity lacks its role on the network security group",
		seed: func(az *azurestandin.Server, nsg string) {
			cp, svc := az.AddIdentity(fixtures.ARMID(identityType, "c-cp")), az.AddIdentity(fixtures.ARMID(identityType, "c-service"))
			ccm := az.AddIdentity(fixtures.ARMID(identityType, "c-ccm"))
			az.AddRoleAssignment("/subscriptions/"+fixtures.SubscriptionID, ccm.PrincipalID, networkContributor)
			az.AddRoleAssignment(vnet, cp.PrincipalID, networkContributor)
			az.AddRoleAssignment(vnet, svc.PrincipalID, networkContributor)
			az.AddRoleAssignment(nsg, svc.PrincipalID, networkContributor)
			// A role on another group's NSG grants nothing here.
			az.AddRoleAssignment(nsg+"-other", cp.PrincipalID, networkContributor)
		},
		wantStatus: metav1.ConditionFalse, wantReason: ReasonRoleMissing,
		wantNamed: []string{fixtures.ARMID(identityType, "c-cp"), `"control-plane"`, "4d97b98b-1d4f-4787-a291-c67834d212e7", "network security group " + fixtures.ARMID("Microsoft.Network/networkSecurityGroups", "ns-c")},
	}, {
		name: "the cloud controller manager holds its role on the subnet only, through Contributor",
		seed: func(az *azurestandin.Server, nsg string) {
			cp, svc := az.AddIdentity(fixtures.ARMID(identityType, "c-cp")), az.AddIdentity(fixtures.ARMID(identityType, "c-service"))
			ccm := az.AddIdentity(fixtures.ARMID(identityType, "c-ccm"))
			for _, principal := range []string{cp.PrincipalID, svc.PrincipalID} {
				az.AddRoleAssignment(vnet, principal, networkContributor)
				az.AddRoleAssignment(nsg, principal, networkContributor)
			}
			az.AddRoleAssignment(vnet, ccm.PrincipalID, "/subscriptions/"+fixtures.SubscriptionID+Contributor)
		},
		wantStatus: metav1.ConditionFalse, wantReason: ReasonRoleMissing,
		wantNamed: []string{fixtures.ARMID(identityType, "c-ccm"), `"cloud-controller-manager"`, "network security group"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			az, clients := standIn(t)
			cluster := fixtures.HCPCluster("ns", "c")
			cluster.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators["cloud-controller-manager"] = fixtures.ARMID(identityType, "c-ccm")
			cluster.Generation = 2
			cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
			tc.seed(az, cluster.Spec.Platform.NetworkSecurityGroupID)

			got, after, err := check(t, clients.Identities, cluster)
			if err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAzureIdentitiesValid)
			if cond == nil || cond.Status != tc.wantStatus || cond.Reason != tc.wantReason || cond.ObservedGeneration != 2 {
				t.Fatalf("AzureIdentitiesValid %+v, want %s %s at generation 2", cond, tc.wantStatus, tc.wantReason)
			}
			for _, s := range tc.wantNamed {
				if !strings.Contains(cond.Message, s) {
					t.Errorf("message %q does not name %s", cond.Message, s)
				}
			}
			refused := tc.wantStatus == metav1.ConditionFalse
			if refused != (got.Status.ProvisioningState == v1alpha1.ProvisioningStateFailed) {
				t.Errorf("provisioningState %s; a refused cluster, and only one, is Failed", got.Status.ProvisioningState)
			}
			if refused != (after == time.Minute) {
				t.Errorf("requeued after %v; a refused cluster, and only one, is checked again after the recheck interval", after)
			}
		})
	}
}

// answering is Azure answering every question with one error, as the SDK leaves it after its retries.
type answering struct{ err error }

func (a answering) GetIdentity(context.Context, string) (string, string, error) { return "", "", a.err }

func (a answering) MissingRoles(context.Context, string, string, []string) ([]string, error) {
	return nil, a.err
}

var unreachable = answering{&azure.CloudError{StatusCode: 503, Code: "ServiceUnavailable", Message: "try again later"}}

// Azure that cannot answer is no verdict: the condition is Unknown, the cluster is not failed, and the
// sync's error has the queue try again.
func TestAzureErrorIsNoVerdict(t *testing.T) {
	cluster := fixtures.HCPCluster("ns", "c")
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
	got, _, err := check(t, unreachable, cluster)
	if err == nil {
		t.Fatal("a sync that could not reach Azure returned no error to retry")
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAzureIdentitiesValid)
	if cond == nil || cond.Status != metav1.ConditionUnknown || cond.Reason != ReasonAzureError || !strings.Contains(cond.Message, "ServiceUnavailable") ||
		got.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted {
		t.Errorf("AzureIdentitiesValid %+v, state %s; want Unknown %s with Azure's error and the cluster still Accepted", cond, got.Status.ProvisioningState, ReasonAzureError)
	}
}

// A cluster whose identities were valid for its generation is not asked about again; one created while
// the service provisioned no Azure is.
func TestCheckedOncePerGeneration(t *testing.T) {
	az, clients := standIn(t)
	cluster := fixtures.HCPCluster("ns", "c")
	cluster.Generation = 4
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid,
		Status: metav1.ConditionTrue, Reason: ReasonValid, ObservedGeneration: 4})
	if _, _, err := check(t, clients.Identities, cluster); err != nil {
		t.Fatal(err)
	}
	if n := len(az.Requests()); n != 0 {
		t.Errorf("a cluster checked at its generation made %d requests to Azure (Entra ID's included): %v", n, az.Requests())
	}

	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid,
		Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonAzureDisabled, ObservedGeneration: 4})
	got, _, err := check(t, clients.Identities, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAzureIdentitiesValid); cond.Reason != ReasonIdentityMissing {
		t.Errorf("a cluster created with Azure disabled was not checked: %+v", cond)
	}
}

// A cluster refused for its identities is provisioned again once the customer fixed them.
func TestRefusedClusterComesBack(t *testing.T) {
	az, clients := standIn(t)
	networkContributor := "/subscriptions/" + fixtures.SubscriptionID + NetworkContributor
	cp, svc := az.AddIdentity(fixtures.ARMID(identityType, "c-cp")), az.AddIdentity(fixtures.ARMID(identityType, "c-service"))
	az.AddRoleAssignment("/subscriptions/"+fixtures.SubscriptionID, cp.PrincipalID, networkContributor)
	az.AddRoleAssignment("/subscriptions/"+fixtures.SubscriptionID, svc.PrincipalID, networkContributor)
	cluster := fixtures.HCPCluster("ns", "c")
	cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAzureIdentitiesValid,
		Status: metav1.ConditionFalse, Reason: ReasonRoleMissing})
	got, after, err := check(t, clients.Identities, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionAzureIdentitiesValid) ||
		got.Status.ProvisioningState != v1alpha1.ProvisioningStateAccepted || after != 0 {
		t.Errorf("state %s, conditions %+v, requeue %v; want Accepted again with valid identities, and no recheck",
			got.Status.ProvisioningState, got.Status.Conditions, after)
	}
}

// Azure refusing the service's question for good (403: the service may not read the identity) is a
// refusal, not a retry for ever; a cluster already delivered is not failed for it, only told.
func TestAzureRefusalIsAVerdict(t *testing.T) {
	forbidden := answering{&azure.CloudError{StatusCode: 403, Code: "AuthorizationFailed", Message: "the client may not read the identity"}}
	for _, delivered := range []bool{false, true} {
		cluster := fixtures.HCPCluster("ns", "c")
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
		if delivered {
			cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
			cluster.Status.ObservedGeneration = 1
		}
		got, after, err := check(t, forbidden, cluster)
		if err != nil {
			t.Fatalf("delivered %v: a refusal came back as an error to retry at once: %v", delivered, err)
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAzureIdentitiesValid)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonAzureRefused || !strings.Contains(cond.Message, "AuthorizationFailed") || after != time.Minute {
			t.Errorf("delivered %v: AzureIdentitiesValid %+v, requeue %v; want False %s with Azure's code, checked again after the interval", delivered, cond, after, ReasonAzureRefused)
		}
		if want := map[bool]v1alpha1.ProvisioningState{false: v1alpha1.ProvisioningStateFailed, true: v1alpha1.ProvisioningStateSucceeded}[delivered]; got.Status.ProvisioningState != want {
			t.Errorf("delivered %v: state %s, want %s", delivered, got.Status.ProvisioningState, want)
		}
	}
}
