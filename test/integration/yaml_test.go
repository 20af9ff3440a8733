package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// An object is served as YAML whatever characters its strings hold, YAML's forbidden ones included,
// and the YAML says the same as the JSON.
func TestObjectWithControlCharactersIsServedAsYAML(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	note := "DEL\x7f C1\u0085\u009f nonchar\uffff"
	cluster := fixtures.HCPCluster(ns, "dev")
	cluster.Annotations = map[string]string{"note": note}
	if _, err := client().HcpV1alpha1().HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + ns + "/hcpclusters/dev",
		"/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + ns + "/hcpclusters",
	} {
		raw, err := client().HcpV1alpha1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/yaml").DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s as YAML: %v", path, err)
		}
		var got v1alpha1.HCPClusterList
		var one v1alpha1.HCPCluster
		if err := yaml.Unmarshal(raw, &one); err != nil {
			t.Fatalf("GET %s: the YAML does not read: %v\n%s", path, err, raw)
		}
		if one.Kind == "HCPClusterList" {
			if err := yaml.Unmarshal(raw, &got); err != nil || len(got.Items) != 1 {
				t.Fatalf("GET %s: %v, %d items\n%s", path, err, len(got.Items), raw)
			}
			one = got.Items[0]
		}
		if one.Annotations["note"] != note {
			t.Errorf("GET %s as YAML says the annotation is %q, want %q", path, one.Annotations["note"], note)
		}
	}
}
