package integration

import (
	"context"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

func TestObjectsSurviveARestartOnTheSameDataDir(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	first, err := framework.StartInProcessServer(ctx, dir, framework.InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created, err := first.Client.HcpV1alpha1().HCPClusters("default").Create(ctx, fixtures.HCPCluster("default", "dev"), metav1.CreateOptions{})
	if err != nil {
		first.Stop()
		t.Fatal(err)
	}
	if _, err := first.Client.HcpV1alpha1().ManagementClusters().Create(ctx, fixtures.ManagementCluster("mc-1"), metav1.CreateOptions{}); err != nil {
		first.Stop()
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}

	second, err := framework.StartInProcessServer(ctx, dir, framework.InProcessOptions{})
	if err != nil {
		t.Fatalf("restarting on the same data dir: %v", err)
	}
	defer second.Stop()
	got, err := second.Client.HcpV1alpha1().HCPClusters("default").Get(ctx, "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the cluster is gone after a restart: %v", err)
	}
	// The same object: its status may have moved on, written by the controllers.
	if got.UID != created.UID || got.Status.ClusterID != created.Status.ClusterID || !apiequality.Semantic.DeepEqual(got.Spec, created.Spec) {
		t.Errorf("after restart uid %s clusterID %s spec %+v, before %s %s %+v", got.UID, got.Status.ClusterID, got.Spec, created.UID, created.Status.ClusterID, created.Spec)
	}
	if _, err := second.Client.HcpV1alpha1().ManagementClusters().Get(ctx, "mc-1", metav1.GetOptions{}); err != nil {
		t.Errorf("the management cluster is gone after a restart: %v", err)
	}
	// The admin credentials made on the first start still work: they are what the client used.
}
