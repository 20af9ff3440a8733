package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// HyperShiftExamples reads every object of a file in the shared folder's hypershift/examples.
func HyperShiftExamples(t testing.TB, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(SharedDir(t), "hypershift", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := DecodeObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return objs
}

// HyperShiftExample returns the one object of kind in a file of the shared folder's hypershift/examples.
func HyperShiftExample(t testing.TB, file, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, obj := range HyperShiftExamples(t, file) {
		if obj.GetKind() == kind {
			return obj
		}
	}
	t.Fatalf("no %s in %s", kind, file)
	return nil
}

// DecodeObjects reads every document of a multi-document YAML (or JSON) stream as an
// object. Documents with nothing in them, such as what a trailing "---" leaves, are skipped.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		// Through JSON, so that whole numbers become int64 as in objects read from a server.
		jsonDoc, err := utilyaml.ToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if s := string(bytes.TrimSpace(jsonDoc)); s == "null" || s == "{}" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(jsonDoc); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		objs = append(objs, obj)
	}
}

// Create creates every object of a multi-document YAML (see CreateObject) and fails the
// test at the first the server refuses. It returns the objects as the server stored them.
func (mc *ManagementCluster) Create(t testing.TB, yamlDocs []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := DecodeObjects(yamlDocs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	created := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		c, err := mc.CreateObject(ctx, obj)
		if err != nil {
			t.Fatalf("creating %s: %v", describe(obj), err)
		}
		created = append(created, c)
	}
	return created
}

// CreateFromFile is Create with the documents of a file.
func (mc *ManagementCluster) CreateFromFile(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mc.Create(t, data)
}

// CreateObject creates obj as the admin, as `kubectl create` would: a namespaced object
// without a namespace goes into "default". The namespace is created first if it does not
// exist. It returns the object as the server stored it, or the server's error.
func (mc *ManagementCluster) CreateObject(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	mapping, err := mc.restMapping(ctx, obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	resource := mc.Dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return resource.Create(ctx, obj, metav1.CreateOptions{})
	}
	if obj.GetNamespace() == "" {
		obj = obj.DeepCopy()
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	if err := mc.ensureNamespace(ctx, obj.GetNamespace()); err != nil {
		return nil, err
	}
	return resource.Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
}

// IsNamespaced says whether objects of the kind live in a namespace.
func (mc *ManagementCluster) IsNamespaced(ctx context.Context, gvk schema.GroupVersionKind) (bool, error) {
	mapping, err := mc.restMapping(ctx, gvk)
	if err != nil {
		return false, err
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func (mc *ManagementCluster) ensureNamespace(ctx context.Context, name string) error {
	_, err := mc.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := mc.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// restMapping finds the resource that serves gvk. Discovery may lag a moment behind a CRD
// that was just established, so a kind it does not know is looked up afresh for up to 10s.
func (mc *ManagementCluster) restMapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		mapping, err := mc.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		if !meta.IsNoMatchError(err) || time.Now().After(deadline) {
			return mapping, err
		}
		mc.mapper.ResetWithContext(ctx)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// describe names an object in messages, e.g. "HostedCluster clusters/example".
func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}
