package integration

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// TestProtobufAndJSONClientsSeeTheSameObjects talks protobuf, as client-go based controllers and
// kube-controller-manager do, and JSON, as kubectl does, to the same objects.
func TestProtobufAndJSONClientsSeeTheSameObjects(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clientFor := func(contentType string) versioned.Interface {
		cfg := rest.CopyConfig(server.Config)
		cfg.ContentType = contentType
		cfg.AcceptContentTypes = contentType
		c, err := versioned.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pb, js := clientFor(runtime.ContentTypeProtobuf), clientFor(runtime.ContentTypeJSON)

	createCluster(t, ns, "dev")
	pool := fixtures.NodePool(ns, "dev", "gpu")
	pool.Spec.Labels = map[string]string{"workload": "gpu"}
	pool.Spec.Config = []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"KubeletConfig","metadata":{"name":"gpu"},"spec":{"kubeletConfig":{"maxPods":150}}}`)}}
	created, err := pb.HcpV1alpha1().NodePools(ns).Create(ctx, pool, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create over protobuf: %v", err)
	}
	if created.Spec.UpgradeType != "Replace" || len(created.Spec.Config) != 1 {
		t.Errorf("protobuf create returned %+v", created.Spec)
	}

	viaJSON, err := js.HcpV1alpha1().NodePools(ns).Get(ctx, pool.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get over JSON: %v", err)
	}
	if viaJSON.UID != created.UID || viaJSON.Spec.Labels["workload"] != "gpu" || len(viaJSON.Spec.Config) != 1 {
		t.Errorf("JSON client sees %+v", viaJSON.Spec)
	}

	list, err := pb.HcpV1alpha1().NodePools(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list over protobuf: %d items, %v", len(list.Items), err)
	}
	w, err := pb.HcpV1alpha1().NodePools(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch over protobuf: %v", err)
	}
	defer w.Stop()
	// The nodepool controller writes the pool's status meanwhile: retry on a conflict, and look past its
	// writes in the watch.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		viaJSON, err := js.HcpV1alpha1().NodePools(ns).Get(ctx, pool.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		viaJSON.Spec.Replicas = ptr.To[int32](7)
		_, err = js.HcpV1alpha1().NodePools(ns).Update(ctx, viaJSON, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			got, ok := ev.Object.(*v1alpha1.NodePool)
			if !ok || ev.Type != watch.Modified {
				t.Fatalf("protobuf watch event %s %T, want the update of the pool", ev.Type, ev.Object)
			}
			if got.Generation == 2 && *got.Spec.Replicas == 7 {
				return
			}
		case <-timeout:
			t.Fatal("no watch event of generation 2 over protobuf within 30s")
		}
	}
}
