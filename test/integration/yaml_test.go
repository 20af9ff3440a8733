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
// and reads back the same, alone and in a list.
func TestObjectWithControlCharactersIsServedAsYAML(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	note := "DEL\x7f C1\u0085\u009f nonchar\uffff"
	cluster := fixtures.HCPCluster(ns, "dev")
	cluster.Annotations = map[string]string{"note": note}
	if _, err := client().HcpV1alpha1().HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	getYAML := func(path string, into any) {
		t.Helper()
		raw, err := client().HcpV1alpha1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/yaml").DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s as YAML: %v", path, err)
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			t.Fatalf("GET %s: the YAML does not read: %v\n%s", path, err, raw)
		}
	}
	collection := "/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + ns + "/hcpclusters"
	var got v1alpha1.HCPCluster
	getYAML(collection+"/dev", &got)
	if got.Annotations["note"] != note {
		t.Errorf("GET of the cluster as YAML says the annotation is %q, want %q", got.Annotations["note"], note)
	}
	var list v1alpha1.HCPClusterList
	getYAML(collection, &list)
	if len(list.Items) != 1 || list.Items[0].Annotations["note"] != note {
		t.Errorf("the list as YAML has %d items, want the cluster with annotation %q:\n%+v", len(list.Items), note, list.Items)
	}
}
