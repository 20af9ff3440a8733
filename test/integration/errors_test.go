package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// causes returns "field: message" of every cause of an Invalid error.
func causes(t *testing.T, err error) map[string]string {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want a 422 Invalid status error", err)
	}
	if code := status.Status().Code; code != http.StatusUnprocessableEntity {
		t.Errorf("status code %d, want 422", code)
	}
	out := map[string]string{}
	for _, c := range status.Status().Details.Causes {
		out[c.Field] = c.Message
	}
	return out
}

func TestInvalidObjectsGet422WithEveryFieldPath(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	hc := client().HcpV1alpha1()

	cluster := fixtures.HCPCluster(ns, "dev")
	cluster.Spec.Network.HostPrefix = 30
	cluster.Spec.Network.ServiceCIDR = "10.128.0.0/16" // inside the default pod CIDR
	cluster.Spec.Version.ChannelGroup = "beta"
	cluster.Spec.API.AuthorizedCIDRs = []string{"not-a-cidr"}
	_, err := hc.HCPClusters(ns).Create(ctx, cluster, metav1.CreateOptions{})
	got := causes(t, err)
	for field, wantInMessage := range map[string]string{
		"spec.network.hostPrefix":     "less than or equal to 26",
		"spec.network":                "service CIDR '10.128.0.0/16' and pod CIDR '10.128.0.0/14' overlap",
		"spec.version.channelGroup":   "stable",
		"spec.api.authorizedCIDRs[0]": "CIDR",
	} {
		if !strings.Contains(got[field], wantInMessage) {
			t.Errorf("cause for %s = %q, want it to mention %q (all causes: %v)", field, got[field], wantInMessage, got)
		}
	}
	if !strings.Contains(err.Error(), `HCPCluster.hcp.aro.azure.com "dev" is invalid`) {
		t.Errorf("message %q does not name the object", err.Error())
	}

	pool := fixtures.NodePool(ns, "dev", "workers")
	pool.Spec.AutoScaling = &v1alpha1.NodePoolAutoScaling{Min: 1, Max: 3}
	pool.Spec.Taints = []v1alpha1.Taint{{Key: "gpu", Effect: "Sometimes"}}
	_, err = hc.NodePools(ns).Create(ctx, pool, metav1.CreateOptions{})
	got = causes(t, err)
	if _, ok := got["spec.autoScaling"]; !ok {
		if _, ok := got["spec.replicas"]; !ok {
			t.Errorf("replicas and autoScaling together: causes %v name neither field", got)
		}
	}
	if !strings.Contains(got["spec.taints[0].effect"], "NoSchedule") {
		t.Errorf("taint effect cause %q does not list the allowed values", got["spec.taints[0].effect"])
	}

	// Nothing of a refused object is stored.
	if list, err := hc.HCPClusters(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("after refused creates the namespace holds %v (err %v)", list, err)
	}
}

func TestImmutableFieldsRefuseChanges(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	clusters := client().HcpV1alpha1().HCPClusters(ns)
	if _, err := clusters.Create(ctx, fixtures.HCPCluster(ns, "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := updateCluster(ctx, ns, "dev", func(c *v1alpha1.HCPCluster) {
		c.Spec.Location = "westus"
		c.Spec.Network.PodCIDR = "10.132.0.0/14"
	})
	got := causes(t, err)
	if !strings.Contains(got["spec.location"], "immutable") {
		t.Errorf("location change: causes %v", got)
	}
	if len(got) < 2 {
		t.Errorf("want a cause for location and for the network, got %v", got)
	}
}

// rawRequest sends body to path as the admin and returns the status code and decoded Status.
func rawRequest(t *testing.T, method, path, contentType string, body []byte) (int, metav1.Status, http.Header) {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, server.Config.Host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var status metav1.Status
	_ = json.Unmarshal(data, &status)
	return resp.StatusCode, status, resp.Header
}

