package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// Requests that are the client's mistake get 400 Bad Request naming what is wrong, where the generic
// store would answer 500.
func TestClientMistakesAre400(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	createCluster(t, ns, "dev")
	if _, err := client().HcpV1alpha1().NodePools(ns).Create(ctx, fixtures.NodePool(ns, "dev", "workers"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	notAResourceVersion := `resourceVersion: Invalid value: "abc": must be empty or a resourceVersion the server handed out`
	badRequest := func(t *testing.T, what string, err error, want string) {
		t.Helper()
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want 400 Bad Request saying %q", what, err, want)
		}
	}

	t.Run("an update with metadata.resourceVersion abc", func(t *testing.T) {
		cluster, err := clusters.Get(ctx, "dev", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cluster.ResourceVersion = "abc"
		_, err = clusters.Update(ctx, cluster, metav1.UpdateOptions{})
		badRequest(t, "PUT", err, "metadata."+notAResourceVersion)
		_, err = clusters.UpdateStatus(ctx, cluster, metav1.UpdateOptions{})
		badRequest(t, "PUT of the status", err, "metadata."+notAResourceVersion)
		_, err = clusters.Patch(ctx, "dev", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"abc"}}`), metav1.PatchOptions{})
		badRequest(t, "PATCH", err, "metadata."+notAResourceVersion)
		_, err = clusters.Update(ctx, cluster, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		badRequest(t, "PUT with dryRun", err, "metadata."+notAResourceVersion)

		scale, err := client().HcpV1alpha1().NodePools(ns).GetScale(ctx, "dev.workers", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scale.ResourceVersion = "abc"
		_, err = client().HcpV1alpha1().NodePools(ns).UpdateScale(ctx, "dev.workers", scale, metav1.UpdateOptions{})
		badRequest(t, "PUT of the scale", err, "metadata."+notAResourceVersion)
	})

	t.Run("a get or watch with resourceVersion=abc", func(t *testing.T) {
		_, err := clusters.Watch(ctx, metav1.ListOptions{ResourceVersion: "abc"})
		badRequest(t, "watch", err, notAResourceVersion)
		_, err = clusters.Get(ctx, "dev", metav1.GetOptions{ResourceVersion: "abc"})
		badRequest(t, "get", err, notAResourceVersion)
		_, err = client().HcpV1alpha1().NodePools(ns).GetScale(ctx, "dev.workers", metav1.GetOptions{ResourceVersion: "abc"})
		badRequest(t, "get of the scale", err, notAResourceVersion)
		// The watch cache answered a list with 400 already.
		_, err = clusters.List(ctx, metav1.ListOptions{ResourceVersion: "abc"})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("list: %v, want 400 Bad Request", err)
		}
	})

	t.Run("a server-side apply with an unknown field", func(t *testing.T) {
		// As kube-apiserver refuses an unknown field with fieldValidation=Strict: 400, naming the field.
		for _, tc := range []struct{ path, body string }{
			{"/hcpclusters/dev", "spec:\n  colour: blue\n"},
			{"/hcpclusters/dev/status", "status:\n  colour: blue\n"},
			{"/hcpclusters/new", "spec:\n  colour: blue\n"},
			{"/hcpclusters/dev?dryRun=All", "spec:\n  colour: blue\n"},
		} {
			path := fmt.Sprintf("/apis/hcp.aro.azure.com/v1alpha1/namespaces/%s%s", ns, tc.path)
			if !strings.Contains(path, "?") {
				path += "?"
			}
			name := strings.TrimSuffix(strings.TrimPrefix(strings.Split(tc.path, "?")[0], "/hcpclusters/"), "/status")
			body := "apiVersion: hcp.aro.azure.com/v1alpha1\nkind: HCPCluster\nmetadata:\n  name: " + name + "\n" + tc.body
			code, status, _ := rawRequest(t, http.MethodPatch, path+"&fieldManager=sre", "application/apply-patch+yaml", []byte(body))
			field := strings.Split(tc.body, ":")[0] + ".colour"
			if code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest || !strings.Contains(status.Message, field+": field not declared in schema") {
				t.Errorf("apply to %s: %d %s %q, want 400 naming .%s", tc.path, code, status.Reason, status.Message, field)
			}
		}
	})
}
