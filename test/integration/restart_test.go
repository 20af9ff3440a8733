package integration

import (
	"context"
	"testing"

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
	if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("after restart uid %s rv %s, before %s %s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
	}
	if _, err := second.Client.HcpV1alpha1().ManagementClusters().Get(ctx, "mc-1", metav1.GetOptions{}); err != nil {
		t.Errorf("the management cluster is gone after a restart: %v", err)
	}
	// The admin credentials made on the first start still work: they are what the client used.
}
