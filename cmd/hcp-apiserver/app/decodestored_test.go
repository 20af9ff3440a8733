package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/storagecompression"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func decodeStoredCommand(t *testing.T, stdin []byte, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand(context.Background())
	var out bytes.Buffer
	cmd.SetIn(bytes.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(append([]string{"decode-stored"}, args...))
	err := cmd.Execute()
	return out.String(), err
}

// TestDecodeStoredPrintsWhatEtcdHolds: a value as the server writes it, compressed either way or not, and as
// etcdctl prints it (with a newline after it), comes out as the object's JSON, or decompressed with -o raw.
func TestDecodeStoredPrintsWhatEtcdHolds(t *testing.T) {
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	protobuf, err := runtime.Encode(apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion), fixtures.HCPCluster("ns", "stored"))
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range storagecompression.Methods {
		stored, err := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), method).TransformToStorage(context.Background(), protobuf, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, value := range [][]byte{stored, append(bytes.Clone(stored), '\n')} {
			out, err := decodeStoredCommand(t, value)
			if err != nil {
				t.Fatalf("%s (%d bytes): %v", method, len(value), err)
			}
			var cluster v1alpha1.HCPCluster
			if err := json.Unmarshal([]byte(out), &cluster); err != nil || cluster.Kind != "HCPCluster" || cluster.Name != "stored" ||
				cluster.Spec.Platform.SubnetID != fixtures.HCPCluster("ns", "stored").Spec.Platform.SubnetID {
				t.Errorf("%s (%d bytes) prints %.200q (%v), want the cluster as JSON", method, len(value), out, err)
			}
			if raw, err := decodeStoredCommand(t, value, "-o", "raw"); err != nil || raw != string(protobuf) {
				t.Errorf("%s (%d bytes) with -o raw prints %.40q (%v), want its protobuf", method, len(value), raw, err)
			}
		}
	}
	for _, c := range []struct{ name, value, want string }{
		{"not an object", "hello", "not an object the server stores"},
		{"an encrypted value", "k8s:enc:aescbc:v1:key1:...", "encrypted"},
		{"a corrupt S2 value", "hcs2\x01\x00\x00\x00\x00\xff", "S2"},
	} {
		if _, err := decodeStoredCommand(t, []byte(c.value)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	if _, err := decodeStoredCommand(t, protobuf, "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "json or raw") {
		t.Errorf("-o yaml: error %v, want one naming what -o takes", err)
	}
}
