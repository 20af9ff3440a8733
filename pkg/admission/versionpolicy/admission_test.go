package versionpolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// newPlugin returns the plugin with the compiled-in catalog and the given clusters in its lister.
func newPlugin(t *testing.T, clusters ...*v1alpha1.HCPCluster) *Plugin {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	live := fake.NewSimpleClientset()
	for _, c := range clusters {
		if err := f.Hcp().V1alpha1().HCPClusters().Informer().GetStore().Add(c); err != nil {
			t.Fatal(err)
		}
		if err := live.Tracker().Add(c); err != nil {
			t.Fatal(err)
		}
	}
	p := New()
	p.SetInformerFactory(f)
	p.SetClient(live)
	p.SetVersionCatalog(versioncatalog.Default())
	p.SetReadyFunc(func() bool { return true })
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return p
}

func cluster(versionID, group string, annotations map[string]string) *hcp.HCPCluster {
	return &hcp.HCPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev", Annotations: annotations},
		Spec:       hcp.HCPClusterSpec{Version: hcp.VersionProfile{ID: versionID, ChannelGroup: group}},
	}
}

func pool(versionID string) *hcp.NodePool {
	return &hcp.NodePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev.workers"},
		Spec:       hcp.NodePoolSpec{ClusterName: "dev", Version: hcp.VersionProfile{ID: versionID, ChannelGroup: "stable"}},
	}
}

func attrs(obj, old runtime.Object, kind, resource string) admission.Attributes {
	op := admission.Create
	if old != nil {
		op = admission.Update
	}
	name := obj.(metav1.Object).GetName()
	return admission.NewAttributesRecord(obj, old, hcp.Kind(kind).WithVersion(""), "ns", name,
		hcp.Resource(resource).WithVersion(""), "", op, nil, false, nil)
}

func TestClusterVersions(t *testing.T) {
	experimental := map[string]string{hcp.ExperimentalFeaturesAnnotation: "true"}
	for _, tc := range []struct {
		name      string
		cluster   *hcp.HCPCluster
		old       *hcp.HCPCluster
		wantError string // "" means admitted
	}{
		{name: "4.20 stable", cluster: cluster("4.20", "stable", nil)},
		{name: "4.21 fast", cluster: cluster("4.21", "fast", nil)},
		{name: "below the minimum", cluster: cluster("4.18", "stable", nil), wantError: `spec.version.id: Invalid value: "4.18": must be one of 4.20, 4.21 in channel group stable`},
		{name: "a next major", cluster: cluster("5.0", "stable", nil), wantError: "must be one of 4.20, 4.21"},
		{name: "not in the channel group", cluster: cluster("4.22", "stable", nil), wantError: "must be one of 4.20, 4.21 in channel group stable"},
		{name: "candidate without the annotation", cluster: cluster("4.22", "candidate", nil), wantError: "needs the annotation " + hcp.ExperimentalFeaturesAnnotation},
		{name: "candidate with the annotation", cluster: cluster("4.22", "candidate", experimental)},
		{name: "one minor up", cluster: cluster("4.21", "stable", nil), old: cluster("4.20", "stable", nil)},
		{name: "down", cluster: cluster("4.20", "stable", nil), old: cluster("4.21", "stable", nil), wantError: "cannot move down from 4.21"},
		{name: "two minors up", cluster: cluster("4.22", "candidate", experimental), old: cluster("4.20", "candidate", experimental), wantError: "at most one minor at a time: from 4.20 to 4.21"},
		// A cluster whose version left the catalog can still be labelled.
		{name: "unchanged version outside the catalog", cluster: cluster("4.19", "stable", map[string]string{"a": "b"}), old: cluster("4.19", "stable", nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err := newPlugin(t).Validate(context.Background(), attrs(tc.cluster, old, "HCPCluster", "hcpclusters"), nil)
			checkError(t, err, tc.wantError)
		})
	}
}

