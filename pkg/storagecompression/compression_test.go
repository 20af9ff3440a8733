package storagecompression_test

import (
	"bytes"
	"context"
	stdaes "crypto/aes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
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

var zstdMagic, s2Magic = []byte{0x28, 0xb5, 0x2f, 0xfd}, []byte("hcs2")

type key string

func (k key) AuthenticatedData() []byte { return []byte(k) }

const clusterKey = key("/registry/hcp.aro.azure.com/hcpclusters/default/dev")

// storedCluster is a cluster as the server stores it without compression: protobuf.
func storedCluster(t testing.TB) []byte {
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

func write(t testing.TB, tr value.Transformer, data []byte) []byte {
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

// A cluster is stored compressed as each method says, in at most its share of the protobuf, and reads back
// as it was written, whatever the reading server writes.
func TestClustersAreStoredCompressed(t *testing.T) {
	cluster := storedCluster(t)
	for _, c := range []struct {
		method storagecompression.Method
		magic  []byte
		// share is the most a stored cluster may take of its protobuf: zstd halves it; S2 against the
		// dictionary, which holds what clusters share, keeps a third.
		share float64
	}{
		{storagecompression.S2, s2Magic, 1.0 / 3},
		{storagecompression.Zstd, zstdMagic, 1.0 / 2},
	} {
		compressing := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), c.method)
		stored := write(t, compressing, cluster)
		if !bytes.HasPrefix(stored, c.magic) {
			t.Fatalf("%s: stored as %.20q, want it to begin %q", c.method, stored, c.magic)
		}
		if float64(len(stored)) > c.share*float64(len(cluster)) {
			t.Errorf("%s: a cluster of %d bytes is stored in %d, want at most %.2f of it", c.method, len(cluster), len(stored), c.share)
		}
		t.Logf("%s: a cluster of %d bytes of protobuf is stored in %d", c.method, len(cluster), len(stored))
		for _, reader := range storagecompression.Methods {
			if got := read(t, storagecompression.Transformer(identity.NewEncryptCheckTransformer(), reader), stored); !bytes.Equal(got, cluster) {
				t.Errorf("%s: a server writing %s reads the cluster back as %.40q, want %.40q", c.method, reader, got, cluster)
			}
		}
	}
	// With compression off a cluster is written as it is.
	plain := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.None)
	if got := write(t, plain, cluster); !bytes.Equal(got, cluster) {
		t.Errorf("with compression off a cluster is stored as %.40q, want its protobuf", got)
	}
}

// Values written before compression, and values too small to gain from it, read as they are.
func TestUncompressedValuesRead(t *testing.T) {
	for _, method := range []storagecompression.Method{storagecompression.S2, storagecompression.Zstd} {
		compressing := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), method)
		for _, stored := range [][]byte{storedCluster(t), []byte(`{"kind":"HCPCluster","apiVersion":"hcp.aro.azure.com/v1alpha1"}`)} {
			if got := read(t, compressing, stored); !bytes.Equal(got, stored) {
				t.Errorf("%s: %.20q reads as %.20q", method, stored, got)
			}
		}
		small := []byte("k8s\x00\x0a\x05small")
		if got := write(t, compressing, small); !bytes.Equal(got, small) {
			t.Errorf("%s: a value of %d bytes is stored as %q, want as it is", method, len(small), got)
		}
	}
}

