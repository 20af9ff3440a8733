package leaderterm

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// A controller of a term that has ended must not act any more: after a lost lead, the next leader's
// controllers are the only ones. The informers, and what the admission plugins read, go on.
func TestTermInformersEndWithTheTerm(t *testing.T) {
	client := fake.NewSimpleClientset(fixtures.HCPCluster("ns", "before"))
	shared := informers.NewSharedInformerFactory(client, 0)
	serverCtx, stopServer := context.WithCancel(t.Context())
	defer stopServer()

	index := cache.Indexers{"test/location": func(obj any) ([]string, error) {
		return []string{obj.(*v1alpha1.HCPCluster).Spec.Location}, nil
	}}
	var firstTerm, secondTerm atomic.Int32
	count := func(n *atomic.Int32) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{AddFunc: func(any) { n.Add(1) }}
	}

	termCtx, endTerm := context.WithCancel(serverCtx)
	first := New(termCtx)
	clusters := Lend(first, shared.Hcp().V1alpha1().HCPClusters())
	if err := clusters.Informer().AddIndexers(index); err != nil {
		t.Fatal(err)
	}
	if _, err := clusters.Informer().AddEventHandler(count(&firstTerm)); err != nil {
		t.Fatal(err)
	}
	shared.Start(serverCtx.Done())
	waitFor(t, "the first term's controller to see the cluster there before", func() bool { return firstTerm.Load() == 1 })
	endTerm()
	waitFor(t, "the first term to let go of its handlers", func() bool {
		first.mu.Lock()
		defer first.mu.Unlock()
		return first.registrations == nil
	})

	clusters = Lend(New(serverCtx), shared.Hcp().V1alpha1().HCPClusters())
	if err := clusters.Informer().AddIndexers(index); err != nil {
		t.Fatalf("the next term adding the same index: %v", err)
	}
	if _, err := clusters.Informer().AddEventHandler(count(&secondTerm)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.HcpV1alpha1().HCPClusters("ns").Create(t.Context(), fixtures.HCPCluster("ns", "after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second term's controller to see both clusters", func() bool { return secondTerm.Load() == 2 })
	if got, err := clusters.Lister().HCPClusters("ns").Get("after"); err != nil || got.Name != "after" {
		t.Fatalf("the lister after the first term ended: %v, %v", got, err)
	}
	time.Sleep(100 * time.Millisecond) // a handler still registered would have been called by now
	if n := firstTerm.Load(); n != 1 {
		t.Errorf("the first term's handler was called %d times, want once: it was not removed when the term ended", n)
	}
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return done(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
