package v1alpha1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/install"
)

// Every kind survives internal -> v1alpha1 (JSON and protobuf) -> internal, with random values in every
// field, as kube's API groups are tested: a field the conversion, the protobuf tags or the defaults lose
// fails here.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, install.Install, fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, hcpFuzzerFuncs))
}
