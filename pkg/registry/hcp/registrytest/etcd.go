// Package registrytest runs a resource's store on a real etcd for registry tests,
// as kube's pkg/registry/registrytest does.
package registrytest

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/install"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// Scheme holds the API's types for the tests' conversions and codecs.
var Scheme = runtime.NewScheme()

func init() { install.Install(Scheme) }

// NewRESTOptions starts an etcd member for the test and returns storage options for
// resource on it, encoding objects as v1alpha1 as the server does. The member stops
// when the test ends.
func NewRESTOptions(t *testing.T, resource string) generic.RESTOptions {
	opts, _ := NewRESTOptionsAndClient(t, resource)
	return opts
}

// NewRESTOptionsAndClient is NewRESTOptions with a client of the etcd member, for what a test reads or
// writes beside the store (claims).
func NewRESTOptionsAndClient(t *testing.T, resource string) (generic.RESTOptions, *clientv3.Client) {
	server, config := etcd3testing.NewUnsecuredEtcd3TestClientServer(t)
	t.Cleanup(func() { server.Terminate(t) })
	config.Codec = serializer.NewCodecFactory(Scheme).LegacyCodec(v1alpha1.SchemeGroupVersion)
	gr := schema.GroupResource{Group: v1alpha1.GroupName, Resource: resource}
	return generic.RESTOptions{
		StorageConfig:           &storagebackend.ConfigForResource{Config: *config, GroupResource: gr},
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          gr.Group + "/" + gr.Resource,
	}, server.V3Client.Client
}

// OptionsGetter hands out the same options for every resource.
type OptionsGetter struct{ generic.RESTOptions }

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g OptionsGetter) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return g.RESTOptions, nil
}

// NewREST is the shape of every resource's storage constructor.
type NewREST func(*runtime.Scheme, generic.RESTOptionsGetter) (*hcpregistry.REST, *hcpregistry.StatusREST, error)

// NewTester returns kube's generic store tester on a real etcd for the resource newREST stores.
func NewTester(t *testing.T, resource string, newREST NewREST) *genericregistrytest.Tester {
	store, _, err := newREST(Scheme, OptionsGetter{RESTOptions: NewRESTOptions(t, resource)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Store.DestroyFunc)
	return genericregistrytest.New(t, store.Store)
}

// Internal defaults a versioned fixture, as decoding a request does, and converts it
// to the internal type stores work with.
func Internal(t *testing.T, versioned, internal runtime.Object) {
	t.Helper()
	Scheme.Default(versioned)
	if err := Scheme.Convert(versioned, internal, nil); err != nil {
		t.Fatal(err)
	}
}
