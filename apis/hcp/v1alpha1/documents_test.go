package v1alpha1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

func TestNodePoolDocumentsAreCheckedInConversion(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := hcp.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	valid := []byte(`{"apiVersion":"tuned.openshift.io/v1","kind":"Tuned","metadata":{"name":"t"}}`)
	nested := func(depth int) []byte {
		return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
	}
	for _, tc := range []struct {
		name   string
		config []runtime.RawExtension
		tuning []runtime.RawExtension
		// want is every error, in order; none when empty.
		want []string
	}{
		{name: "valid documents", config: []runtime.RawExtension{{Raw: valid}}, tuning: []runtime.RawExtension{{Raw: valid}}},
		{name: "built in Go", config: []runtime.RawExtension{{Object: &hcp.NodePool{}}}},
		{name: "null, for validation to refuse", config: []runtime.RawExtension{{}}},
		{name: "a JSON array, for validation to refuse", config: []runtime.RawExtension{{Raw: []byte(`[1]`)}}},
		// Size and depth are validation's: a pool stored under other limits must still read.
		{name: "deeper than validation allows", config: []runtime.RawExtension{{Raw: nested(5000)}}},
		{name: "larger than validation allows", config: []runtime.RawExtension{{Raw: []byte(`"` + strings.Repeat("x", 1<<20) + `"`)}}},
		{name: "not JSON", config: []runtime.RawExtension{{Raw: valid}, {Raw: []byte(`{"kind":`)}},
			want: []string{"spec.config[1]: Invalid value: must be a JSON object: unexpected end of JSON input"}},
		{name: "empty bytes", tuning: []runtime.RawExtension{{Raw: []byte{}}},
			want: []string{"spec.tuningConfig[0]: Invalid value: must be a JSON object: unexpected end of JSON input"}},
		{name: "binary", config: []runtime.RawExtension{{Raw: []byte("\x00k8s")}},
			want: []string{"spec.config[0]: Invalid value: must be a JSON object: invalid character"}},
		{name: "not UTF-8", config: []runtime.RawExtension{{Raw: []byte("{\"me\xffadata\":{}}")}},
			want: []string{"spec.config[0]: Invalid value: must be a JSON object: not valid UTF-8 at byte 4"}},
		{name: "both lists", config: []runtime.RawExtension{{Raw: []byte(`{`)}}, tuning: []runtime.RawExtension{{Raw: valid}, {Raw: []byte(`}`)}},
			want: []string{"spec.config[0]: ", "spec.tuningConfig[1]: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &NodePool{Spec: NodePoolSpec{Config: tc.config, TuningConfig: tc.tuning}}
			err := scheme.Convert(in, &hcp.NodePool{}, nil)
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("conversion failed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("conversion passed, want %q", tc.want)
			}
			rest := err.Error()
			for _, want := range tc.want {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("error %q does not say %q after what came before", err, want)
				}
				rest = rest[i+len(want):]
			}
		})
	}
}
