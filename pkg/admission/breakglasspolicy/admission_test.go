package breakglasspolicy

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
)

func cluster(name string, state v1alpha1.ProvisioningState, conditions ...metav1.Condition) *v1alpha1.HCPCluster {
	return &v1alpha1.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
		Status:     v1alpha1.HCPClusterStatus{ProvisioningState: state, Conditions: conditions},
	}
}

func revoking(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: v1alpha1.ConditionRevokingCredentials, Status: status, Reason: "Revoke"}
}

type fixture struct {
	clusters []*v1alpha1.HCPCluster
	// live are the clusters as the server has them, when the informer lags behind; clusters otherwise.
	live []*v1alpha1.HCPCluster
}

func newPlugin(t *testing.T, fx fixture) *Plugin {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	p := New()
	p.SetInformerFactory(f)
	live := fx.live
	if live == nil {
		live = fx.clusters
	}
	liveClient := fake.NewClientset()
	for _, c := range live {
		if err := liveClient.Tracker().Add(c); err != nil {
			t.Fatal(err)
		}
	}
	p.SetClient(liveClient)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	// The informers are not started; the test fills their stores instead.
	p.SetReadyFunc(func() bool { return true })
	for _, c := range fx.clusters {
		if err := f.Hcp().V1alpha1().HCPClusters().Informer().GetStore().Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func newCredential() *hcp.BreakglassCredential {
	return &hcp.BreakglassCredential{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "jane"},
		Spec:       hcp.BreakglassCredentialSpec{ClusterName: "dev", ExpirationSeconds: ptr.To[int64](3600)},
	}
}

func createAttributes(c *hcp.BreakglassCredential, subresource string) admission.Attributes {
	return admission.NewAttributesRecord(c, nil, hcp.Kind("BreakglassCredential").WithVersion("v1alpha1"), c.Namespace, c.Name,
		hcp.Resource("breakglasscredentials").WithVersion("v1alpha1"), subresource, admission.Create, &metav1.CreateOptions{}, false, nil)
}

func TestValidate(t *testing.T) {
	succeeded := []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateSucceeded)}

	tests := []struct {
		name   string
		fx     fixture
		mutate func(*hcp.BreakglassCredential)
		// subresource is the subresource created, if any.
		subresource string
		// check is the status the refusal must have; nil means the create is admitted.
		check func(error) bool
		// want are substrings of the refusal.
		want []string
	}{
		{name: "Succeeded cluster, server generated key", fx: fixture{clusters: succeeded}},

		// The cluster.
		{
			name:  "no such cluster",
			check: apierrors.IsInvalid,
			want:  []string{`spec.clusterName: Not found: "dev"`, "no HCPCluster of that name in namespace team-a; create the cluster first"},
		},
		{
			name: "cluster of that name only in another namespace",
			fx: fixture{clusters: []*v1alpha1.HCPCluster{{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "dev"},
				Status:     v1alpha1.HCPClusterStatus{ProvisioningState: v1alpha1.ProvisioningStateSucceeded},
			}}},
			check: apierrors.IsInvalid,
			want:  []string{`spec.clusterName: Not found: "dev"`, "no HCPCluster of that name in namespace team-a"},
		},
		{
			name:  "cluster still provisioning",
			fx:    fixture{clusters: []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateProvisioning)}},
			check: apierrors.IsConflict,
			want:  []string{"HCPCluster dev is Provisioning; break-glass credentials can be issued only for Succeeded clusters"},
		},
		{
			name:  "cluster not yet accepted",
			fx:    fixture{clusters: []*v1alpha1.HCPCluster{cluster("dev", "")}},
			check: apierrors.IsConflict,
			want:  []string{"HCPCluster dev is not yet Accepted; break-glass credentials can be issued only for Succeeded clusters"},
		},
		{
			name:  "cluster failed",
			fx:    fixture{clusters: []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateFailed)}},
			check: apierrors.IsConflict,
			want:  []string{"HCPCluster dev is Failed"},
		},
		{
			name:  "revocation in progress",
			fx:    fixture{clusters: []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateSucceeded, revoking(metav1.ConditionTrue))}},
			check: apierrors.IsConflict,
			want:  []string{"HCPCluster dev: a revocation of the cluster's credentials is in progress; try again when it completes"},
		},
		{
			name: "informer still shows an older state; the server has it Succeeded",
			fx: fixture{
				clusters: []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateProvisioning)},
				live:     succeeded,
			},
		},
		{
			name: "revocation completed",
			fx:   fixture{clusters: []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateSucceeded, revoking(metav1.ConditionFalse))}},
		},

		{
			name:        "creating the kubeconfig subresource is not issuing a credential",
			fx:          fixture{clusters: []*v1alpha1.HCPCluster{cluster("dev", v1alpha1.ProvisioningStateProvisioning)}},
			subresource: "kubeconfig",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, tc.fx)
			c := newCredential()
			if tc.mutate != nil {
				tc.mutate(c)
			}
			err := p.Validate(context.Background(), createAttributes(c, tc.subresource), nil)
			if tc.check == nil {
				if err != nil {
					t.Fatalf("want the credential admitted, got %v", err)
				}
				return
			}
			if !tc.check(err) {
				t.Fatalf("want a refusal with another status, got %v", err)
			}
			for _, want := range append(tc.want, PluginName) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestSharedFactory checks that two instances of the plugin can share one informer factory.
func TestSharedFactory(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for range 2 {
		p := New()
		p.SetInformerFactory(f)
		p.SetClient(fake.NewClientset())
		if err := p.ValidateInitialization(); err != nil {
			t.Fatal(err)
		}
	}
	if err := New().ValidateInitialization(); err == nil {
		t.Error("want an error from a plugin without the informer factory")
	}
}
