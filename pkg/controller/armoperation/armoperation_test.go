package armoperation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const opName = "0b4b4d6e-6c1a-4b0e-9a53-5d1f0e9f3c11"

var created = metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))

// operation returns an operation as the registry stores it: Accepted, or Deleting for a delete.
func operation(request v1alpha1.ARMOperationRequest, resource, name string, uid types.UID, generation int64) *v1alpha1.ARMOperation {
	state := v1alpha1.ARMOperationAccepted
	if request == v1alpha1.ARMOperationDelete {
		state = v1alpha1.ARMOperationDeleting
	}
	return &v1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: opName, UID: "op-uid", CreationTimestamp: created},
		Spec: v1alpha1.ARMOperationSpec{
			Request: request, SubscriptionID: fixtures.SubscriptionID, Location: "eastus",
			ResourceID: fixtures.ARMID("Microsoft.RedHatOpenShift/hcpOpenShiftClusters", name),
			Target:     v1alpha1.ARMOperationTarget{Resource: resource, Namespace: "ns", Name: name, UID: uid, Generation: generation},
		},
		Status: v1alpha1.ARMOperationStatus{State: state, LastTransitionTime: &created},
	}
}

func cluster(generation, observed int64, state v1alpha1.ProvisioningState, conditions ...metav1.Condition) *v1alpha1.HCPCluster {
	c := fixtures.HCPCluster("ns", "dev")
	c.UID, c.Generation = "cluster-uid", generation
	c.Status.ProvisioningState, c.Status.ObservedGeneration, c.Status.Conditions = state, observed, conditions
	return c
}

func deleting[T interface{ SetDeletionTimestamp(*metav1.Time) }](obj T) T {
	obj.SetDeletionTimestamp(&metav1.Time{Time: created.Add(time.Minute)})
	return obj
}

func pool(generation, observed int64, state v1alpha1.ProvisioningState, conditions ...metav1.Condition) *v1alpha1.NodePool {
	np := fixtures.NodePool("ns", "dev", "workers")
	np.UID, np.Generation = "pool-uid", generation
	np.Status.ProvisioningState, np.Status.ObservedGeneration, np.Status.Conditions = state, observed, conditions
	return np
}

func credential(phase v1alpha1.BreakglassCredentialPhase, conditions ...metav1.Condition) *v1alpha1.BreakglassCredential {
	c := fixtures.BreakglassCredential("ns", "dev", "admin-1")
	c.UID, c.Generation = "credential-uid", 1
	c.Status.Phase, c.Status.Conditions = phase, conditions
	return c
}

func condition(conditionType string, status metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}
}

