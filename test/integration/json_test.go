package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// Structs a fresh object leaves unset are left out of its JSON, not shown as {}: kubectl get -o yaml
// shows what is there.
func TestUnsetStructsAreLeftOutOfJSON(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	createCluster(t, ns, "dev")
	pools := client().HcpV1alpha1().NodePools(ns)
	if _, err := pools.Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mc := ns + "-mc"
	if _, err := client().HcpV1alpha1().ManagementClusters().Create(ctx, fixtures.ManagementCluster(mc), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client().HcpV1alpha1().ManagementClusters().Delete(context.Background(), mc, metav1.DeleteOptions{})
	})

	for _, path := range []string{
		"/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + ns + "/hcpclusters/dev",
		"/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + ns + "/nodepools/dev.workers",
		"/apis/hcp.aro.azure.com/v1alpha1/managementclusters/" + mc,
	} {
		raw, err := client().HcpV1alpha1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		// Managed fields are sets of field paths, written as empty objects.
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		delete(obj["metadata"].(map[string]any), "managedFields")
		if empty := emptyObjects(obj, ""); len(empty) > 0 {
			t.Errorf("GET %s shows empty objects at %s:\n%s", path, strings.Join(empty, ", "), raw)
		}
	}
}

// emptyObjects returns the paths of the empty objects in v.
func emptyObjects(v any, path string) []string {
	var empty []string
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 && path != "" {
			return []string{path}
		}
		for k, child := range v {
			empty = append(empty, emptyObjects(child, path+"."+k)...)
		}
	case []any:
		for _, child := range v {
			empty = append(empty, emptyObjects(child, path+"[]")...)
		}
	}
	return empty
}
