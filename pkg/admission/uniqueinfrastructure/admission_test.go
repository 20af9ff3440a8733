package uniqueinfrastructure

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
)

const (
	subscriptionA = "00000000-0000-0000-0000-00000000000a"
	subscriptionB = "00000000-0000-0000-0000-00000000000b"
	subnetA       = "/subscriptions/" + subscriptionA + "/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/workers"
	subnetB       = "/subscriptions/" + subscriptionA + "/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/other"
	nsgA          = "/subscriptions/" + subscriptionA + "/resourceGroups/net/providers/Microsoft.Network/networkSecurityGroups/nsg"
	nsgB          = "/subscriptions/" + subscriptionA + "/resourceGroups/net/providers/Microsoft.Network/networkSecurityGroups/other"
)

// existing is the cluster already in the cache.
func existing() *v1alpha1.HCPCluster {
	return &v1alpha1.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "prod"},
		Spec: v1alpha1.HCPClusterSpec{
			Azure: v1alpha1.AzureResourceReference{SubscriptionID: subscriptionA, ResourceGroup: "clusters"},
			Platform: v1alpha1.PlatformProfile{
				SubnetID: subnetA, NetworkSecurityGroupID: nsgA, ManagedResourceGroup: "prod-managed",
			},
		},
	}
}

// newCluster is the cluster being created; by default it shares nothing with existing().
func newCluster() *hcp.HCPCluster {
	return &hcp.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "dev"},
		Spec: hcp.HCPClusterSpec{
			Azure: hcp.AzureResourceReference{SubscriptionID: subscriptionA, ResourceGroup: "clusters"},
			Platform: hcp.PlatformProfile{
				SubnetID: subnetB, NetworkSecurityGroupID: nsgB, ManagedResourceGroup: "dev-managed",
			},
		},
	}
}

func newPlugin(t *testing.T, clusters ...*v1alpha1.HCPCluster) *Plugin {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	p := New()
	p.SetInformerFactory(f)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	// The informers are not started; the test fills their stores instead.
	p.SetReadyFunc(func() bool { return true })
	for _, c := range clusters {
		if err := f.Hcp().V1alpha1().HCPClusters().Informer().GetStore().Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func createAttributes(c *hcp.HCPCluster) admission.Attributes {
	return admission.NewAttributesRecord(c, nil, hcp.Kind("HCPCluster").WithVersion("v1alpha1"), c.Namespace, c.Name,
		hcp.Resource("hcpclusters").WithVersion("v1alpha1"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		existing func(*v1alpha1.HCPCluster)
		mutate   func(*hcp.HCPCluster)
		// want are substrings of the refusal; none means the create is admitted.
		want []string
	}{
		{name: "nothing shared"},
		{
			name:   "same subnet",
			mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = subnetA },
			want: []string{`spec.platform.subnetID: Invalid value: "` + subnetA + `"`,
				"is already used by HCPCluster team-a/prod in subscription " + subscriptionA + "; a subnet can serve one cluster only"},
		},
		{
			name:   "same subnet in other letter case",
			mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = strings.ToUpper(subnetA) },
			want:   []string{"spec.platform.subnetID", "is already used by HCPCluster team-a/prod"},
		},
		{
			name:   "same network security group",
			mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.NetworkSecurityGroupID = strings.ToLower(nsgA) },
			want: []string{"spec.platform.networkSecurityGroupID",
				"is already used by HCPCluster team-a/prod in subscription " + subscriptionA + "; a network security group can serve one cluster only"},
		},
		{
			name: "same network security group from another subscription",
			mutate: func(c *hcp.HCPCluster) {
				c.Spec.Azure.SubscriptionID = subscriptionB
				c.Spec.Platform.NetworkSecurityGroupID = nsgA
			},
			want: []string{"spec.platform.networkSecurityGroupID", "is already used by HCPCluster team-a/prod in subscription " + subscriptionA},
		},
		{
			name:   "same managed resource group",
			mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "PROD-managed" },
			want: []string{`spec.platform.managedResourceGroup: Invalid value: "PROD-managed"`,
				"is already used by HCPCluster team-a/prod in subscription " + subscriptionA + "; a managed resource group can serve one cluster only"},
		},
		{
			name: "same managed resource group name in another subscription",
			mutate: func(c *hcp.HCPCluster) {
				c.Spec.Azure.SubscriptionID = subscriptionB
				c.Spec.Platform.ManagedResourceGroup = "prod-managed"
			},
		},
		{
			name:     "empty managed resource groups are not compared",
			existing: func(c *v1alpha1.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "" },
			mutate:   func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "" },
		},
		{
			name:   "managed resource group is the cluster's own resource group",
			mutate: func(c *hcp.HCPCluster) { c.Spec.Platform.ManagedResourceGroup = "Clusters" },
			want:   []string{"spec.platform.managedResourceGroup", "must differ from spec.azure.resourceGroup (clusters)"},
		},
		{
			name:     "a cluster being deleted still holds its subnet",
			existing: func(c *v1alpha1.HCPCluster) { c.DeletionTimestamp = &metav1.Time{} },
			mutate:   func(c *hcp.HCPCluster) { c.Spec.Platform.SubnetID = subnetA },
			want:     []string{"spec.platform.subnetID", "is already used by HCPCluster team-a/prod"},
		},
		{
			name: "every shared resource is reported",
			mutate: func(c *hcp.HCPCluster) {
				c.Spec.Platform.SubnetID, c.Spec.Platform.NetworkSecurityGroupID, c.Spec.Platform.ManagedResourceGroup = subnetA, nsgA, "prod-managed"
			},
			want: []string{"spec.platform.subnetID", "spec.platform.networkSecurityGroupID", "spec.platform.managedResourceGroup"},
		},
		{
			name: "the cached copy of the cluster itself is no collision",
			mutate: func(c *hcp.HCPCluster) {
				c.Namespace, c.Name = "team-a", "prod"
				c.Spec.Platform.SubnetID = subnetA
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := existing()
			if tc.existing != nil {
				tc.existing(old)
			}
			p := newPlugin(t, old)
			c := newCluster()
			if tc.mutate != nil {
				tc.mutate(c)
			}
			err := p.Validate(context.Background(), createAttributes(c), nil)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want the cluster admitted, got %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want 422 Invalid, got %v", err)
			}
			for _, want := range append(tc.want, "(admission plugin UniqueInfrastructure)") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestValidateNamesOneHolder checks that with several holders the refusal names the same one every time.
func TestValidateNamesOneHolder(t *testing.T) {
	first, second := existing(), existing()
	first.Namespace, second.Namespace = "aaa", "zzz"
	p := newPlugin(t, second, first)
	c := newCluster()
	c.Spec.Platform.SubnetID = subnetA
	err := p.Validate(context.Background(), createAttributes(c), nil)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "HCPCluster aaa/prod") {
		t.Fatalf("want a 422 naming aaa/prod, got %v", err)
	}
}

// TestSharedFactory checks that two instances of the plugin can share one informer factory,
// as they do when the server builds its admission chain more than once.
func TestSharedFactory(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for range 2 {
		p := New()
		p.SetInformerFactory(f)
		if err := p.ValidateInitialization(); err != nil {
			t.Fatal(err)
		}
	}
	if err := New().ValidateInitialization(); err == nil {
		t.Error("want an error from a plugin without the informer factory")
	}
}
