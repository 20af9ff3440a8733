package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// A pool of a cluster that no management cluster takes says so in its Ready condition, with the
// cluster's state and the reason placement gave.
func TestNodePoolSaysWhyItWaits(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	cluster := createCluster(t, ns, "dev")
	pools := client().HcpV1alpha1().NodePools(ns)
	if _, err := pools.Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "cluster dev is Accepted and not placed on a management cluster yet: no schedulable management cluster in " +
		cluster.Spec.Location + " with free capacity and a connected agent"
	var ready *metav1.Condition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		np, err := pools.Get(ctx, "dev.workers", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready = meta.FindStatusCondition(np.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && strings.HasPrefix(ready.Message, want), nil
	})
	if err != nil || ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.NodePoolReasonClusterNotReady {
		t.Errorf("Ready %+v (%v), want False, ClusterNotReady, %q", ready, err, want)
	}
}
