package framework

import "testing"

func TestDecodeObjects(t *testing.T) {
	objs, err := DecodeObjects([]byte(`# a comment before the first document
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
data:
  key: value
---
# a document holding only a comment
---
apiVersion: hypershift.openshift.io/v1beta1
kind: NodePool
metadata:
  name: b
  namespace: ns
spec:
  replicas: 2
---
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("got %d objects, want 2 (empty documents skipped)", len(objs))
	}
	if got := describe(objs[0]) + ", " + describe(objs[1]); got != "ConfigMap a, NodePool ns/b" {
		t.Errorf("got %s, want ConfigMap a, NodePool ns/b", got)
	}
	// Whole numbers are int64, as in objects read from a server, not float64.
	if replicas, ok := objs[1].Object["spec"].(map[string]any)["replicas"].(int64); !ok || replicas != 2 {
		t.Errorf("spec.replicas = %#v, want int64(2)", objs[1].Object["spec"].(map[string]any)["replicas"])
	}

	if _, err := DecodeObjects([]byte("metadata:\n  name: no-kind\n")); err == nil {
		t.Error("a document without kind was decoded, want an error")
	}
}
