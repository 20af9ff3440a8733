package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// crdEstablishTimeout bounds the wait for the CRDs: the HostedCluster one has a large
// schema with many CEL rules to compile.
const crdEstablishTimeout = 2 * time.Minute

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates every CRD of the YAML files in dir and waits until each is served.
// It creates rather than applies: the HostedCluster CRD (~530 KB) would not fit in the
// last-applied-configuration annotation that client-side apply writes.
func (mc *ManagementCluster) installCRDs(t testing.TB, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no CRDs (*.yaml) in %s", dir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), crdEstablishTimeout)
	defer cancel()
	crds := mc.Dynamic.Resource(crdResource)
	var names []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, obj := range objs {
			if _, err := crds.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating the CRD %s from %s: %v", obj.GetName(), file, err)
			}
			names = append(names, obj.GetName())
		}
	}
	for _, name := range names {
		if err := waitForCRD(ctx, crds, name); err != nil {
			t.Fatalf("the CRD %s: %v", name, err)
		}
	}
}

// waitForCRD watches a CRD until its names are accepted and it is established, that is,
// until its resource is served.
func waitForCRD(ctx context.Context, crds dynamic.ResourceInterface, name string) error {
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			return crds.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return crds.Watch(ctx, opts)
		},
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(e watch.Event) (bool, error) {
		crd, ok := e.Object.(*unstructured.Unstructured)
		if !ok {
			return false, nil
		}
		namesAccepted, reason := crdCondition(crd, "NamesAccepted")
		if namesAccepted == "False" {
			// Another CRD holds one of its names: waiting will not change that.
			return false, fmt.Errorf("names not accepted: %s", reason)
		}
		established, _ := crdCondition(crd, "Established")
		return namesAccepted == "True" && established == "True", nil
	})
	return err
}

// crdCondition returns the status ("True", "False", "Unknown" or "" if absent) and the
// message of a CRD's condition.
func crdCondition(crd *unstructured.Unstructured, conditionType string) (status, message string) {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		c, _ := c.(map[string]any)
		if c["type"] == conditionType {
			status, _ = c["status"].(string)
			message, _ = c["message"].(string)
			return status, message
		}
	}
	return "", ""
}

// InstallCRD creates one CRD and waits until its resource is served.
func (mc *ManagementCluster) InstallCRD(t testing.TB, crd *unstructured.Unstructured) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), crdEstablishTimeout)
	defer cancel()
	crds := mc.Dynamic.Resource(crdResource)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CRD %s: %v", crd.GetName(), err)
	}
	if err := waitForCRD(ctx, crds, crd.GetName()); err != nil {
		t.Fatalf("the CRD %s: %v", crd.GetName(), err)
	}
}
