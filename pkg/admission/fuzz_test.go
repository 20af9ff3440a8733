package admission_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	hcpadmission "github.com/aro-hcp/hcp-apiserver/pkg/admission"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/initializer"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/breakglasscredential"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/externalauth"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/hcpcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/managementcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/nodepool"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// requestNamespace is the namespace in the URL of every namespaced request.
const requestNamespace = "ns"

// admittedKind is a kind clients write: how its storage news, prepares and validates it.
type admittedKind struct {
	resource string
	newObj   func() runtime.Object
	strategy interface {
		rest.RESTCreateStrategy
		rest.RESTUpdateStrategy
	}
}

var admittedKinds = []admittedKind{
	{"hcpclusters", func() runtime.Object { return &hcp.HCPCluster{} }, hcpcluster.NewStrategy(apiserver.Scheme, nil, nil)},
	{"nodepools", func() runtime.Object { return &hcp.NodePool{} }, nodepool.NewStrategy(apiserver.Scheme)},
	{"breakglasscredentials", func() runtime.Object { return &hcp.BreakglassCredential{} }, breakglasscredential.NewStrategy(apiserver.Scheme)},
	{"managementclusters", func() runtime.Object { return &hcp.ManagementCluster{} }, managementcluster.NewStrategy(apiserver.Scheme)},
	{"externalauths", func() runtime.Object { return &hcp.ExternalAuth{} }, externalauth.NewStrategy(apiserver.Scheme)},
}

// admittedFormats are the media types request bodies arrive in.
var admittedFormats = []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf}

// FuzzAdmission sends creates and updates through what the server does with them: the body (and, for an
// update, the stored object's) decoded by the server's codecs, prepared and validated by the kind's
// strategy, then admitted by each of the service's admission plugins, one at a time, and a delete of the
// object as stored. A plugin never panics, and a refusal is a status error that names its plugin.
func FuzzAdmission(f *testing.F) {
	dev := fixtures.HCPCluster(requestNamespace, "dev")
	upgraded := dev.DeepCopy()
	upgraded.Spec.Version.ID = "4.21"
	experimental := dev.DeepCopy()
	experimental.Annotations = map[string]string{hcp.ExperimentalFeaturesAnnotation: "true"}
	experimental.Spec.Version = v1alpha1.VersionProfile{ID: "4.22", ChannelGroup: "candidate"}
	pool := fixtures.NodePool(requestNamespace, "dev", "workers")
	skewed := pool.DeepCopy()
	skewed.Spec.Version.ID = "4.21.3"
	orphan := fixtures.NodePool(requestNamespace, "gone", "workers")
	late := fixtures.NodePool(requestNamespace, "going", "workers")
	for format := range admittedFormats {
		for _, obj := range []runtime.Object{dev, pool, orphan, late, experimental, fixtures.ManagementCluster("mc-1"),
			fixtures.BreakglassCredential(requestNamespace, "dev", "oncall"), fixtures.BreakglassCredential(requestNamespace, "gone", "oncall"),
			fixtures.ExternalAuth(requestNamespace, "dev", "entra"), fixtures.ExternalAuth(requestNamespace, "going", "entra")} {
			f.Add(uint8(format), kindOf(f, obj), encodeBody(f, uint8(format), obj), []byte(nil))
		}
		f.Add(uint8(format), kindOf(f, dev), encodeBody(f, uint8(format), upgraded), encodeBody(f, uint8(format), dev))
		f.Add(uint8(format), kindOf(f, dev), encodeBody(f, uint8(format), dev), encodeBody(f, uint8(format), upgraded))
		f.Add(uint8(format), kindOf(f, pool), encodeBody(f, uint8(format), skewed), encodeBody(f, uint8(format), pool))
	}

	plugins := newPlugins(f)
	f.Fuzz(func(t *testing.T, format, kind uint8, body, storedBody []byte) {
		if int(format) >= len(admittedFormats) || int(kind) >= len(admittedKinds) {
			return
		}
		k := admittedKinds[kind]
		obj, err := decodeBody(format, k, body)
		if err != nil {
			return
		}
		namespace := ""
		if k.strategy.NamespaceScoped() {
			namespace = requestNamespace
		}
		ctx := genericapirequest.WithNamespace(context.Background(), namespace)
		op, opts := admission.Create, runtime.Object(&metav1.CreateOptions{})
		var stored runtime.Object
		if len(storedBody) > 0 {
			// Only what passed a create is stored.
			if stored, err = decodeBody(format, k, storedBody); err != nil || create(ctx, k, stored) != nil {
				return
			}
			mustAccessor(t, stored).SetResourceVersion("1")
			// An update without a resourceVersion replaces what is stored, as the storage allows.
			if accessor := mustAccessor(t, obj); accessor.GetResourceVersion() == "" {
				accessor.SetResourceVersion("1")
			}
			if err := rest.BeforeUpdate(k.strategy, ctx, obj, stored); err != nil {
				return
			}
			op, opts = admission.Update, &metav1.UpdateOptions{}
		} else if err := create(ctx, k, obj); err != nil {
			return
		}

		name := mustAccessor(t, obj).GetName()
		gvk := v1alpha1.SchemeGroupVersion.WithKind(kindName(obj))
		gvr := v1alpha1.SchemeGroupVersion.WithResource(k.resource)
		admit := func(a admission.Attributes) {
			for _, p := range plugins {
				if !p.Handles(a.GetOperation()) {
					continue
				}
				err := p.Interface.(admission.ValidationInterface).Validate(ctx, a, nil)
				if err == nil {
					continue
				}
				t.Logf("%s refused a %s of %s %q: %v", p.name, a.GetOperation(), gvk.Kind, name, err)
				if _, ok := err.(apierrors.APIStatus); !ok || !strings.Contains(err.Error(), p.name) {
					t.Fatalf("%s refused a %s of %s %q with %T %q: want a status error that names the plugin",
						p.name, a.GetOperation(), gvk.Kind, name, err, err)
				}
			}
		}
		userInfo := &user.DefaultInfo{Name: "fuzz", Groups: []string{user.AllAuthenticated}}
		admit(admission.NewAttributesRecord(obj, stored, gvk, namespace, name, gvr, "", op, opts, false, userInfo))
		admit(admission.NewAttributesRecord(nil, obj, gvk, namespace, name, gvr, "", admission.Delete,
			&metav1.DeleteOptions{}, false, userInfo))
	})
}

