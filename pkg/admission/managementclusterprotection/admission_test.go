package managementclusterprotection

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
)

func placed(namespace, name, managementCluster string) *v1alpha1.HCPCluster {
	return &v1alpha1.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Status:     v1alpha1.HCPClusterStatus{ManagementCluster: managementCluster},
	}
}

func newPlugin(t *testing.T, clusters ...*v1alpha1.HCPCluster) *Plugin {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	p := New()
	p.SetInformerFactory(f)
	p.SetClient(fake.NewSimpleClientset())
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

// deleteAttributes is a delete of one ManagementCluster as the generic registry admits it: with
// the stored object as the old object, and with no name when it is part of a delete-collection.
func deleteAttributes(name string, old *hcp.ManagementCluster) admission.Attributes {
	var oldObj runtime.Object // not a typed nil: the registry passes no object at all
	if old != nil {
		oldObj = old
	}
	return admission.NewAttributesRecord(nil, oldObj, hcp.Kind("ManagementCluster").WithVersion("v1alpha1"), "", name,
		hcp.Resource("managementclusters").WithVersion("v1alpha1"), "", admission.Delete, &metav1.DeleteOptions{}, false, nil)
}

func managementCluster(name string) *hcp.ManagementCluster {
	return &hcp.ManagementCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func TestValidate(t *testing.T) {
	seven := []*v1alpha1.HCPCluster{}
	for i := range 7 {
		seven = append(seven, placed("ns", fmt.Sprintf("c%d", i), "mc-1"))
	}
	tests := []struct {
		name     string
		clusters []*v1alpha1.HCPCluster
		attrs    admission.Attributes
		// want are substrings of the refusal; none means the delete is admitted.
		want []string
	}{
		{
			name:     "no hosted clusters",
			clusters: []*v1alpha1.HCPCluster{placed("ns", "a", "mc-2"), placed("ns", "b", "")},
			attrs:    deleteAttributes("mc-1", managementCluster("mc-1")),
		},
		{
			name:     "one hosted cluster",
			clusters: []*v1alpha1.HCPCluster{placed("team-a", "prod", "mc-1"), placed("ns", "b", "mc-2")},
			attrs:    deleteAttributes("mc-1", managementCluster("mc-1")),
			want: []string{"ManagementCluster mc-1 hosts 1 HCPCluster (team-a/prod)",
				"set spec.schedulable=false to stop new placements and move or delete the hosted clusters first"},
		},
		{
			name: "a hosted cluster being deleted still counts",
			clusters: []*v1alpha1.HCPCluster{func() *v1alpha1.HCPCluster {
				c := placed("team-a", "prod", "mc-1")
				c.DeletionTimestamp = &metav1.Time{}
				return c
			}()},
			attrs: deleteAttributes("mc-1", managementCluster("mc-1")),
			want:  []string{"hosts 1 HCPCluster (team-a/prod)"},
		},
		{
			name:     "many hosted clusters: five named and the count",
			clusters: seven,
			attrs:    deleteAttributes("mc-1", managementCluster("mc-1")),
			want:     []string{"ManagementCluster mc-1 hosts 7 HCPClusters (ns/c0, ns/c1, ns/c2, ns/c3, ns/c4 and 2 more)"},
		},
		{
			name:     "item of a delete-collection",
			clusters: []*v1alpha1.HCPCluster{placed("team-a", "prod", "mc-1")},
			attrs:    deleteAttributes("", managementCluster("mc-1")),
			want:     []string{"ManagementCluster mc-1 hosts 1 HCPCluster (team-a/prod)"},
		},
		{
			name:     "delete without the stored object",
			clusters: []*v1alpha1.HCPCluster{placed("team-a", "prod", "mc-1")},
			attrs:    deleteAttributes("mc-1", nil),
			want:     []string{"ManagementCluster mc-1 hosts 1 HCPCluster (team-a/prod)"},
		},
		{
			name:     "delete of another resource",
			clusters: []*v1alpha1.HCPCluster{placed("team-a", "prod", "mc-1")},
			attrs: admission.NewAttributesRecord(nil, nil, hcp.Kind("HCPCluster").WithVersion("v1alpha1"), "team-a", "mc-1",
				hcp.Resource("hcpclusters").WithVersion("v1alpha1"), "", admission.Delete, &metav1.DeleteOptions{}, false, nil),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := newPlugin(t, tc.clusters...).Validate(context.Background(), tc.attrs, nil)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want the delete admitted, got %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) {
				t.Fatalf("want 403 Forbidden, got %v", err)
			}
			for _, want := range append(tc.want, PluginName+":") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestIndexFollowsPlacement checks that a cluster that moves off the management cluster no
// longer blocks its deletion.
func TestIndexFollowsPlacement(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	p := New()
	p.SetInformerFactory(f)
	p.SetClient(fake.NewSimpleClientset())
	p.SetReadyFunc(func() bool { return true })
	store := f.Hcp().V1alpha1().HCPClusters().Informer().GetStore()
	if err := store.Add(placed("ns", "a", "mc-1")); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(context.Background(), deleteAttributes("mc-1", managementCluster("mc-1")), nil); !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 while ns/a is placed on mc-1, got %v", err)
	}
	if err := store.Update(placed("ns", "a", "mc-2")); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(context.Background(), deleteAttributes("mc-1", managementCluster("mc-1")), nil); err != nil {
		t.Fatalf("want the delete admitted after ns/a moved, got %v", err)
	}
}

// TestSharedFactory checks that two instances of the plugin can share one informer factory.
func TestSharedFactory(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for range 2 {
		p := New()
		p.SetInformerFactory(f)
		p.SetClient(fake.NewSimpleClientset())
		if err := p.ValidateInitialization(); err != nil {
			t.Fatal(err)
		}
	}
	if err := New().ValidateInitialization(); err == nil {
		t.Error("want an error from a plugin without the informer factory")
	}
}

// TestPlacementNotYetInTheInformer: a placement made a moment ago is confirmed with the server
// before a management cluster that looks empty is let go.
func TestPlacementNotYetInTheInformer(t *testing.T) {
	p := newPlugin(t)
	p.SetClient(fake.NewSimpleClientset(placed("ns", "dev", "mc-1")))
	err := p.Validate(context.Background(), deleteAttributes("mc-1", managementCluster("mc-1")), nil)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "ns/dev") {
		t.Errorf("got %v, want a refusal naming ns/dev", err)
	}
}
