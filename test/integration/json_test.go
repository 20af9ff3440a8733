package integration

import (
	"context"
	"encoding/json"
	"reflect"
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

// A JSON list shows every object as it is now, though the server keeps each listed object's JSON between
// lists: after a change the list shows the new version, and it says what the uncached pretty list says.
func TestJSONListsShowEachObjectAsItIsNow(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	for _, name := range []string{"a", "b", "c"} {
		createCluster(t, ns, name)
	}
	path := "/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + ns + "/hcpclusters"
	list := func(query string) map[string]any {
		t.Helper()
		raw, err := client().HcpV1alpha1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").
			Param("pretty", query).DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	labels := func(l map[string]any) map[string]any {
		t.Helper()
		got := map[string]any{}
		for _, item := range l["items"].([]any) {
			meta := item.(map[string]any)["metadata"].(map[string]any)
			got[meta["name"].(string)] = meta["labels"]
		}
		return got
	}

	list("false") // the objects' JSON is kept
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	b, err := clusters.Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Labels = map[string]string{"tier": "gold"}
	if _, err := clusters.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cached := list("false")
	if got := labels(cached)["b"]; !reflect.DeepEqual(got, map[string]any{"tier": "gold"}) {
		t.Fatalf("after b was labelled, the JSON list shows its labels as %v", got)
	}
	if fresh := list("true"); !reflect.DeepEqual(cached["items"], fresh["items"]) {
		t.Fatalf("the JSON list says\n%v\nthe pretty list, encoded afresh, says\n%v", cached["items"], fresh["items"])
	}
}
