package integration

import (
	"context"
	"slices"
	"sort"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func TestListWithFieldAndLabelSelectors(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	hc := client().HcpV1alpha1()
	for _, cluster := range []string{"alpha", "beta"} {
		if _, err := hc.HCPClusters(ns).Create(ctx, fixtures.HCPCluster(ns, cluster), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, pool := range []string{"workers", "infra"} {
			p := fixtures.NodePool(ns, cluster, pool)
			p.Labels = map[string]string{"role": pool}
			if _, err := hc.NodePools(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, err := updateClusterStatus(ctx, ns, "beta", func(beta *v1alpha1.HCPCluster) {
		beta.Status.ManagementCluster = "mc-1"
		beta.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	})
	if err != nil {
		t.Fatal(err)
	}
	// Credentials are issued only for Succeeded clusters.
	if _, err := hc.BreakglassCredentials(ns).Create(ctx, fixtures.BreakglassCredential(ns, "beta", "beta-oncall"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	names := func(items []string, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(items)
		return items
	}
	poolNames := func(opts metav1.ListOptions) ([]string, error) {
		list, err := hc.NodePools(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, p := range list.Items {
			out = append(out, p.Name)
		}
		return out, nil
	}
	clusterNames := func(opts metav1.ListOptions) ([]string, error) {
		list, err := hc.HCPClusters(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, c := range list.Items {
			out = append(out, c.Name)
		}
		return out, nil
	}

	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"pools of alpha", names(poolNames(metav1.ListOptions{FieldSelector: "spec.clusterName=alpha"})), []string{"alpha.infra", "alpha.workers"}},
		{"pools not of alpha", names(poolNames(metav1.ListOptions{FieldSelector: "spec.clusterName!=alpha"})), []string{"beta.infra", "beta.workers"}},
		{"worker pools", names(poolNames(metav1.ListOptions{LabelSelector: "role=workers"})), []string{"alpha.workers", "beta.workers"}},
		{"worker pools of beta", names(poolNames(metav1.ListOptions{LabelSelector: "role=workers", FieldSelector: "spec.clusterName=beta"})), []string{"beta.workers"}},
		{"clusters on mc-1", names(clusterNames(metav1.ListOptions{FieldSelector: "status.managementCluster=mc-1"})), []string{"beta"}},
		{"succeeded clusters", names(clusterNames(metav1.ListOptions{FieldSelector: "status.provisioningState=Succeeded"})), []string{"beta"}},
		{"unplaced clusters", names(clusterNames(metav1.ListOptions{FieldSelector: "status.managementCluster="})), []string{"alpha"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	creds, err := hc.BreakglassCredentials(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.clusterName=beta"})
	if err != nil || len(creds.Items) != 1 || creds.Items[0].Name != "beta-oncall" {
		t.Errorf("credentials of beta: %+v, %v", creds, err)
	}

	_, err = hc.NodePools(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.vmSize=Standard_D8s_v3"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("unsupported field selector: %v, want BadRequest", err)
	}
}
