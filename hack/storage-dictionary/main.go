// Command storage-dictionary writes a new dictionary for pkg/storagecompression: the protobuf of one
// object of each kind the server stores, as the server stores it (defaults, the status a create gives it,
// managed fields), the kinds stored most often last, where S2 reaches them with the shortest offsets.
//
// A dictionary is written once, under a number no other has had, and never changed: values stored with
// it are read with it for as long as they exist. The objects here use names, a subscription and
// resource groups of their own, not the test fixtures', so that what the dictionary saves is what every
// object shares (kinds, field tags, ARM ID stems, conditions, managed fields), not a benchmark's values.
//
//	go run ./hack/storage-dictionary -number 2
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/s2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/armoperation"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/hcpcluster"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/nodepool"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const (
	subscription  = "5b6c0e7d-2f4a-4c1e-9a8b-3d2e1f0a9c8b"
	resourceGroup = "example-resources"
	namespace     = "sub-5b6c0e7d-example-resources"
	location      = "westeurope"
)

func main() {
	number := flag.Int("number", 0, "the new dictionary's number, 1 to 255, one no dictionary has had")
	dir := flag.String("dir", "pkg/storagecompression/dictionaries", "where dictionaries are")
	flag.Parse()
	if err := write(*number, *dir); err != nil {
		fmt.Fprintf(os.Stderr, "storage-dictionary: %v\n", err)
		os.Exit(1)
	}
}

func write(number int, dir string) error {
	if number < 1 || number > 255 {
		return fmt.Errorf("-number must be 1 to 255")
	}
	file := filepath.Join(dir, fmt.Sprintf("%d.s2dict", number))
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("%s exists: a dictionary never changes once written; take the next number", file)
	}
	var content []byte
	for _, obj := range objects() {
		data, err := stored(obj)
		if err != nil {
			return err
		}
		content = append(content, data...)
	}
	d := s2.MakeDict(content, []byte("k8s\x00"))
	if d == nil || len(content) > s2.MaxDictSize {
		return fmt.Errorf("%d bytes of objects make no dictionary (at most %d)", len(content), s2.MaxDictSize)
	}
	if err := os.WriteFile(file, d.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes\n", file, len(content))
	return nil
}

// objects are one of each kind, the kinds stored most often last.
func objects() []runtime.Object {
	ctx := request.WithNamespace(context.Background(), namespace)
	// A cluster as a server with Azure stores it, and one as a server without (AzureDisabled).
	var clusters []runtime.Object
	for _, azure := range []bool{false, true} {
		cluster := ours(fixtures.HCPCluster(namespace, "example-cluster"))
		cluster.Spec.Azure.ResourceGroup = resourceGroup
		cluster.Spec.Location, cluster.Spec.DNS.BaseDomainPrefix = location, "example"
		settings := &clusterfacts.Settings{Environment: "prod", DNSZone: "hcp.example.net", Azure: azure}
		cluster = created(ctx, cluster, &hcp.HCPCluster{}, hcpcluster.NewStrategy(apiserver.Scheme, versioncatalog.Default(), settings).PrepareForCreate)
		cluster.Status.Conditions = append(cluster.Status.Conditions, conditions(
			v1alpha1.ConditionDelivered, v1alpha1.ConditionAvailable, v1alpha1.ConditionProgressing, v1alpha1.ConditionDegraded)...)
		clusters = append(clusters, cluster)
	}

	pool := ours(fixtures.NodePool(namespace, "example-cluster", "workers"))
	pool = created(ctx, pool, &hcp.NodePool{}, nodepool.NewStrategy(apiserver.Scheme).PrepareForCreate)

	operation := &v1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: string(uuid.NewUUID())},
		Spec: v1alpha1.ARMOperationSpec{
			Request:        v1alpha1.ARMOperationCreate,
			ResourceID:     armID("Microsoft.RedHatOpenShift/hcpOpenShiftClusters", "example-cluster"),
			SubscriptionID: subscription, Location: location, APIVersion: "2026-09-01-preview",
			Target:   v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: namespace, Name: "example-cluster", UID: uuid.NewUUID(), Generation: 1},
			TenantID: string(uuid.NewUUID()), ClientObjectID: string(uuid.NewUUID()),
			ClientRequestID: string(uuid.NewUUID()), CorrelationRequestID: string(uuid.NewUUID()),
		},
	}
	operation = created(ctx, operation, &hcp.ARMOperation{}, armoperation.NewStrategy(apiserver.Scheme).PrepareForCreate)

	subscriptionObject := &v1alpha1.ARMSubscription{
		ObjectMeta: metav1.ObjectMeta{Name: subscription},
		Spec: v1alpha1.ARMSubscriptionSpec{State: v1alpha1.ARMSubscriptionRegistered, RegistrationDate: "2026-01-01T00:00:00Z",
			Properties: &v1alpha1.ARMSubscriptionProperties{TenantID: string(uuid.NewUUID()), QuotaID: "Default_2014-09-01"}},
	}
	managementCluster := ours(fixtures.ManagementCluster("example-management-cluster"))
	managementCluster.Spec.Location = location
	return []runtime.Object{
		managementCluster,
		subscriptionObject,
		ours(fixtures.BreakglassCredential(namespace, "example-cluster", "example-credential")),
		ours(fixtures.ExternalAuth(namespace, "example-cluster", "entra")),
		pool,
		operation,
		clusters[0],
		clusters[1],
	}
}