// newController returns the controller over a fake clientset holding objects; those in cached are in
// the informers' stores too, the others only on the "server", as an object the informer has not seen yet.
func newController(t *testing.T, objects []runtime.Object, cached []runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewSimpleClientset(objects...)
	controllertest.ConflictOnStaleWrites(client)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	c, err := New(client, hcp.ARMOperations(), hcp.HCPClusters(), hcp.NodePools(), hcp.ExternalAuths(), hcp.BreakglassCredentials(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range cached {
		var err error
		switch obj.(type) {
		case *v1alpha1.ARMOperation:
			err = hcp.ARMOperations().Informer().GetIndexer().Add(obj)
		case *v1alpha1.HCPCluster:
			err = hcp.HCPClusters().Informer().GetIndexer().Add(obj)
		case *v1alpha1.NodePool:
			err = hcp.NodePools().Informer().GetIndexer().Add(obj)
		case *v1alpha1.BreakglassCredential:
			err = hcp.BreakglassCredentials().Informer().GetIndexer().Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

func TestOperationFollowsItsTarget(t *testing.T) {
	now := created.Add(10 * time.Minute)
	before, after := created.Add(-time.Minute), created.Add(time.Minute)
	deliveryFailed := condition(v1alpha1.ConditionDelivered, metav1.ConditionFalse, "ApplyFailed", "the HostedCluster was refused: quota", now)
	for _, tc := range []struct {
		name      string
		op        *v1alpha1.ARMOperation
		target    runtime.Object // nil: gone
		uncached  bool           // the target is on the server, not yet in the informer
		want      v1alpha1.ARMOperationState
		wantCode  string
		wantInMsg string
	}{
		{name: "create of a cluster gone", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			want: v1alpha1.ARMOperationCanceled, wantCode: "Canceled", wantInMsg: "cluster dev was deleted"},
		{name: "create of a cluster replaced by another of the same name",
			op:     operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "older-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded), want: v1alpha1.ARMOperationCanceled, wantCode: "Canceled"},
		{name: "create of a cluster being deleted", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: deleting(cluster(1, 1, v1alpha1.ProvisioningStateDeleting)), want: v1alpha1.ARMOperationCanceled, wantCode: "Canceled", wantInMsg: "being deleted"},
		{name: "create of a cluster the informer has not seen yet", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 0, v1alpha1.ProvisioningStateAccepted), uncached: true, want: v1alpha1.ARMOperationAccepted},
		{name: "create whose status is of no generation yet", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 0, v1alpha1.ProvisioningStateProvisioning), want: v1alpha1.ARMOperationAccepted},
		{name: "create provisioning", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateProvisioning), want: v1alpha1.ARMOperationProvisioning},
		{name: "create succeeded", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded), want: v1alpha1.ARMOperationSucceeded},
		{name: "create failed before the status caught up", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 0, v1alpha1.ProvisioningStateFailed, deliveryFailed),
			want:   v1alpha1.ARMOperationFailed, wantCode: "InternalServerError", wantInMsg: "Delivered ApplyFailed: the HostedCluster was refused: quota"},
		{name: "create past its deadline", op: operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateFailed,
				condition(v1alpha1.ConditionProgressing, metav1.ConditionFalse, "DeadlineExceeded", "the cluster did not become available within 1h0m0s", now),
				condition(v1alpha1.ConditionAvailable, metav1.ConditionFalse, "HostedClusterAvailable", "etcd is not ready", now)),
			want: v1alpha1.ARMOperationFailed, wantCode: "InternalServerError", wantInMsg: "within 1h0m0s; Available HostedClusterAvailable: etcd is not ready"},
		{name: "update of a pool whose status is of the previous generation", op: operation(v1alpha1.ARMOperationUpdate, "nodepools", "dev.workers", "pool-uid", 2),
			target: pool(2, 1, v1alpha1.ProvisioningStateSucceeded), want: v1alpha1.ARMOperationUpdating},
		{name: "update of a pool succeeded", op: operation(v1alpha1.ARMOperationUpdate, "nodepools", "dev.workers", "pool-uid", 2),
			target: pool(2, 2, v1alpha1.ProvisioningStateSucceeded), want: v1alpha1.ARMOperationSucceeded},
		{name: "update of a pool failed", op: operation(v1alpha1.ARMOperationUpdate, "nodepools", "dev.workers", "pool-uid", 2),
			target: pool(2, 2, v1alpha1.ProvisioningStateFailed, condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "ApplyFailed", "bad VM size", now)),
			want:   v1alpha1.ARMOperationFailed, wantCode: "InternalServerError", wantInMsg: "node pool dev.workers failed: Ready ApplyFailed: bad VM size"},
		{name: "delete of a cluster still there", op: operation(v1alpha1.ARMOperationDelete, "hcpclusters", "dev", "cluster-uid", 1),
			target: deleting(cluster(1, 1, v1alpha1.ProvisioningStateDeleting)), want: v1alpha1.ARMOperationDeleting},
		{name: "delete of a cluster gone", op: operation(v1alpha1.ARMOperationDelete, "hcpclusters", "dev", "cluster-uid", 1),
			want: v1alpha1.ARMOperationSucceeded},
		{name: "delete of a pool made again since", op: operation(v1alpha1.ARMOperationDelete, "nodepools", "dev.workers", "older-uid", 1),
			target: pool(1, 1, v1alpha1.ProvisioningStateAccepted), want: v1alpha1.ARMOperationSucceeded},
		{name: "credential pending", op: operation(v1alpha1.ARMOperationRequestCredential, "breakglasscredentials", "admin-1", "credential-uid", 1),
			target: credential(v1alpha1.BreakglassCredentialPhasePending), want: v1alpha1.ARMOperationProvisioning},
		{name: "credential issued", op: operation(v1alpha1.ARMOperationRequestCredential, "breakglasscredentials", "admin-1", "credential-uid", 1),
			target: credential(v1alpha1.BreakglassCredentialPhaseIssued), want: v1alpha1.ARMOperationSucceeded},
		{name: "credential revoked before it was issued", op: operation(v1alpha1.ARMOperationRequestCredential, "breakglasscredentials", "admin-1", "credential-uid", 1),
			target: credential(v1alpha1.BreakglassCredentialPhaseRevoked,
				condition(v1alpha1.ConditionIssued, metav1.ConditionFalse, "Revoked", "the credentials of cluster dev were revoked", now)),
			want: v1alpha1.ARMOperationFailed, wantCode: "InternalServerError", wantInMsg: "is Revoked: the credentials of cluster dev were revoked"},
		{name: "credential deleted", op: operation(v1alpha1.ARMOperationRequestCredential, "breakglasscredentials", "admin-1", "credential-uid", 1),
			want: v1alpha1.ARMOperationCanceled, wantCode: "Canceled"},
		{name: "revocation requested", op: operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded,
				condition(v1alpha1.ConditionRevokingCredentials, metav1.ConditionTrue, v1alpha1.RevocationRequested, "requested", before)),
			want: v1alpha1.ARMOperationDeleting},
		{name: "revocation done before this one was asked for", op: operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded,
				condition(v1alpha1.ConditionRevokingCredentials, metav1.ConditionFalse, v1alpha1.CredentialsRevoked, "revoked", before)),
			want: v1alpha1.ARMOperationDeleting},
		{name: "revocation done", op: operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded,
				condition(v1alpha1.ConditionRevokingCredentials, metav1.ConditionFalse, v1alpha1.CredentialsRevoked, "revoked", after)),
			want: v1alpha1.ARMOperationSucceeded},
		{name: "revocation done in the second the operation was made", op: operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded,
				condition(v1alpha1.ConditionRevokingCredentials, metav1.ConditionFalse, v1alpha1.CredentialsRevoked, "revoked", created.Time)),
			want: v1alpha1.ARMOperationSucceeded},
		{name: "revocation impossible", op: operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1),
			target: cluster(1, 1, v1alpha1.ProvisioningStateSucceeded,
				condition(v1alpha1.ConditionRevokingCredentials, metav1.ConditionFalse, "NotPlaced", "the cluster is not placed", after)),
			want: v1alpha1.ARMOperationFailed, wantCode: "InternalServerError", wantInMsg: "not revoked: the cluster is not placed"},
		{name: "revocation of a cluster gone", op: operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1),
			want: v1alpha1.ARMOperationCanceled, wantCode: "Canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects, cached := []runtime.Object{tc.op}, []runtime.Object{tc.op}
			if tc.target != nil {
				objects = append(objects, tc.target)
				if !tc.uncached {
					cached = append(cached, tc.target)
				}
			}
			c, client := newController(t, objects, cached)
			c.now = func() time.Time { return now }
			if _, err := c.sync(context.Background(), opName); err != nil {
				t.Fatal(err)
			}
			got, err := client.HcpV1alpha1().ARMOperations().Get(context.Background(), opName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := got.Status
			if s.State != tc.want {
				t.Fatalf("state %s, want %s (error %+v)", s.State, tc.want, s.Error)
			}
			if moved := tc.want != tc.op.Status.State; moved != (s.LastTransitionTime != nil && s.LastTransitionTime.Time.Equal(now)) {
				t.Errorf("lastTransitionTime %v after a move from %s to %s, want now only when the state changed", s.LastTransitionTime, tc.op.Status.State, s.State)
			}
			if isFinal := tc.want.Final(); isFinal != (s.EndTime != nil) {
				t.Errorf("endTime %v in state %s; want one exactly when the operation ended", s.EndTime, s.State)
			}
			switch {
			case tc.wantCode == "" && s.Error != nil:
				t.Errorf("error %+v, want none", s.Error)
			case tc.wantCode != "" && (s.Error == nil || s.Error.Code != tc.wantCode || !strings.Contains(s.Error.Message, tc.wantInMsg)):
				t.Errorf("error %+v, want code %s with a message that says %q", s.Error, tc.wantCode, tc.wantInMsg)
			}
		})
	}
}

