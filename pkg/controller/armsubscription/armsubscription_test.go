package armsubscription

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/controllertest"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const (
	deletedSub = "00000000-0000-0000-0000-00000000000d"
	otherSub   = "00000000-0000-0000-0000-00000000000e"
)

func subscription(name string, state v1alpha1.ARMSubscriptionState) *v1alpha1.ARMSubscription {
	return &v1alpha1.ARMSubscription{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2},
		Spec:       v1alpha1.ARMSubscriptionSpec{State: state},
	}
}

func clusterOf(sub, namespace, name string) *v1alpha1.HCPCluster {
	c := fixtures.HCPCluster(namespace, name)
	c.UID = types.UID(namespace + "-" + name)
	if sub != "" {
		c.Labels = map[string]string{v1alpha1.ARMSubscriptionLabel: sub}
	}
	return c
}

// harness is the controller over a fake clientset whose informer stores the test fills by hand.
type harness struct {
	c        *Controller
	client   *fake.Clientset
	clusters cache.Indexer
	subs     cache.Indexer
}

func newHarness(t *testing.T, objects ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewSimpleClientset(objects...)
	controllertest.ConflictOnStaleWrites(client)
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	c, err := New(client, hcp.ARMSubscriptions(), hcp.HCPClusters())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{c: c, client: client, clusters: hcp.HCPClusters().Informer().GetIndexer(), subs: hcp.ARMSubscriptions().Informer().GetIndexer()}
	for _, obj := range objects {
		switch obj.(type) {
		case *v1alpha1.ARMSubscription:
			err = h.subs.Add(obj)
		case *v1alpha1.HCPCluster:
			err = h.clusters.Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// sync runs the controller on name and returns the subscription as stored, which the informer then holds.
func (h *harness) sync(t *testing.T, name string) *v1alpha1.ARMSubscription {
	t.Helper()
	ctx := context.Background()
	if _, err := h.c.sync(ctx, name); err != nil {
		t.Fatal(err)
	}
	sub, err := h.client.HcpV1alpha1().ARMSubscriptions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.subs.Update(sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

func (h *harness) storedClusters(t *testing.T) string {
	t.Helper()
	list, err := h.client.HcpV1alpha1().HCPClusters("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list.Items {
		names = append(names, c.Namespace+"/"+c.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func TestDeletedSubscriptionDeletesOnlyItsClusters(t *testing.T) {
	alreadyDeleting := clusterOf(deletedSub, "rg-c", "three")
	alreadyDeleting.DeletionTimestamp, alreadyDeleting.Finalizers = &metav1.Time{Time: time.Now()}, []string{v1alpha1.DeliveryFinalizer}
	h := newHarness(t,
		subscription(deletedSub, v1alpha1.ARMSubscriptionDeleted),
		subscription(otherSub, v1alpha1.ARMSubscriptionRegistered),
		clusterOf(deletedSub, "rg-a", "one"), clusterOf(deletedSub, "rg-b", "two"), alreadyDeleting,
		clusterOf(otherSub, "rg-a", "kept"), clusterOf("", "rg-a", "unlabelled"))
	var deletes []string
	h.client.PrependReactor("delete", "hcpclusters", func(action k8stesting.Action) (bool, runtime.Object, error) {
		deletes = append(deletes, action.GetNamespace()+"/"+action.(k8stesting.DeleteAction).GetName())
		return false, nil, nil
	})

	sub := h.sync(t, deletedSub)
	if got := h.storedClusters(t); got != "rg-a/kept,rg-a/unlabelled,rg-c/three" {
		t.Errorf("clusters left %s, want those of other subscriptions, without the label, and the one being deleted", got)
	}
	if got := strings.Join(deletes, ","); got != "rg-a/one,rg-b/two" && got != "rg-b/two,rg-a/one" {
		t.Errorf("deleted %s, want rg-a/one and rg-b/two once each: rg-c/three is being deleted already", got)
	}
	// The informer still holds the three: they are being deleted, not gone.
	cond := meta.FindStatusCondition(sub.Status.Conditions, v1alpha1.ConditionResourcesDeleted)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "3 HCPClusters") {
		t.Errorf("ResourcesDeleted %+v while the clusters are being deleted, want False counting 3", cond)
	}
	if sub.Status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d, want 2", sub.Status.ObservedGeneration)
	}

	for _, key := range []string{"rg-a/one", "rg-b/two", "rg-c/three"} {
		obj, _, _ := h.clusters.GetByKey(key)
		if err := h.clusters.Delete(obj); err != nil {
			t.Fatal(err)
		}
	}
	sub = h.sync(t, deletedSub)
	cond = meta.FindStatusCondition(sub.Status.Conditions, v1alpha1.ConditionResourcesDeleted)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("ResourcesDeleted %+v once the clusters are gone, want True", cond)
	}

	if other := h.sync(t, otherSub); len(other.Status.Conditions) != 0 || other.Status.ObservedGeneration != 2 {
		t.Errorf("status %+v of a Registered subscription, want no condition and observedGeneration 2", other.Status)
	}
}

func TestOnlyDeletedSubscriptionsReportResourcesDeleted(t *testing.T) {
	for _, state := range []v1alpha1.ARMSubscriptionState{v1alpha1.ARMSubscriptionRegistered, v1alpha1.ARMSubscriptionUnregistered,
		v1alpha1.ARMSubscriptionWarned, v1alpha1.ARMSubscriptionSuspended} {
		t.Run(string(state), func(t *testing.T) {
			sub := subscription(deletedSub, state)
			// Left from a state before.
			sub.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionResourcesDeleted, Status: metav1.ConditionTrue, Reason: reasonDeleted}}
			h := newHarness(t, sub, clusterOf(deletedSub, "rg-a", "one"))
			got := h.sync(t, deletedSub)
			if len(got.Status.Conditions) != 0 {
				t.Errorf("conditions %+v of a %s subscription, want none", got.Status.Conditions, state)
			}
			if clusters := h.storedClusters(t); clusters != "rg-a/one" {
				t.Errorf("clusters %s of a %s subscription, want its cluster kept", clusters, state)
			}
		})
	}
}

// TestClusterOfADeletedSubscriptionIsDeletedWhenItComes runs the controller on running informers: a
// cluster labelled with a Deleted subscription, made after the subscription was deleted, goes too.
func TestClusterOfADeletedSubscriptionIsDeletedWhenItComes(t *testing.T) {
	client := fake.NewSimpleClientset(subscription(deletedSub, v1alpha1.ARMSubscriptionDeleted))
	factory := informers.NewSharedInformerFactory(client, 0)
	hcp := factory.Hcp().V1alpha1()
	c, err := New(client, hcp.ARMSubscriptions(), hcp.HCPClusters())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)

	resourcesDeleted := func(status metav1.ConditionStatus) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			sub, err := client.HcpV1alpha1().ARMSubscriptions().Get(ctx, deletedSub, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return meta.IsStatusConditionPresentAndEqual(sub.Status.Conditions, v1alpha1.ConditionResourcesDeleted, status), nil
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, resourcesDeleted(metav1.ConditionTrue)); err != nil {
		t.Fatalf("ResourcesDeleted of a Deleted subscription without clusters never True: %v", err)
	}
	if _, err := client.HcpV1alpha1().HCPClusters("rg-a").Create(ctx, clusterOf(deletedSub, "rg-a", "late"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.HcpV1alpha1().HCPClusters("rg-a").Get(ctx, "late", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("the cluster of a Deleted subscription is still there: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, resourcesDeleted(metav1.ConditionTrue)); err != nil {
		t.Fatalf("ResourcesDeleted never True again once the late cluster went: %v", err)
	}
}
