package render_test

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// FuzzBundles renders what clients send: a cluster and a node pool as the server stores them (decoded
// by its codecs, defaulted and valid) and the pull secret given on the command line. What renders is a
// bundle the agent can apply: each manifest a named object with a manifest config naming it, sent in a
// spec event that passes the protocol's checks.
func FuzzBundles(f *testing.F) {
	cluster := mustJSON(f, fixtures.HCPCluster("ns", "dev"))
	for _, pullSecret := range []string{"", `{"auths":{"quay.io":{"auth":"dXNlcjp0b2tlbg=="}}}`, `{"auths":null}`, `[]`} {
		f.Add(cluster, mustJSON(f, fixtures.NodePool("ns", "dev", "workers")), []byte(pullSecret))
	}
	// A pool with every optional field, as artifacts/examples/20-nodepool.yaml has it.
	f.Add(cluster, []byte(`{"metadata":{"name":"dev.gpu","namespace":"ns"},"spec":{"clusterName":"dev",`+
		`"version":{"id":"4.20.8"},"platform":{"vmSize":"Standard_NC6s_v3","osDisk":{"sizeGiB":128},"availabilityZone":"1"},`+
		`"autoScaling":{"min":1,"max":4},"labels":{"workload":"gpu"},"taints":[{"key":"nvidia.com/gpu","value":"true","effect":"NoSchedule"}],`+
		`"config":[{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"KubeletConfig","metadata":{"name":"gpu-kubelet"},"spec":{"kubeletConfig":{"maxPods":150}}}],`+
		`"tuningConfig":[{"apiVersion":"tuned.openshift.io/v1","kind":"Tuned","metadata":{"name":"gpu-hugepages"},"spec":{"profile":[{"name":"p","data":"[main]"}]}}]}}`),
		[]byte(nil))
	f.Fuzz(func(t *testing.T, clusterJSON, poolJSON, pullSecret []byte) {
		cluster := &v1alpha1.HCPCluster{}
		if !storedAs(t, clusterJSON, &hcp.HCPCluster{}, cluster) {
			return
		}
		cluster.Status.ClusterID = clusterID
		o := render.Options{PullSecret: pullSecret}
		b, err := render.ClusterBundle(render.ClusterInput{Cluster: cluster, ReleaseImage: releaseImage}, o)
		if err != nil {
			t.Logf("the cluster does not render: %v", err)
			return
		}
		checkBundle(t, b)
		np := &v1alpha1.NodePool{}
		if !storedAs(t, poolJSON, &hcp.NodePool{}, np) {
			return
		}
		if b, err = render.NodePoolBundle(cluster, np, releaseImage, o); err != nil {
			t.Logf("the node pool does not render: %v", err)
			return
		}
		checkBundle(t, b)
	})
}

// storedAs decodes body as the server does into internal, and returns it in out (v1alpha1) if it is
// valid, as the controllers read it.
func storedAs(t *testing.T, body []byte, internal, out runtime.Object) bool {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	kinds, _, err := apiserver.Scheme.ObjectKinds(internal)
	if err != nil {
		t.Fatal(err)
	}
	defaultGVK := v1alpha1.SchemeGroupVersion.WithKind(kinds[0].Kind)
	obj, _, err := apiserver.Codecs.DecoderToVersion(info.Serializer, hcp.SchemeGroupVersion).Decode(body, &defaultGVK, internal)
	if err != nil {
		return false
	}
	switch obj := obj.(type) {
	case *hcp.HCPCluster:
		if len(validation.ValidateHCPCluster(obj)) > 0 {
			return false
		}
	case *hcp.NodePool:
		if len(validation.ValidateNodePool(obj)) > 0 {
			return false
		}
	default:
		return false
	}
	if err := apiserver.Scheme.Convert(obj, out, nil); err != nil {
		t.Fatalf("a valid %T does not convert to v1alpha1: %v", obj, err)
	}
	return true
}

func checkBundle(t *testing.T, b *protocol.ManifestBundle) {
	t.Helper()
	if err := b.Validate(); err != nil {
		t.Fatalf("rendered an invalid bundle: %v", err)
	}
	if len(b.ManifestConfigs) != len(b.Manifests) {
		t.Fatalf("%d manifests with %d manifest configs", len(b.Manifests), len(b.ManifestConfigs))
	}
	for i, raw := range b.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			t.Fatalf("manifests[%d] is not a Kubernetes object: %v\n%s", i, err, raw)
		}
		id := b.ManifestConfigs[i].ResourceIdentifier
		if obj.GetName() == "" || obj.GetAPIVersion() == "" || id.Name != obj.GetName() || id.Namespace != obj.GetNamespace() ||
			id.Group != obj.GroupVersionKind().Group {
			t.Fatalf("manifests[%d] %s %s/%s has the manifest config %+v", i, obj.GetKind(), obj.GetNamespace(), obj.GetName(), id)
		}
	}
	e, err := protocol.NewSpecEvent("hcp", protocol.ActionCreateRequest,
		protocol.BundleRef{ClusterName: "mc-1", ResourceID: "r", ResourceVersion: 1}, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := protocol.ToMQTT(e); err != nil && !errors.Is(err, protocol.ErrEventTooLarge) {
		t.Fatalf("a rendered bundle cannot be sent: %v", err)
	}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}