func TestEndedOperationStaysAndGoesAfterRetention(t *testing.T) {
	op := operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1)
	ended := metav1.NewTime(created.Add(time.Hour))
	op.Status = v1alpha1.ARMOperationStatus{State: v1alpha1.ARMOperationSucceeded, LastTransitionTime: &ended, EndTime: &ended}
	// The cluster is gone since: an ended operation does not turn Canceled.
	c, client := newController(t, []runtime.Object{op}, []runtime.Object{op})

	c.now = func() time.Time { return created.Add(DefaultRetention - time.Minute) }
	after, err := c.sync(context.Background(), opName)
	if err != nil {
		t.Fatal(err)
	}
	if after != time.Minute {
		t.Errorf("looked at again in %v, want when the retention ends, in a minute", after)
	}
	got, err := client.HcpV1alpha1().ARMOperations().Get(context.Background(), opName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the operation is gone before its retention ended: %v", err)
	}
	if got.Status.State != v1alpha1.ARMOperationSucceeded || got.Status.Error != nil {
		t.Errorf("status %+v of an ended operation whose target went, want it Succeeded as it ended", got.Status)
	}

	c.now = func() time.Time { return created.Add(DefaultRetention) }
	if _, err := c.sync(context.Background(), opName); err != nil {
		t.Fatal(err)
	}
	if _, err := client.HcpV1alpha1().ARMOperations().Get(context.Background(), opName, metav1.GetOptions{}); err == nil {
		t.Errorf("the operation is still there %v after it was created", DefaultRetention)
	}
}

