package clusterreference

import (
	"context"
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

func newPlugin(t *testing.T, objects ...runtime.Object) *Plugin {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	p := New()
	p.SetInformerFactory(f)
	live := fake.NewSimpleClientset()
	p.SetClient(live)
	for _, o := range objects {
		var err error
		switch o := o.(type) {
		case *v1alpha1.HCPCluster:
			err = f.Hcp().V1alpha1().HCPClusters().Informer().GetStore().Add(o)
		case liveOnly:
			err = live.Tracker().Add(o.HCPCluster)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	p.SetReadyFunc(func() bool { return true })
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return p
}

// liveOnly is a cluster the server has but the informer has not seen yet.
type liveOnly struct{ *v1alpha1.HCPCluster }

func cluster(name string, state v1alpha1.ProvisioningState, deleting bool) *v1alpha1.HCPCluster {
	c := &v1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	c.Status.ProvisioningState = state
	if deleting {
		c.DeletionTimestamp = &metav1.Time{}
	}
	return c
}

func newPool(clusterName, name string) *hcp.NodePool {
	return &hcp.NodePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: hcp.NodePoolSpec{ClusterName: clusterName}}
}

func createAttrs(obj runtime.Object, kind, resource string) admission.Attributes {
	return admission.NewAttributesRecord(obj, nil, hcp.Kind(kind).WithVersion(""), "ns", obj.(metav1.Object).GetName(),
		hcp.Resource(resource).WithVersion(""), "", admission.Create, nil, false, nil)
}

func TestCreateNeedsALiveCluster(t *testing.T) {
	credential := &hcp.BreakglassCredential{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "oncall"}, Spec: hcp.BreakglassCredentialSpec{ClusterName: "dev"}}
	for _, tc := range []struct {
		name    string
		cluster *v1alpha1.HCPCluster
		live    bool
		check   func(error) bool
		message string
	}{
		{name: "cluster exists", cluster: cluster("dev", "", false)},
		{name: "no such cluster", cluster: cluster("other", "", false), check: apierrors.IsInvalid, message: `spec.clusterName: Not found: "dev"`},
		{name: "cluster not yet in the informer", live: true, cluster: cluster("dev", "", false)},
		{name: "cluster being deleted", cluster: cluster("dev", v1alpha1.ProvisioningStateDeleting, true), check: apierrors.IsConflict, message: "HCPCluster dev is being deleted"},
	} {
		for kind, attrs := range map[string]admission.Attributes{
			"NodePool": createAttrs(newPool("dev", "dev.workers"), "NodePool", "nodepools"),
			"ExternalAuth": createAttrs(&hcp.ExternalAuth{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev.entra"},
				Spec: hcp.ExternalAuthSpec{ClusterName: "dev"}}, "ExternalAuth", "externalauths"),
			"BreakglassCredential": createAttrs(credential, "BreakglassCredential", "breakglasscredentials"),
		} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				var stored runtime.Object = tc.cluster
				if tc.live {
					stored = liveOnly{tc.cluster}
				}
				err := newPlugin(t, stored).Validate(context.Background(), attrs, nil)
				checkError(t, err, tc.check, tc.message)
			})
		}
	}
}

func checkError(t *testing.T, err error, check func(error) bool, message string) {
	t.Helper()
	if check == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if !check(err) {
		t.Fatalf("got %v, want another kind of error", err)
	}
	if !strings.Contains(err.Error(), message) || !strings.Contains(err.Error(), PluginName) {
		t.Errorf("message %q lacks %q or the plugin name", err.Error(), message)
	}
}
