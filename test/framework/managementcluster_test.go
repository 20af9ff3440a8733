package framework

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The subtests share one management cluster, since starting one takes seconds; the
// last one stops it.
func TestManagementCluster(t *testing.T) {
	start := time.Now()
	mc := StartManagementCluster(t)
	t.Logf("management cluster ready, HyperShift CRDs established, in %v", time.Since(start).Round(time.Millisecond))
	examples := filepath.Join(SharedDir(t), "hypershift", "examples")

	t.Run("HyperShift CRDs are established", func(t *testing.T) {
		for _, name := range []string{
			"hostedclusters.hypershift.openshift.io",
			"nodepools.hypershift.openshift.io",
			"certificatesigningrequestapprovals.hypershift.openshift.io",
			"certificatesigningrequestapprovals.certificates.hypershift.openshift.io",
			"certificaterevocationrequests.certificates.hypershift.openshift.io",
		} {
			crd, err := mc.Dynamic.Resource(crdResource).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("the CRD %s: %v", name, err)
				continue
			}
			if status, message := crdCondition(crd, "Established"); status != "True" {
				t.Errorf("the CRD %s is not established: %s %s", name, status, message)
			}
		}
		hostedClusters := schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
		if _, err := mc.Dynamic.Resource(hostedClusters).List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("listing HostedClusters: %v", err)
		}
	})

	t.Run("kubectl works with the kubeconfig", func(t *testing.T) {
		kubectl := lookPath(t, "kubectl")
		cmd := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", mc.Kubeconfig, "--cache-dir", t.TempDir(),
			"get", "hostedclusters,nodepools", "--all-namespaces")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("kubectl get hostedclusters,nodepools: %v\n%s", err, out)
		}
	})

	t.Run("ARO HCP examples are accepted", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join(examples, "aro-hcp-*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no aro-hcp-*.yaml in %s", examples)
		}
		for _, file := range files {
			t.Run(filepath.Base(file), func(t *testing.T) {
				// Several examples share names: each gets a namespace of its own.
				ns := "example-" + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "aro-hcp-"), ".yaml")
				for _, obj := range readInNamespace(t, mc, file, ns) {
					created, err := mc.CreateObject(t.Context(), obj)
					if err != nil {
						t.Fatalf("creating %s: %v", describe(obj), err)
					}
					if status, ok := obj.Object["status"].(map[string]any); ok && len(status) > 0 && obj.GetKind() != "Namespace" {
						assertStatusAccepted(t, mc, created, status)
					}
				}
			})
		}
	})

	t.Run("an example with placeholder values is refused by the CRD validation", func(t *testing.T) {
		file := filepath.Join(examples, "hypershift-cli-fixture-azure-minimal-INVALID-placeholders.yaml")
		refused := 0
		for _, obj := range readInNamespace(t, mc, file, "invalid-example") {
			_, err := mc.CreateObject(t.Context(), obj)
			switch obj.GetKind() {
			case "Namespace", "Secret":
				if err != nil {
					t.Errorf("creating %s: %v", describe(obj), err)
				}
				continue
			}
			if err == nil {
				t.Logf("%s was accepted", describe(obj))
				continue
			}
			refused++
			if !apierrors.IsInvalid(err) {
				t.Errorf("creating %s: %v, want 422 Invalid", describe(obj), err)
				continue
			}
			t.Logf("%s refused as expected: %v", describe(obj), err)
			if !strings.Contains(err.Error(), "spec.") || len(causes(err)) == 0 {
				t.Errorf("the refusal of %s names no field: %v", describe(obj), err)
			}
		}
		if refused == 0 {
			t.Error("nothing in the INVALID example was refused")
		}
	})

	t.Run("Create creates a missing namespace", func(t *testing.T) {
		created := mc.Create(t, []byte(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  namespace: made-on-demand
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: second
  namespace: made-on-demand
`))
		if len(created) != 2 || created[1].GetNamespace() != "made-on-demand" || created[1].GetUID() == "" {
			t.Errorf("Create returned %v, want both ConfigMaps as stored in made-on-demand", created)
		}
	})

	t.Run("Stop leaves no process behind", func(t *testing.T) {
		if err := mc.Stop(); err != nil {
			t.Fatal(err)
		}
		assertProcessGone(t, mc.APIServer)
		for _, member := range mc.Etcd.Members {
			assertProcessGone(t, member)
		}
		u, err := url.Parse(mc.URL)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Stop", u.Host)
		}
	})
}

// readInNamespace reads the objects of an example file and moves them into namespace ns:
// a Namespace document is renamed, and namespaced objects are put into it. What a server
// set on an object observed in a cluster is dropped, as a create refuses it.
func readInNamespace(t *testing.T, mc *ManagementCluster, file, ns string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := DecodeObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, obj := range objs {
		obj.SetResourceVersion("")
		obj.SetUID("")
		obj.SetCreationTimestamp(metav1.Time{})
		obj.SetGeneration(0)
		obj.SetManagedFields(nil)
		if obj.GroupVersionKind() == (schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}) {
			obj.SetName(ns)
			continue
		}
		namespaced, err := mc.IsNamespaced(t.Context(), obj.GroupVersionKind())
		if err != nil {
			t.Fatalf("%s: %v", describe(obj), err)
		}
		if namespaced {
			obj.SetNamespace(ns)
		}
	}
	return objs
}

// assertStatusAccepted writes status to a created object through its /status subresource,
// as the HyperShift operator would, and checks that the server stored it as written.
func assertStatusAccepted(t *testing.T, mc *ManagementCluster, created *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	mapping, err := mc.restMapping(t.Context(), created.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = status
	updated, err := mc.Dynamic.Resource(mapping.Resource).Namespace(created.GetNamespace()).
		UpdateStatus(t.Context(), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("writing the status of %s: %v", describe(created), err)
	}
	if !reflect.DeepEqual(updated.Object["status"], status) {
		t.Errorf("the status of %s was stored as\n%v\nwant\n%v", describe(created), updated.Object["status"], status)
	}
}

// causes returns the field-level causes of a status error.
func causes(err error) []metav1.StatusCause {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	return status.Status().Details.Causes
}

// With the controller manager, deletes finish as on a real cluster: a namespace is emptied and gone, and
// an object deleted in the foreground loses its finalizer.
func TestControllerManagerFinishesDeletes(t *testing.T) {
	mc := StartManagementCluster(t)
	mc.StartControllerManager(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "finished-deletes"}}
	if _, err := mc.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"foreground", "inside"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}}
		if _, err := mc.Kube.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	foreground := metav1.DeletePropagationForeground
	if err := mc.Kube.CoreV1().ConfigMaps(ns.Name).Delete(ctx, "foreground", metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
		t.Fatal(err)
	}
	if err := mc.Kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := mc.Kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the deleted namespace %s is still there after a minute: %v", ns.Name, err)
	}
}
