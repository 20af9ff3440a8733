package storagecompression_test

import (
	"bytes"
	"context"
	stdaes "crypto/aes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/aes"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/storagecompression"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

type key string

func (k key) AuthenticatedData() []byte { return []byte(k) }

const clusterKey = key("/registry/hcp.aro.azure.com/hcpclusters/default/dev")

// storedCluster is a cluster as the server stores it without compression: protobuf.
func storedCluster(t *testing.T) []byte {
	info, ok := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	c := fixtures.HCPCluster("default", "dev")
	data, err := runtime.Encode(apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion), c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func write(t *testing.T, tr value.Transformer, data []byte) []byte {
	t.Helper()
	stored, err := tr.TransformToStorage(context.Background(), data, clusterKey)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

func read(t *testing.T, tr value.Transformer, stored []byte) []byte {
	t.Helper()
	data, _, err := tr.TransformFromStorage(context.Background(), stored, clusterKey)
	if err != nil {
		t.Fatalf("reading %.20q: %v", stored, err)
	}
	return data
}

// A cluster is stored as a zstd frame less than half its size, and reads back as it was written.
func TestClustersAreStoredCompressed(t *testing.T) {
	cluster := storedCluster(t)
	compressing := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), true)
	stored := write(t, compressing, cluster)
	if !bytes.HasPrefix(stored, zstdMagic) {
		t.Fatalf("stored as %.20q, want a zstd frame", stored)
	}
	if len(stored)*2 > len(cluster) {
		t.Errorf("a cluster of %d bytes is stored in %d, want at most half", len(cluster), len(stored))
	}
	if got := read(t, compressing, stored); !bytes.Equal(got, cluster) {
		t.Errorf("the cluster reads back as %.40q, want %.40q", got, cluster)
	}
	// A server with compression off still reads it, and writes what it writes as it is.
	plain := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), false)
	if got := read(t, plain, stored); !bytes.Equal(got, cluster) {
		t.Errorf("with compression off the compressed cluster reads as %.40q", got)
	}
	if got := write(t, plain, cluster); !bytes.Equal(got, cluster) {
		t.Errorf("with compression off a cluster is stored as %.40q, want its protobuf", got)
	}
}

// Values written before compression, and values too small to gain from it, read as they are.
func TestUncompressedValuesRead(t *testing.T) {
	compressing := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), true)
	for _, stored := range [][]byte{storedCluster(t), []byte(`{"kind":"HCPCluster","apiVersion":"hcp.aro.azure.com/v1alpha1"}`)} {
		if got := read(t, compressing, stored); !bytes.Equal(got, stored) {
			t.Errorf("%.20q reads as %.20q", stored, got)
		}
	}
	small := []byte("k8s\x00\x0a\x05small")
	if got := write(t, compressing, small); !bytes.Equal(got, small) {
		t.Errorf("a value of %d bytes is stored as %q, want as it is", len(small), got)
	}
}

// A compressed value that is corrupt is an error naming zstd, not an object.
func TestCorruptValueIsAnError(t *testing.T) {
	compressing := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), true)
	stored := write(t, compressing, storedCluster(t))
	corrupt := append(bytes.Clone(stored[:len(stored)/2]), 0xff, 0xfe)
	if _, _, err := compressing.TransformFromStorage(context.Background(), corrupt, clusterKey); err == nil || !strings.Contains(err.Error(), "zstd") {
		t.Errorf("a truncated frame read with error %v, want one about zstd", err)
	}
}

type getter struct{ transformer value.Transformer }

func (g getter) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{StorageConfig: &storagebackend.ConfigForResource{Config: storagebackend.Config{Transformer: g.transformer}}}, nil
}

// Resources without encryption are compressed; an encrypted resource is written uncompressed (encrypted
// only), and what it stored compressed before it was encrypted still reads.
func TestEncryptedResourcesAreNotCompressed(t *testing.T) {
	cluster := storedCluster(t)
	resource := schema.GroupResource{Group: "hcp.aro.azure.com", Resource: "hcpclusters"}
	for _, unencrypted := range []value.Transformer{nil, identity.NewEncryptCheckTransformer()} {
		opts, err := storagecompression.RESTOptionsGetter(getter{unencrypted}, true).GetRESTOptions(resource, nil)
		if err != nil {
			t.Fatal(err)
		}
		if stored := write(t, opts.StorageConfig.Transformer, cluster); !bytes.HasPrefix(stored, zstdMagic) {
			t.Errorf("with the transformer %T the cluster is stored as %.20q, want compressed", unencrypted, stored)
		}
	}

	block, err := aesCipher()
	if err != nil {
		t.Fatal(err)
	}
	encrypting := value.NewPrefixTransformers(nil, value.PrefixTransformer{Prefix: []byte("k8s:enc:aesgcm:v1:key1:"), Transformer: block})
	opts, err := storagecompression.RESTOptionsGetter(getter{encrypting}, true).GetRESTOptions(resource, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := write(t, opts.StorageConfig.Transformer, cluster)
	decrypted := read(t, encrypting, stored)
	if !bytes.Equal(decrypted, cluster) {
		t.Errorf("an encrypted cluster decrypts to %.20q, want its protobuf uncompressed", decrypted)
	}
	compressedThenEncrypted := write(t, encrypting, write(t, storagecompression.Transformer(identity.NewEncryptCheckTransformer(), true), cluster))
	if got := read(t, opts.StorageConfig.Transformer, compressedThenEncrypted); !bytes.Equal(got, cluster) {
		t.Errorf("a compressed cluster encrypted since reads as %.20q", got)
	}
}

func aesCipher() (value.Transformer, error) {
	block, err := stdaes.NewCipher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		return nil, err
	}
	return aes.NewGCMTransformer(block)
}