func TestBadRequestsGetClearStatusErrors(t *testing.T) {
	ns := namespace(t)
	collection := fmt.Sprintf("/apis/hcp.aro.azure.com/v1alpha1/namespaces/%s/hcpclusters", ns)
	valid, err := json.Marshal(withTypeMeta(fixtures.HCPCluster(ns, "dev")))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("malformed JSON is 400", func(t *testing.T) {
		code, status, _ := rawRequest(t, http.MethodPost, collection, "application/json", []byte(`{"kind": "HCPCluster",`))
		if code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest {
			t.Errorf("got %d %s %q", code, status.Reason, status.Message)
		}
	})
	t.Run("malformed YAML is 400", func(t *testing.T) {
		code, status, _ := rawRequest(t, http.MethodPost, collection, "application/yaml", []byte("kind: HCPCluster\n  spec: [\n"))
		if code != http.StatusBadRequest {
			t.Errorf("got %d %s %q", code, status.Reason, status.Message)
		}
	})
	withUnknown := bytes.Replace(valid, []byte(`"spec":{`), []byte(`"spec":{"colour":"blue",`), 1)
	t.Run("unknown fields warn", func(t *testing.T) {
		code, _, header := rawRequest(t, http.MethodPost, collection+"?fieldValidation=Warn", "application/json", withUnknown)
		if code != http.StatusCreated {
			t.Fatalf("got %d, want 201", code)
		}
		if w := header.Get("Warning"); !strings.Contains(w, "unknown field") || !strings.Contains(w, "spec.colour") {
			t.Errorf("Warning header %q does not name spec.colour", w)
		}
	})
	t.Run("unknown fields with fieldValidation=Strict are refused", func(t *testing.T) {
		strict := bytes.Replace(withUnknown, []byte(`"name":"dev"`), []byte(`"name":"strict"`), 1)
		code, status, _ := rawRequest(t, http.MethodPost, collection+"?fieldValidation=Strict", "application/json", strict)
		if code != http.StatusBadRequest || !strings.Contains(status.Message, `unknown field "spec.colour"`) {
			t.Errorf("got %d %q", code, status.Message)
		}
	})
	t.Run("bodies over 3 MiB are 413", func(t *testing.T) {
		huge := bytes.Replace(valid, []byte(`"spec":{`), []byte(`"spec":{"padding":"`+strings.Repeat("x", 3*1024*1024+1)+`",`), 1)
		code, status, _ := rawRequest(t, http.MethodPost, collection, "application/json", huge)
		if code != http.StatusRequestEntityTooLarge {
			t.Errorf("got %d %s %q", code, status.Reason, status.Message)
		}
	})
	t.Run("a stale resourceVersion is 409", func(t *testing.T) {
		clusters := client().HcpV1alpha1().HCPClusters(ns)
		stale, err := clusters.Get(context.Background(), "dev", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := updateCluster(context.Background(), ns, "dev", func(c *v1alpha1.HCPCluster) {
			c.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](10)
		}); err != nil {
			t.Fatal(err)
		}
		stale.Spec.Autoscaling.MaxNodesTotal = ptr.To[int32](20)
		_, err = clusters.Update(context.Background(), stale, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "the object has been modified") {
			t.Errorf("update with a stale resourceVersion: %v, want Conflict", err)
		}
	})
	t.Run("an unknown kind in the body is refused", func(t *testing.T) {
		body := bytes.Replace(valid, []byte(`"kind":"HCPCluster"`), []byte(`"kind":"NodePool"`), 1)
		code, _, _ := rawRequest(t, http.MethodPost, collection, "application/json", body)
		if code < 400 || code >= 500 {
			t.Errorf("a NodePool posted to hcpclusters got %d", code)
		}
	})
}

func withTypeMeta(c *v1alpha1.HCPCluster) *v1alpha1.HCPCluster {
	c.APIVersion, c.Kind = v1alpha1.SchemeGroupVersion.String(), "HCPCluster"
	return c
}
