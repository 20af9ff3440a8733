package apiserver_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// An object whose strings hold characters YAML may not carry as they are is still served as YAML, and
// reads back the same.
func TestYAMLCarriesEveryString(t *testing.T) {
	value := "del\x7f c1\u0080\u009f nel\u0085 ls\u2028 ps\u2029 nonchar\ufffe\uffff tab\t newline\n bell\a quote\" <html>&"
	cluster := fixtures.HCPCluster("ns", "dev")
	cluster.Annotations = map[string]string{"note": value}
	cluster.Spec.Location = "east\x7fus"

	info, ok := runtime.SerializerInfoForMediaType(apiserver.PrintableYAML(apiserver.Codecs).SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		t.Fatal("no YAML serializer")
	}
	var buf bytes.Buffer
	if err := apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion).Encode(cluster, &buf); err != nil {
		t.Fatalf("encoding as YAML: %v", err)
	}
	if strings.ContainsRune(buf.String(), 0x7f) || strings.ContainsRune(buf.String(), 0xffff) {
		t.Errorf("the YAML holds a character YAML does not allow:\n%s", buf.String())
	}
	obj, _, err := apiserver.Codecs.DecoderToVersion(info.Serializer, hcp.SchemeGroupVersion).Decode(buf.Bytes(), nil, &hcp.HCPCluster{})
	if err != nil {
		t.Fatalf("the YAML does not decode: %v\n%s", err, buf.String())
	}
	got := obj.(*hcp.HCPCluster)
	if got.Annotations["note"] != value || got.Spec.Location != cluster.Spec.Location {
		t.Errorf("read back annotation %q and location %q, want %q and %q", got.Annotations["note"], got.Spec.Location, value, cluster.Spec.Location)
	}
}