// A compressed value that is corrupt, or that names a dictionary the server does not have, is an error
// that says so, not an object.
func TestCorruptValueIsAnError(t *testing.T) {
	zstdStored := write(t, storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.Zstd), storedCluster(t))
	s2Stored := write(t, storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.S2), storedCluster(t))
	flipped := bytes.Clone(s2Stored)
	flipped[len(flipped)-3] ^= 0x10 // a literal byte of the value: S2 decodes it, the checksum does not match
	otherDictionary := bytes.Clone(s2Stored)
	otherDictionary[4] = 200
	for _, c := range []struct {
		name, value, want string
	}{
		{"a truncated zstd frame", string(append(bytes.Clone(zstdStored[:len(zstdStored)/2]), 0xff, 0xfe)), "zstd"},
		{"a truncated S2 block", string(s2Stored[:len(s2Stored)/2]), "S2"},
		{"an S2 value with a byte changed", string(flipped), "checksum"},
		{"a header alone", string(s2Stored[:6]), "shorter than its header"},
		{"a block that claims 100 MiB", "hcs2\x01\x00\x00\x00\x00\x80\x80\x80\x32", "claims to hold 104857600 bytes"},
		{"a block whose length is no number", "hcs2\x01\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "corrupt"},
		{"a value of a newer server's dictionary", string(otherDictionary), "dictionary 200"},
	} {
		_, _, err := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.S2).
			TransformFromStorage(context.Background(), []byte(c.value), clusterKey)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s read with error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// A dictionary, once shipped, never changes: values written with it are read with it for as long as they
// are stored. A new dictionary gets a new number (hack/storage-dictionary) and its checksum here.
func TestDictionariesNeverChange(t *testing.T) {
	want := map[string]string{
		"1.s2dict": "c0745b2b07bfd5dd17e000552c6fec387b429dc79ab50d2d902ae19da6c47b7f",
	}
	files, err := os.ReadDir("dictionaries")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		content, err := os.ReadFile(filepath.Join("dictionaries", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := fmt.Sprintf("%x", sha256.Sum256(content))
		if w, ok := want[f.Name()]; !ok {
			t.Errorf("dictionaries/%s (sha256 %s) is new: add its checksum to this test", f.Name(), sum)
		} else if sum != w {
			t.Errorf("dictionaries/%s changed: sha256 %s, shipped as %s; values written with it would no longer read. Restore it, and write a new dictionary under a new number instead", f.Name(), sum, w)
		}
		delete(want, f.Name())
	}
	for name := range want {
		t.Errorf("dictionaries/%s is gone: values written with it would no longer read", name)
	}
}

// go test -run XXX -bench . -benchmem ./pkg/storagecompression: a cluster written and read with each method.
func BenchmarkCluster(b *testing.B) {
	cluster := storedCluster(b)
	for _, method := range []storagecompression.Method{storagecompression.S2, storagecompression.Zstd} {
		tr := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), method)
		stored, _ := tr.TransformToStorage(context.Background(), cluster, clusterKey)
		b.Run(string(method)+"/write", func(b *testing.B) {
			for b.Loop() {
				_, _ = tr.TransformToStorage(context.Background(), cluster, clusterKey)
			}
			b.ReportMetric(float64(len(stored)), "stored-bytes")
		})
		b.Run(string(method)+"/read", func(b *testing.B) {
			for b.Loop() {
				_, _, _ = tr.TransformFromStorage(context.Background(), stored, clusterKey)
			}
		})
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
		opts, err := storagecompression.RESTOptionsGetter(getter{unencrypted}, storagecompression.S2).GetRESTOptions(resource, nil)
		if err != nil {
			t.Fatal(err)
		}
		if stored := write(t, opts.StorageConfig.Transformer, cluster); !bytes.HasPrefix(stored, s2Magic) {
			t.Errorf("with the transformer %T the cluster is stored as %.20q, want compressed", unencrypted, stored)
		}
	}

	block, err := aesCipher()
	if err != nil {
		t.Fatal(err)
	}
	encrypting := value.NewPrefixTransformers(nil, value.PrefixTransformer{Prefix: []byte("k8s:enc:aesgcm:v1:key1:"), Transformer: block})
	opts, err := storagecompression.RESTOptionsGetter(getter{encrypting}, storagecompression.S2).GetRESTOptions(resource, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := write(t, opts.StorageConfig.Transformer, cluster)
	decrypted := read(t, encrypting, stored)
	if !bytes.Equal(decrypted, cluster) {
		t.Errorf("an encrypted cluster decrypts to %.20q, want its protobuf uncompressed", decrypted)
	}
	compressedThenEncrypted := write(t, encrypting, write(t, storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.S2), cluster))
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

// FuzzStoredValues: whatever etcd holds, reading it never panics; what the server writes with S2 reads
// back as it was.
func FuzzStoredValues(f *testing.F) {
	reading := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.S2)
	cluster := storedCluster(f)
	f.Add(cluster)
	f.Add(write(f, reading, cluster))
	f.Add(append([]byte("hcs2\x01\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = reading.TransformFromStorage(context.Background(), data, clusterKey)
		stored := write(t, reading, data)
		if got := read(t, reading, stored); !bytes.Equal(got, data) {
			t.Fatalf("%q was stored as %q and reads back as %q", data, stored, got)
		}
	})
}
