package intern_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/intern"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// storageCodec is the codec the server stores objects with: protobuf of v1alpha1, decoded to the internal
// version.
func storageCodec(t testing.TB) kruntime.Codec {
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  kruntime.ContentTypeProtobuf,
		StorageSerializer: apiserver.Codecs,
		StorageVersion:    v1alpha1.SchemeGroupVersion,
		MemoryVersion:     hcp.SchemeGroupVersion,
		Config:            storagebackend.Config{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return codec
}

var when = metav1.Date(2026, 12, 5, 16, 26, 2, 0, metav1.Now().Location())

// storedCluster is a cluster as stored once the server took it in: created by a client, with the conditions
// the server's controllers set.
func storedCluster(i int) *hcp.HCPCluster {
	versioned := fixtures.HCPCluster("default", fmt.Sprintf("cluster-%06d", i))
	c := &hcp.HCPCluster{}
	if err := apiserver.Scheme.Convert(versioned, c, nil); err != nil {
		panic(err)
	}
	c.UID = types.UID("uid-" + c.Name)
	c.ResourceVersion = fmt.Sprint(100 + i)
	c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "hcp.aro.azure.com/v1alpha1", Time: &when, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:azure":{"f:resourceGroup":{},"f:subscriptionID":{}},"f:location":{},"f:platform":{"f:managedResourceGroup":{},"f:subnetID":{}}}}`)}}}
	for _, condition := range []string{"Placed", "VersionResolved", "AzureIdentitiesValid", "ManagedResourceGroupReady", "DNSReady"} {
		c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: condition, Status: metav1.ConditionTrue,
			Reason: "AzureDisabled", ObservedGeneration: 1, LastTransitionTime: when,
			Message: "hcp-apiserver runs without --azure-config: the service neither checks nor provisions this cluster's Azure resources"})
	}
	return c
}

func encode(t testing.TB, codec kruntime.Codec, obj kruntime.Object) []byte {
	data, err := kruntime.Encode(codec, obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decode(t testing.TB, codec kruntime.Codec, data []byte) *hcp.HCPCluster {
	obj, err := kruntime.Decode(codec, data)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*hcp.HCPCluster)
}

// Two clusters decoded from etcd share their conditions' and managed fields' strings and documents, and read
// exactly as they would decoded without it.
func TestDecodedObjectsShareWhatRepeats(t *testing.T) {
	codec := storageCodec(t)
	interning := intern.Codec(codec)
	first, second := storedCluster(1), storedCluster(2)
	a, b := decode(t, interning, encode(t, codec, first)), decode(t, interning, encode(t, codec, second))

	for _, decoded := range []struct{ interned, plain *hcp.HCPCluster }{
		{a, decode(t, codec, encode(t, codec, first))}, {b, decode(t, codec, encode(t, codec, second))}} {
		if !apiequality.Semantic.DeepEqual(decoded.interned, decoded.plain) {
			t.Errorf("%s decodes differently interned:\n%#v\nagainst\n%#v", decoded.plain.Name, decoded.interned, decoded.plain)
		}
	}
	if got := len(a.Status.Conditions); got != 5 || cap(a.Status.Conditions) != got {
		t.Errorf("conditions: %d, with room for %d; want 5 and no more room", got, cap(a.Status.Conditions))
	}
	for i := range a.Status.Conditions {
		ca, cb := a.Status.Conditions[i], b.Status.Conditions[i]
		for _, s := range []struct{ field, a, b string }{{"type", ca.Type, cb.Type}, {"reason", ca.Reason, cb.Reason},
			{"message", ca.Message, cb.Message}, {"status", string(ca.Status), string(cb.Status)}} {
			if unsafe.StringData(s.a) != unsafe.StringData(s.b) {
				t.Errorf("condition %d's %s %q is held twice", i, s.field, s.a)
			}
		}
	}
	ma, mb := a.ManagedFields[0], b.ManagedFields[0]
	if unsafe.StringData(ma.Manager) != unsafe.StringData(mb.Manager) || unsafe.StringData(ma.APIVersion) != unsafe.StringData(mb.APIVersion) {
		t.Errorf("the managed fields' manager and apiVersion are held twice")
	}
	if &ma.FieldsV1.Raw[0] != &mb.FieldsV1.Raw[0] {
		t.Errorf("the managed fields' document is held twice")
	}
	if cap(ma.FieldsV1.Raw) != len(ma.FieldsV1.Raw) {
		t.Errorf("the shared document has room past its end (%d of %d): an append would write into every object's", len(ma.FieldsV1.Raw), cap(ma.FieldsV1.Raw))
	}
	// A name is each object's own.
	if a.Name == b.Name {
		t.Fatalf("the two clusters have one name")
	}
}

// A kind without conditions, or an object without managed fields, decodes as it is.
func TestObjectsWithNothingToShare(t *testing.T) {
	codec := storageCodec(t)
	version := &hcp.OpenShiftVersion{ObjectMeta: metav1.ObjectMeta{Name: "stable-4.20.8", UID: "uid", ResourceVersion: "7"}}
	obj, err := kruntime.Decode(intern.Codec(codec), encode(t, codec, version))
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(obj, version) {
		t.Errorf("decoded %#v, want %#v", obj, version)
	}
}

// What the watch cache holds of a cluster: the heap that 2,000 decoded clusters keep, with and without
// interning, as the heap profile counts it with every allocation sampled. A server holding 100,000
// clusters holds them in a quarter less memory at least.
func TestInterningHoldsClustersInLessMemory(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	codec := storageCodec(t)
	const n = 2000
	data := make([][]byte, n)
	for i := range data {
		data[i] = encode(t, codec, storedCluster(i))
	}
	interning := intern.Codec(codec)
	decodeAll := func(codec kruntime.Codec) []kruntime.Object {
		objects := make([]kruntime.Object, n)
		for i := range objects {
			objects[i] = decode(t, codec, data[i])
		}
		return objects
	}
	decode(t, codec, data[0]) // what the first decodes set up once is not what an object holds
	decode(t, interning, data[0])
	// Both sets are kept to the end: nothing is freed between the three counts.
	before := inUse(t)
	plainObjects := decodeAll(codec)
	between := inUse(t)
	internedObjects := decodeAll(interning)
	after := inUse(t)
	runtime.KeepAlive(plainObjects)
	runtime.KeepAlive(internedObjects)

	plain, interned := (between-before)/n, (after-between)/n
	t.Logf("a decoded cluster holds %d bytes, %d interned", plain, interned)
	if interned*4 > plain*3 {
		t.Errorf("a decoded cluster holds %d bytes interned, against %d without: want at most three quarters", interned, plain)
	}
}

// inUse is the bytes that decode allocated and that are still in use once what is garbage is collected, as
// the heap profile counts them. (The profile is that of the last collection but one.)
func inUse(t *testing.T) int64 {
	runtime.GC()
	runtime.GC()
	var records []runtime.MemProfileRecord
	for n, ok := runtime.MemProfile(nil, true); ; {
		records = make([]runtime.MemProfileRecord, n+100)
		if n, ok = runtime.MemProfile(records, true); ok {
			records = records[:n]
			break
		}
	}
	var sum int64
	for _, r := range records {
		frames := runtime.CallersFrames(r.Stack())
		for {
			frame, more := frames.Next()
			if strings.HasSuffix(frame.Function, "intern_test.decode") {
				sum += r.InUseBytes()
				break
			}
			if !more {
				break
			}
		}
	}
	return sum
}
