package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/aro-hcp/hcp-apiserver/pkg/storagecompression"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// protobufMagic begins every value kube's protobuf serializer writes; s2Magic and zstdMagic a value compressed
// with S2 against a built-in dictionary and a zstd frame.
var protobufMagic, s2Magic, zstdMagic = []byte("k8s\x00"), []byte("hcs2"), []byte{0x28, 0xb5, 0x2f, 0xfd}

// decompressed is value as the server reads it, decompressed if it is compressed.
func decompressed(t *testing.T, value []byte) []byte {
	t.Helper()
	plain, _, err := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.None).
		TransformFromStorage(context.Background(), value, nil)
	if err != nil {
		t.Fatalf("the value stored as %.8q does not decompress: %v", value, err)
	}
	return plain
}

// TestObjectsAreStoredAsProtobufAndJSONStillReads: --storage-media-type decides how objects are written
// (protobuf by default) and --storage-compression how they are compressed (with S2 by default), and
// objects a server wrote as JSON, uncompressed, or with zstd still read after the switch, and are written as
// protobuf compressed with S2 on their next write.
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

	// Servers of before: one writing JSON, uncompressed, one writing protobuf compressed with zstd.
	for _, before := range []struct {
		name  string
		args  []string
		check func(value []byte) bool
	}{
		{"old", []string{"--storage-media-type=application/json", "--storage-compression=none"}, func(v []byte) bool { return bytes.HasPrefix(v, []byte(`{"kind":"HCPCluster"`)) }},
		{"zstd", []string{"--storage-compression=zstd"}, func(v []byte) bool {
			return bytes.HasPrefix(v, zstdMagic) && bytes.HasPrefix(decompressed(t, v), protobufMagic)
		}},
	} {
		server, err := framework.StartInProcessServer(ctx, t.TempDir(), framework.InProcessOptions{Args: append([]string{servers}, before.args...)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := server.Client.HcpV1alpha1().HCPClusters("default").Create(ctx, fixtures.HCPCluster("default", before.name), metav1.CreateOptions{}); err != nil {
			server.Stop()
			t.Fatal(err)
		}
		if err := server.Stop(); err != nil {
			t.Fatal(err)
		}
		if value := stored(before.name); !before.check(value) {
			t.Fatalf("with %v the cluster is stored as %.40q", before.args, value)
		}
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
	if value := stored("new"); !bytes.HasPrefix(value, s2Magic) || !bytes.HasPrefix(decompressed(t, value), protobufMagic) {
		t.Errorf("by default a new cluster is stored as %.40q, want protobuf compressed with S2", value)
	} else {
		t.Logf("a new cluster: %d bytes of protobuf stored in %d", len(decompressed(t, value)), len(value))
	}
	for _, name := range []string{"old", "zstd"} {
		if c, err := clusters.Get(ctx, name, metav1.GetOptions{}); err != nil || c.Spec.Platform.SubnetID == "" {
			t.Fatalf("the cluster %s stored before does not read: %v %+v", name, err, c)
		}
	}
	if _, err := clusters.Patch(ctx, "old", types.MergePatchType, []byte(`{"metadata":{"labels":{"rewritten":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if value := stored("old"); !bytes.HasPrefix(value, s2Magic) || !bytes.HasPrefix(decompressed(t, value), protobufMagic) {
		t.Errorf("after its next write the cluster stored as JSON is stored as %.40q, want protobuf compressed with S2", value)
	}
}