// ours is a fixture with this command's subscription and resource group instead of the fixtures'.
func ours[T runtime.Object](obj T) T {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	s := strings.ReplaceAll(string(data), fixtures.SubscriptionID, subscription)
	s = strings.ReplaceAll(s, "/resourceGroups/rg/", "/resourceGroups/"+resourceGroup+"/")
	out := obj.DeepCopyObject().(T)
	if err := json.Unmarshal([]byte(s), out); err != nil {
		panic(err)
	}
	apiserver.Scheme.Default(out)
	return out
}

// created is obj as a create stores it: converted to the internal version, prepared by the resource's
// strategy (defaults, the initial status, finalizers), and converted back.
func created[T runtime.Object](ctx context.Context, obj T, in runtime.Object, prepare func(context.Context, runtime.Object)) T {
	if err := apiserver.Scheme.Convert(obj, in, nil); err != nil {
		panic(err)
	}
	prepare(ctx, in)
	out := obj.DeepCopyObject().(T)
	if err := apiserver.Scheme.Convert(in, out, nil); err != nil {
		panic(err)
	}
	return out
}

func conditions(types ...string) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range types {
		out = append(out, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "waiting for the management cluster to report",
			ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	}
	return out
}

func armID(resourceType, name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/%s/%s", subscription, resourceGroup, resourceType, name)
}

// stored is obj as the server writes it to etcd before compression: with a UID, a creation time, the
// managed fields of a create, in protobuf.
func stored(obj runtime.Object) ([]byte, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	accessor.SetUID(uuid.NewUUID())
	accessor.SetCreationTimestamp(metav1.Now())
	accessor.SetGeneration(1)
	fields, err := fieldsOf(obj)
	if err != nil {
		return nil, err
	}
	accessor.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "arm-shim", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: v1alpha1.SchemeGroupVersion.String(), Time: ptr.To(metav1.Now()), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}}})
	info, ok := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, fmt.Errorf("no protobuf serializer")
	}
	return runtime.Encode(apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion), obj)
}

// fieldsOf is the FieldsV1 of a manager that set every field of obj's spec:
// {"f:spec":{".":{},"f:field":{}...}}, as managed fields write them.
func fieldsOf(obj runtime.Object) ([]byte, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	set := map[string]any{}
	if spec, ok := content["spec"].(map[string]any); ok {
		set["f:spec"] = fieldSet(spec)
	}
	return json.Marshal(set)
}

func fieldSet(m map[string]any) map[string]any {
	out := map[string]any{".": map[string]any{}}
	for k, v := range m {
		if inner, ok := v.(map[string]any); ok {
			out["f:"+k] = fieldSet(inner)
		} else {
			out["f:"+k] = map[string]any{}
		}
	}
	return out
}
