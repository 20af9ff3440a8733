package localwatch_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/localwatch"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/managementcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// The server's informers read its stores as the loopback client did: what was there before they
// started, what is created, changed and deleted after, as v1alpha1 objects of their own.
func TestInformerFollowsTheStore(t *testing.T) {
	opts := registrytest.NewRESTOptions(t, "managementclusters")
	opts.Decorator = genericregistry.StorageWithCacher() // the server's stores serve lists and watches from the watch cache
	opts.StorageConfig.EventsHistoryWindow = storagebackend.DefaultEventsHistoryWindow
	store, _, err := managementcluster.NewREST(registrytest.Scheme, registrytest.OptionsGetter{RESTOptions: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Store.DestroyFunc)
	ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)

	stores := &localwatch.Stores{}
	lw := stores.ListerWatcher(registrytest.Scheme, v1alpha1.SchemeGroupVersion, "managementclusters")
	if _, err := lw.List(metav1.ListOptions{}); err == nil {
		t.Error("a list before the server made its stores did not fail")
	}
	stores.Serve(map[string]rest.Storage{"managementclusters": store})

	create := func(name string) {
		t.Helper()
		obj := &hcp.ManagementCluster{}
		registrytest.Internal(t, fixtures.ManagementCluster(name), obj)
		if _, err := store.Create(ctx, obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	create("listed")

	informer := cache.NewSharedIndexInformer(lw, &v1alpha1.ManagementCluster{}, 0, cache.Indexers{})
	informerCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go informer.RunWithContext(informerCtx)
	if !cache.WaitForCacheSync(informerCtx.Done(), informer.HasSynced) {
		t.Fatal("the informer never synced")
	}

	create("after")
	current, err := store.Get(ctx, "before", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := current.(*hcp.ManagementCluster).DeepCopy()
	changed.Labels = map[string]string{"team": "sre"}
	if _, _, err := store.Update(ctx, "before", rest.DefaultUpdatedObjectInfo(changed), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Delete(ctx, "after", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var seen *v1alpha1.ManagementCluster
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, afterHeld, _ := informer.GetStore().GetByKey("after")
		obj, beforeHeld, _ := informer.GetStore().GetByKey("before")
		if !beforeHeld || afterHeld {
			return false, nil
		}
		seen = obj.(*v1alpha1.ManagementCluster)
		return seen.Labels["team"] == "sre", nil
	})
	if err != nil {
		t.Fatalf("the informer holds %v, want only \"before\" with its new label (last seen: %+v)", informer.GetStore().ListKeys(), seen)
	}
	if want := fixtures.ManagementCluster("before").Spec; seen.Spec.ConsumerName != want.ConsumerName || seen.Spec.Capacity != want.Capacity {
		t.Errorf("the informer's object has spec %+v, want the stored %+v", seen.Spec, want)
	}

	// What the informer holds is its own, whether it came by the watch or by a list (which informers make
	// when they cannot stream their first objects, or after a watch failed): changing it (which no
	// controller may do) changes nothing the server serves.
	listedObj, _, _ := informer.GetStore().GetByKey("listed")
	list, err := lw.List(metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	held := []*v1alpha1.ManagementCluster{seen, listedObj.(*v1alpha1.ManagementCluster)}
	for i := range list.(*v1alpha1.ManagementClusterList).Items {
		held = append(held, &list.(*v1alpha1.ManagementClusterList).Items[i])
	}
	if len(held) != 4 {
		t.Errorf("a list gave %d management clusters, want 2", len(held)-2)
	}
	for _, held := range held {
		if held.Spec.Schedulable == nil {
			t.Fatalf("%s has no spec.schedulable, which the store defaults", held.Name)
		}
		*held.Spec.Schedulable = !*held.Spec.Schedulable
		served, err := store.Get(ctx, held.Name, &metav1.GetOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		if got := served.(*hcp.ManagementCluster).Spec.Schedulable; *got == *held.Spec.Schedulable {
			t.Errorf("the watch cache serves %s with spec.schedulable %v after the informer's copy changed it", held.Name, *got)
		}
	}
}