// create does what the storage does with a created object before admission.
func create(ctx context.Context, k admittedKind, obj runtime.Object) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rest.FillObjectMetaSystemFields(accessor)
	return rest.BeforeCreate(k.strategy, ctx, obj)
}

type namedPlugin struct {
	name string
	admission.Interface
}

// newPlugins returns the service's plugins, each initialised as the server does, reading a cluster dev
// that is Succeeded at 4.20 on management cluster mc-1, a cluster going that is being deleted, and mc-1.
func newPlugins(f *testing.F) []namedPlugin {
	dev := fixtures.HCPCluster(requestNamespace, "dev")
	dev.Status = v1alpha1.HCPClusterStatus{ProvisioningState: v1alpha1.ProvisioningStateSucceeded, ManagementCluster: "mc-1"}
	going := fixtures.HCPCluster(requestNamespace, "going")
	going.DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	going.Finalizers = []string{hcp.DeliveryFinalizer}
	client := fake.NewSimpleClientset(dev, going, fixtures.ManagementCluster("mc-1"))
	factory := informers.NewSharedInformerFactory(client, 0)

	registered := admission.NewPlugins()
	hcpadmission.RegisterAll(registered)
	pluginInitializer := initializer.New(client, factory, versioncatalog.Default())
	var plugins []namedPlugin
	for _, name := range hcpadmission.OrderedPlugins {
		p, err := registered.InitPlugin(name, nil, pluginInitializer)
		if err != nil {
			f.Fatal(err)
		}
		plugins = append(plugins, namedPlugin{name, p})
	}
	factory.Start(f.Context().Done())
	for informer, synced := range factory.WaitForCacheSync(f.Context().Done()) {
		if !synced {
			f.Fatalf("informer %v did not sync", informer)
		}
	}
	return plugins
}

func decodeBody(format uint8, k admittedKind, body []byte) (runtime.Object, error) {
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), admittedFormats[format])
	into := k.newObj()
	defaultGVK := v1alpha1.SchemeGroupVersion.WithKind(kindName(into))
	obj, gvk, err := apiserver.Codecs.DecoderToVersion(info.Serializer, hcp.SchemeGroupVersion).Decode(body, &defaultGVK, into)
	if err == nil && gvk.GroupKind() != defaultGVK.GroupKind() {
		// The server refuses a body of another kind than its URL's.
		return nil, apierrors.NewBadRequest("the body is a " + gvk.String())
	}
	return obj, err
}

func encodeBody(tb testing.TB, format uint8, obj runtime.Object) []byte {
	tb.Helper()
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), admittedFormats[format])
	var buf bytes.Buffer
	if err := apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion).Encode(obj, &buf); err != nil {
		tb.Fatalf("encoding %T: %v", obj, err)
	}
	return buf.Bytes()
}

func kindName(obj runtime.Object) string {
	gvks, _, err := apiserver.Scheme.ObjectKinds(obj)
	if err != nil {
		panic(err)
	}
	return gvks[0].Kind
}

func kindOf(tb testing.TB, obj runtime.Object) uint8 {
	tb.Helper()
	for i, k := range admittedKinds {
		if kindName(k.newObj()) == kindName(obj) {
			return uint8(i)
		}
	}
	tb.Fatalf("no admitted kind %T", obj)
	return 0
}

func mustAccessor(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return accessor
}