func TestRetentionIsConfigurable(t *testing.T) {
	op := operation(v1alpha1.ARMOperationDelete, "hcpclusters", "dev", "cluster-uid", 1)
	op.Status.State = v1alpha1.ARMOperationSucceeded
	c, client := newController(t, []runtime.Object{op}, []runtime.Object{op})
	c.retention = time.Hour
	c.now = func() time.Time { return created.Add(time.Hour) }
	if _, err := c.sync(context.Background(), opName); err != nil {
		t.Fatal(err)
	}
	if _, err := client.HcpV1alpha1().ARMOperations().Get(context.Background(), opName, metav1.GetOptions{}); err == nil {
		t.Errorf("the operation is still there after a retention of an hour")
	}
}

func TestIndexFindsTheOperationsOfATarget(t *testing.T) {
	ofDev := operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1)
	revocation := operation(v1alpha1.ARMOperationRevokeCredentials, "hcpclusters", "dev", "cluster-uid", 1)
	revocation.Name = "1b4b4d6e-6c1a-4b0e-9a53-5d1f0e9f3c11"
	ofPool := operation(v1alpha1.ARMOperationCreate, "nodepools", "dev", "pool-uid", 1)
	ofPool.Name = "2b4b4d6e-6c1a-4b0e-9a53-5d1f0e9f3c11"
	c, _ := newController(t, nil, []runtime.Object{ofDev, revocation, ofPool})
	got, err := c.byTarget.IndexKeys(byTarget, targetKey("hcpclusters", "ns", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(strings.Join(got, ","), ofDev.Name) || !strings.Contains(strings.Join(got, ","), revocation.Name) {
		t.Errorf("operations of hcpclusters ns/dev: %v, want %s and %s, not the node pool's of the same name", got, ofDev.Name, revocation.Name)
	}
}

// TestTargetEventsMoveOperations runs the controller on running informers: only the target's events, not
// a resync, bring the operation along.
func TestTargetEventsMoveOperations(t *testing.T) {
	op := operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1)
	op.CreationTimestamp = metav1.Now()
	target := cluster(1, 0, v1alpha1.ProvisioningStateAccepted)
	client := fake.NewSimpleClientset(op, target)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	c, err := New(client, hcp.ARMOperations(), hcp.HCPClusters(), hcp.NodePools(), hcp.ExternalAuths(), hcp.BreakglassCredentials(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)

	state := func() (v1alpha1.ARMOperationState, error) {
		got, err := client.HcpV1alpha1().ARMOperations().Get(ctx, opName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return got.Status.State, nil
	}
	for _, step := range []struct {
		observed int64
		state    v1alpha1.ProvisioningState
		want     v1alpha1.ARMOperationState
	}{
		{1, v1alpha1.ProvisioningStateProvisioning, v1alpha1.ARMOperationProvisioning},
		{1, v1alpha1.ProvisioningStateSucceeded, v1alpha1.ARMOperationSucceeded},
	} {
		current, err := client.HcpV1alpha1().HCPClusters("ns").Get(ctx, "dev", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		current.Status.ObservedGeneration, current.Status.ProvisioningState = step.observed, step.state
		if _, err := client.HcpV1alpha1().HCPClusters("ns").UpdateStatus(ctx, current, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		var last v1alpha1.ARMOperationState
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			last, err = state()
			return last == step.want, err
		}); err != nil {
			t.Fatalf("cluster %s: the operation is %s, want %s (%v)", step.state, last, step.want, err)
		}
	}
}

// A cluster the Azure side refused fails its operation with the reason: the identity and the role, not
// only that delivery waits.
func TestFailureNamesTheAzureSide(t *testing.T) {
	msg := failure("cluster", "dev", []metav1.Condition{
		condition(v1alpha1.ConditionDelivered, metav1.ConditionFalse, "AwaitingAzure", "the cluster is delivered once its managed identities are valid", created.Time),
		condition(v1alpha1.ConditionAzureIdentitiesValid, metav1.ConditionFalse, "RoleAssignmentMissing", "the managed identity /x of control plane operator \"control-plane\" lacks the role /r on the subnet /s", created.Time),
	})
	if !strings.HasPrefix(msg, "the cluster dev failed: AzureIdentitiesValid RoleAssignmentMissing: the managed identity /x") {
		t.Errorf("message %q, want the refused identity first", msg)
	}
}

func TestFailureMessageIsBounded(t *testing.T) {
	long := strings.Repeat("x", 10*maxMessage)
	msg := failure("cluster", "dev", []metav1.Condition{
		condition(v1alpha1.ConditionDelivered, metav1.ConditionFalse, "ApplyFailed", long, created.Time),
	})
	if len(msg) > maxMessage {
		t.Errorf("a message of %d bytes, want at most %d", len(msg), maxMessage)
	}
	if got := failure("cluster", "dev", nil); got != fmt.Sprintf("the cluster %s failed", "dev") {
		t.Errorf("message without conditions %q", got)
	}
}

// An operation a moment old whose target its informer has not seen yet is not decided, nor is the target
// read from the server: the target's event is due, and brings the operation back. Once that is overdue,
// the server is asked (TestOperationFollowsItsTarget's "create of a cluster the informer has not seen yet").
func TestNewOperationWaitsForItsTargetsInformer(t *testing.T) {
	op := operation(v1alpha1.ARMOperationCreate, "hcpclusters", "dev", "cluster-uid", 1)
	target := cluster(1, 1, v1alpha1.ProvisioningStateSucceeded)
	c, client := newController(t, []runtime.Object{op, target}, []runtime.Object{op})
	c.now = func() time.Time { return created.Add(100 * time.Millisecond) }
	client.ClearActions()

	after, err := c.sync(context.Background(), opName)
	if err != nil {
		t.Fatal(err)
	}
	if after <= 0 || after > informerLag {
		t.Errorf("sync asks to come back after %v, want within %v, in case the target's event never comes", after, informerLag)
	}
	if actions := client.Actions(); len(actions) != 0 {
		t.Errorf("the sync called the server: %v; want nothing before the target's informer has had its time", actions)
	}

	c.now = func() time.Time { return created.Add(informerLag + 100*time.Millisecond) }
	if _, err := c.sync(context.Background(), opName); err != nil {
		t.Fatal(err)
	}
	got, err := client.HcpV1alpha1().ARMOperations().Get(context.Background(), opName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != v1alpha1.ARMOperationSucceeded {
		t.Errorf("once the informer's time is over, the operation is %s; want Succeeded, as the server has its cluster", got.Status.State)
	}
}
