package frontend

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// TestClusterRole runs every kind of request through the shim and checks that the ClusterRole of
// artifacts/arm-shim grants each call the shim made to hcp-apiserver, and grants nothing it did not use.
func TestClusterRole(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "artifacts", "arm-shim", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	if role.Name != "hcp-arm-shim" {
		t.Errorf("ClusterRole %q, want hcp-arm-shim", role.Name)
	}

	c := storedCluster("Succeeded", false)
	f, client := newTestFrontend(t, c, testVersion("stable", "4.20.8", true, &eol420))
	q := "?api-version=" + testAPI
	steps := []struct{ method, target, body string }{
		{"PUT", "/subscriptions/" + testSub + "?api-version=2.0", `{"state":"Registered","registrationDate":"2026-12-01T00:00:00Z","properties":{"tenantId":"` + testTenant + `"}}`},
		{"PUT", "/subscriptions/" + testSub + "?api-version=2.0", `{"state":"Registered","registrationDate":"2026-12-01T00:00:00Z","properties":{"tenantId":"` + testTenant + `"}}`},
		{"GET", "/subscriptions/" + testSub + "?api-version=2.0", ""},
		{"GET", testCluster + q, ""},
		{"PUT", testCluster + q, minimalClusterBody},
		{"PATCH", testCluster + q, `{"tags":{"a":"b"}}`},
		{"GET", "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + q, ""},
		{"GET", testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + q, ""},
		{"PUT", testNodePool + q, minimalNodePoolBody},
		{"PUT", testNodePool + q, minimalNodePoolBody},
		{"GET", testCluster + "/nodePools" + q, ""},
		{"PUT", testAuth + q, minimalExternalAuthBody},
		{"PATCH", testAuth + q, `{"properties":{"issuer":{"ca":null}}}`},
		{"GET", testCluster + "/externalAuths" + q, ""},
		{"GET", "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions" + q, ""},
		{"GET", "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions/stable-4.20.8" + q, ""},
		{"POST", testCluster + "/requestadmincredential?api-version=2026-06-30-preview", ""},
		{"POST", testCluster + "/revokecredentials" + q, ""},
		{"POST", testRGPath + "/providers/Microsoft.RedHatOpenShift/deployments/d/preflight" + q,
			`{"resources":[{"type":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","name":"other","apiVersion":"` + testAPI + `","location":"eastus","properties":{"version":{"id":"4.20"},"platform":{}}}]}`},
	}
	for _, s := range steps {
		if rec := call(f, s.method, s.target, s.body); rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", s.method, s.target, rec.Code, rec.Body)
		}
	}
	// A replace of a busy cluster lists the subscription's operations, to tell ARM's retry from a conflict.
	busy := storedCluster("Updating", false)
	f2, client2 := newTestFrontend(t, busy, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	if rec := call(f2, "PUT", testCluster+q, minimalClusterBody); rec.Code != 200 {
		t.Fatalf("replace of a busy cluster: %d %s", rec.Code, rec.Body)
	}
	// And a result reads its operation and its resource.
	ops, err := client.HcpV1alpha1().ARMOperations().List(t.Context(), metav1.ListOptions{})
	if err != nil || len(ops.Items) == 0 {
		t.Fatalf("operations: %v %v", ops, err)
	}
	for _, op := range ops.Items {
		if op.Spec.Request == hcpv1alpha1.ARMOperationCreate {
			setOperationState(t, client, &op, hcpv1alpha1.ARMOperationSucceeded, nil)
			path := "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationResults/" + op.Name + q
			if rec := call(f, "GET", path, ""); rec.Code != 201 {
				t.Fatalf("result: %d %s", rec.Code, rec.Body)
			}
		}
	}
	for _, target := range []string{testNodePool, testAuth, testCluster} {
		if rec := call(f, "DELETE", target+q, ""); rec.Code != 202 {
			t.Fatalf("DELETE %s: %d %s", target, rec.Code, rec.Body)
		}
	}

	// Behind kube-apiserver, the first create in a resource group makes the group's namespace.
	client3 := newFakeClient(subscription(hcpv1alpha1.ARMSubscriptionRegistered))
	kube := kubefake.NewClientset()
	client3.PrependReactor("create", "hcpclusters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		ns := action.GetNamespace()
		if _, err := kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("namespaces"), "", ns); err != nil {
			return true, nil, apierrors.NewNotFound(corev1.Resource("namespaces"), ns)
		}
		return false, nil, nil
	})
	f3, err := New(Config{Client: client3, Location: "eastus", Namespaces: kube.CoreV1().Namespaces()})
	if err != nil {
		t.Fatal(err)
	}
	if rec := call(f3, "PUT", testCluster+q, minimalClusterBody); rec.Code != 201 {
		t.Fatalf("create in a resource group without a namespace: %d %s", rec.Code, rec.Body)
	}
	if nss, err := kube.Tracker().List(corev1.SchemeGroupVersion.WithResource("namespaces"), corev1.SchemeGroupVersion.WithKind("Namespace"), ""); err != nil {
		t.Fatal(err)
	} else if items := nss.(*corev1.NamespaceList).Items; len(items) != 1 || items[0].Annotations[names.AnnotationResourceGroup] != "Dev-RG" {
		t.Errorf("namespaces made: %+v, want one annotated with the resource group Dev-RG", items)
	}

	type call struct{ verb, resource string }
	// The result of a credential request reads the credential and its kubeconfig (the latter through
	// the REST client, which the fake clientset cannot serve); the test against the real server runs it.
	// arm-shim's informers of subscriptions and versions (cmd/arm-shim/app) list and watch them; without
	// a filled cache, as here, versions are listed and read from the API.
	used := map[call]bool{{"get", "breakglasscredentials"}: true, {"get", "breakglasscredentials/kubeconfig"}: true,
		{"list", "armsubscriptions"}: true, {"watch", "armsubscriptions"}: true,
		{"list", "openshiftversions"}: true, {"watch", "openshiftversions"}: true}
	for _, a := range slices.Concat(client.Actions(), client2.Actions(), client3.Actions(), kube.Actions()) {
		resource := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			resource += "/" + sub
		}
		if a.GetResource().Group != hcpv1alpha1.SchemeGroupVersion.Group && resource != "namespaces" {
			t.Errorf("a call outside the API group: %s %v", a.GetVerb(), a.GetResource())
			continue
		}
		if a.GetVerb() == "update" && strings.HasSuffix(resource, "/status") {
			continue // the test's own status writes
		}
		used[call{a.GetVerb(), resource}] = true
	}
	granted := map[call]bool{}
	for _, rule := range role.Rules {
		namespaces := slices.Equal(rule.APIGroups, []string{""}) && slices.Equal(rule.Resources, []string{"namespaces"})
		if !namespaces && !slices.Equal(rule.APIGroups, []string{hcpv1alpha1.SchemeGroupVersion.Group}) {
			t.Errorf("rule %+v is not for %s only, nor for namespaces only", rule, hcpv1alpha1.SchemeGroupVersion.Group)
		}
		for _, r := range rule.Resources {
			for _, v := range rule.Verbs {
				granted[call{v, r}] = true
			}
		}
	}
	for c := range used {
		if !granted[c] {
			t.Errorf("the shim calls %s %s, which the ClusterRole does not grant", c.verb, c.resource)
		}
	}
	for c := range granted {
		if !used[c] {
			t.Errorf("the ClusterRole grants %s %s, which the shim never calls", c.verb, c.resource)
		}
	}
}
