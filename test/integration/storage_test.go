package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// protobufMagic begins every value kube's protobuf serializer writes; zstdMagic every zstd frame.
var protobufMagic, zstdMagic = []byte("k8s\x00"), []byte{0x28, 0xb5, 0x2f, 0xfd}

// decompressed is value, decompressed if it is a zstd frame.
func decompressed(t *testing.T, value []byte) []byte {
	t.Helper()
	if !bytes.HasPrefix(value, zstdMagic) {
		return value
	}
	decoder, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer decoder.Close()
	plain, err := decoder.DecodeAll(value, nil)
	if err != nil {
		t.Fatalf("the value stored as zstd does not decompress: %v", err)
	}
	return plain
}

// TestObjectsAreStoredAsProtobufAndJSONStillReads: --storage-media-type decides how objects are written
// (protobuf by default) and --storage-compression whether they are compressed (with zstd by default), and
// objects a server wrote as JSON, uncompressed, still read after the switch, and are written as compressed
// protobuf on their next write.
func TestObjectsAreStoredAsProtobufAndJSONStillReads(t *testing.T) {
	ctx := context.Background()
	etcd := framework.StartEtcd(t)
	servers := "--etcd-servers=" + strings.Join(etcd.ClientURLs, ",")
	raw, err := clientv3.New(clientv3.Config{Endpoints: etcd.ClientURLs})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	stored := func(name string) []byte {
		t.Helper()
		resp, err := raw.Get(ctx, "/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			if strings.HasSuffix(string(kv.Key), "/hcpclusters/default/"+name) {
				return kv.Value
			}
		}
		t.Fatalf("no HCPCluster %s in etcd", name)
		return nil
	}

	first, err := framework.StartInProcessServer(ctx, t.TempDir(), framework.InProcessOptions{Args: []string{servers, "--storage-media-type=application/json", "--storage-compression=none"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Client.HcpV1alpha1().HCPClusters("default").Create(ctx, fixtures.HCPCluster("default", "old"), metav1.CreateOptions{}); err != nil {
		first.Stop()
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	if value := stored("old"); !bytes.HasPrefix(value, []byte(`{"kind":"HCPCluster"`)) {
		t.Fatalf("with --storage-media-type=application/json the cluster is stored as %.40q, want JSON", value)
	}

	second, err := framework.StartInProcessServer(ctx, t.TempDir(), framework.InProcessOptions{Args: []string{servers}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Stop() })
	clusters := second.Client.HcpV1alpha1().HCPClusters("default")
	if _, err := clusters.Create(ctx, fixtures.HCPCluster("default", "new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if value := stored("new"); !bytes.HasPrefix(value, zstdMagic) || !bytes.HasPrefix(decompressed(t, value), protobufMagic) {
		t.Errorf("by default a new cluster is stored as %.40q, want protobuf compressed with zstd", value)
	}
	old, err := clusters.Get(ctx, "old", metav1.GetOptions{})
	if err != nil || old.Spec.Platform.SubnetID == "" {
		t.Fatalf("the cluster stored as JSON does not read: %v %+v", err, old)
	}
	if _, err := clusters.Patch(ctx, "old", types.MergePatchType, []byte(`{"metadata":{"labels":{"rewritten":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if value := stored("old"); !bytes.HasPrefix(value, zstdMagic) || !bytes.HasPrefix(decompressed(t, value), protobufMagic) {
		t.Errorf("after its next write the cluster stored as JSON is stored as %.40q, want protobuf compressed with zstd", value)
	}
}