func TestNodePoolVersions(t *testing.T) {
	controlPlane := func(v string) *v1alpha1.HCPCluster {
		return &v1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev"},
			Spec: v1alpha1.HCPClusterSpec{Version: v1alpha1.VersionProfile{ID: v, ChannelGroup: "stable"}}}
	}
	for _, tc := range []struct {
		name      string
		cluster   *v1alpha1.HCPCluster
		pool      *hcp.NodePool
		wantError string
	}{
		{name: "same minor", cluster: controlPlane("4.20"), pool: pool("4.20.8")},
		{name: "one minor behind", cluster: controlPlane("4.21"), pool: pool("4.20.8")},
		{name: "not in the catalog", cluster: controlPlane("4.20"), pool: pool("4.20.99"), wantError: `spec.version.id: Invalid value: "4.20.99": is not a release of channel group stable`},
		{name: "newer than the control plane", cluster: controlPlane("4.20"), pool: pool("4.21.1"), wantError: "must not be newer than the control plane of HCPCluster dev, which runs 4.20"},
		{name: "three minors behind", cluster: controlPlane("4.23"), pool: pool("4.20.8"), wantError: "at most 2 minors older"},
		{name: "no version: the service picks it", cluster: controlPlane("4.20"), pool: pool("")},
		{name: "another channel group than the control plane's", cluster: controlPlane("4.20"), pool: func() *hcp.NodePool {
			p := pool("")
			p.Spec.Version.ChannelGroup = "fast"
			return p
		}(), wantError: `spec.version.channelGroup: Invalid value: "fast": must be the same as control plane channel group 'stable'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newPlugin(t, tc.cluster).Validate(context.Background(), attrs(tc.pool, nil, "NodePool", "nodepools"), nil)
			checkError(t, err, tc.wantError)
		})
	}
}

func checkError(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want a 422 Invalid", err)
	}
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "admission plugin "+PluginName) {
		t.Errorf("message %q lacks %q or the plugin name", err.Error(), want)
	}
}

// TestNodePoolSkewIsConfirmedWithTheServer: the informer may still show a control plane
// from before its upgrade; the pool upgrade that follows must not be refused for it.
func TestNodePoolSkewIsConfirmedWithTheServer(t *testing.T) {
	cached := &v1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev"},
		Spec: v1alpha1.HCPClusterSpec{Version: v1alpha1.VersionProfile{ID: "4.20", ChannelGroup: "stable"}}}
	p := newPlugin(t, cached)
	upgraded := cached.DeepCopy()
	upgraded.Spec.Version.ID = "4.21"
	p.SetClient(fake.NewSimpleClientset(upgraded))
	if err := p.Validate(context.Background(), attrs(pool("4.21.1"), nil, "NodePool", "nodepools"), nil); err != nil {
		t.Errorf("a pool following its freshly upgraded control plane was refused: %v", err)
	}
}

// A minor past its end of life takes no new cluster, upgrade or node pool; what runs on it may still change.
func TestEndOfLife(t *testing.T) {
	eol, _ := versioncatalog.Default().EndOfLife("4.20")
	controlPlane := &v1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dev"},
		Spec: v1alpha1.HCPClusterSpec{Version: v1alpha1.VersionProfile{ID: "4.20", ChannelGroup: "stable"}}}
	for _, tc := range []struct {
		name      string
		now       time.Time
		obj, old  runtime.Object
		kind, res string
		wantError string
	}{
		{name: "a new cluster the day before", now: eol.Add(-24 * time.Hour), obj: cluster("4.20", "stable", nil), kind: "HCPCluster", res: "hcpclusters"},
		{name: "a new cluster on the day", now: eol, obj: cluster("4.20", "stable", nil), kind: "HCPCluster", res: "hcpclusters",
			wantError: `spec.version.id: Invalid value: "4.20": reached its end of life on ` + eol.UTC().Format(time.DateOnly) + "; channel group stable offers 4.21"},
		{name: "a running cluster's other fields", now: eol.Add(time.Hour), obj: cluster("4.20", "stable", map[string]string{"a": "b"}),
			old: cluster("4.20", "stable", nil), kind: "HCPCluster", res: "hcpclusters"},
		{name: "a new node pool", now: eol.Add(time.Hour), obj: pool("4.20.8"), kind: "NodePool", res: "nodepools",
			wantError: `spec.version.id: Invalid value: "4.20.8": reached its end of life`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, controlPlane)
			p.now = func() time.Time { return tc.now }
			err := p.Validate(context.Background(), attrs(tc.obj, tc.old, tc.kind, tc.res), nil)
			checkError(t, err, tc.wantError)
		})
	}
}
