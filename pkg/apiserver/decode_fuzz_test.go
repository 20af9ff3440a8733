package apiserver_test

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	openapibuilder3 "k8s.io/kube-openapi/pkg/builder3"
	openapiutil "k8s.io/kube-openapi/pkg/util"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/openapi"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// The media types a client may send a body in.
var bodyMediaTypes = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf}

// bodyKinds are every kind a client may create, as its storage's New returns it.
var bodyKinds = []func() runtime.Object{
	func() runtime.Object { return &hcp.HCPCluster{} },
	func() runtime.Object { return &hcp.NodePool{} },
	func() runtime.Object { return &hcp.BreakglassCredential{} },
	func() runtime.Object { return &hcp.ManagementCluster{} },
	func() runtime.Object { return &hcp.ARMSubscription{} },
	func() runtime.Object { return &hcp.ARMOperation{} },
	func() runtime.Object { return &hcp.ExternalAuth{} },
}

// FuzzRequestBody takes a request body as the server's handlers do before any validation: decoded by
// the server's codecs into the internal version (conversion included), then turned into the typed value
// the field manager records ownership on, which is where an object the decoder let through once made the
// server panic. Whatever decodes must be trackable and must encode and decode again in every media type.
func FuzzRequestBody(f *testing.F) {
	for _, obj := range seedObjects() {
		for format := range bodyMediaTypes {
			f.Add(uint8(format), bodyKindIndex(f, obj), encodeBody(f, bodyMediaTypes[format], obj))
		}
	}
	notJSON := fixtures.NodePool("ns", "dev", "workers")
	notJSON.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("NodePool"))
	notJSON.Spec.Config = []runtime.RawExtension{{Raw: []byte(`{not json`)}}
	f.Add(uint8(2), uint8(1), encodeBody(f, runtime.ContentTypeProtobuf, notJSON))
	notJSON.Spec.Config = nil
	notJSON.Spec.TuningConfig = []runtime.RawExtension{{Raw: []byte(`{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`)}}
	f.Add(uint8(2), uint8(1), encodeBody(f, runtime.ContentTypeProtobuf, notJSON))

	tracker := typeConverter(f)
	f.Fuzz(func(t *testing.T, format, kind uint8, body []byte) {
		if int(format) >= len(bodyMediaTypes) || int(kind) >= len(bodyKinds) {
			return
		}
		mediaType := bodyMediaTypes[format]
		obj, err := decodeBody(mediaType, kind, body)
		if err != nil {
			return
		}
		versioned, err := apiserver.Scheme.ConvertToVersion(obj, v1alpha1.SchemeGroupVersion)
		if err != nil {
			t.Fatalf("an object that decodes does not convert back to v1alpha1: %v", err)
		}
		// An object the schema does not fit is refused with 400 by the handlers; what matters here is
		// that tracking it does not panic.
		_, _ = tracker.ObjectToTyped(versioned)
		for _, other := range bodyMediaTypes {
			encoded := encodeBody(t, other, obj)
			if _, err := decodeBody(other, kind, encoded); err != nil {
				t.Fatalf("an object that decodes from %s does not decode from %s once encoded: %v\n%q", mediaType, other, err, encoded)
			}
		}
	})
}

// typeConverter is the field manager's view of the API's types, built as the generic server builds it
// from the OpenAPI definitions.
func typeConverter(tb testing.TB) managedfields.TypeConverter {
	tb.Helper()
	config := genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(apiserver.Scheme))
	var names []string
	for _, newObj := range bodyKinds {
		versioned, err := apiserver.Scheme.New(v1alpha1.SchemeGroupVersion.WithKind(bodyKindName(newObj())))
		if err != nil {
			tb.Fatal(err)
		}
		names = append(names, openapiutil.GetCanonicalTypeName(versioned))
	}
	spec, err := openapibuilder3.BuildOpenAPIDefinitionsForResources(config, names...)
	if err != nil {
		tb.Fatal(err)
	}
	converter, err := managedfields.NewTypeConverter(spec, false)
	if err != nil {
		tb.Fatal(err)
	}
	return converter
}

func decodeBody(mediaType string, kind uint8, body []byte) (runtime.Object, error) {
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), mediaType)
	into := bodyKinds[kind]()
	defaultGVK := v1alpha1.SchemeGroupVersion.WithKind(bodyKindName(into))
	obj, _, err := apiserver.Codecs.DecoderToVersion(info.Serializer, hcp.SchemeGroupVersion).Decode(body, &defaultGVK, into)
	return obj, err
}

// servedSerializers are the serializers the server's API group answers with.
var servedSerializers = apiserver.PrintableYAML(apiserver.Codecs)

func encodeBody(tb testing.TB, mediaType string, obj runtime.Object) []byte {
	tb.Helper()
	info, _ := runtime.SerializerInfoForMediaType(servedSerializers.SupportedMediaTypes(), mediaType)
	var buf bytes.Buffer
	if err := apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion).Encode(obj, &buf); err != nil {
		tb.Fatalf("encoding %T as %s: %v", obj, mediaType, err)
	}
	return buf.Bytes()
}

func bodyKindName(obj runtime.Object) string {
	gvks, _, err := apiserver.Scheme.ObjectKinds(obj)
	if err != nil {
		panic(err)
	}
	return gvks[0].Kind
}

func bodyKindIndex(tb testing.TB, obj runtime.Object) uint8 {
	tb.Helper()
	for i, newObj := range bodyKinds {
		if bodyKindName(newObj()) == obj.GetObjectKind().GroupVersionKind().Kind {
			return uint8(i)
		}
	}
	tb.Fatalf("no kind %s", obj.GetObjectKind().GroupVersionKind())
	return 0
}

// seedObjects are a valid object of every kind, with their kinds set.
func seedObjects() []runtime.Object {
	pool := fixtures.NodePool("ns", "dev", "workers")
	pool.Spec.Config = []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"KubeletConfig","metadata":{"name":"k"},"spec":{"kubeletConfig":{"maxPods":250}}}`)}}
	objs := []runtime.Object{
		fixtures.HCPCluster("ns", "dev"),
		pool,
		fixtures.BreakglassCredential("ns", "dev", "oncall"),
		fixtures.ManagementCluster("mc-1"),
		&v1alpha1.ARMSubscription{ObjectMeta: metav1.ObjectMeta{Name: "0a1b2c3d-0000-4000-8000-000000000001"},
			Spec: v1alpha1.ARMSubscriptionSpec{State: v1alpha1.ARMSubscriptionRegistered}},
		&v1alpha1.ARMOperation{ObjectMeta: metav1.ObjectMeta{Name: "0a1b2c3d-0000-4000-8000-0000000000ff"},
			Spec: v1alpha1.ARMOperationSpec{Request: v1alpha1.ARMOperationCreate, ResourceID: "/subscriptions/x", SubscriptionID: "x",
				Location: "eastus", Target: v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: "ns", Name: "dev"}}},
		fixtures.ExternalAuth("ns", "dev", "entra"),
	}
	kinds := []string{"HCPCluster", "NodePool", "BreakglassCredential", "ManagementCluster", "ARMSubscription", "ARMOperation", "ExternalAuth"}
	for i, obj := range objs {
		obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kinds[i]))
	}
	return objs
}
