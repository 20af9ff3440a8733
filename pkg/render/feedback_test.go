package render_test

import (
	"encoding/json"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// TestFeedbackReadsHyperShiftStatus evaluates the feedback rules, as the agent does, on the
// HyperShift objects of the shared examples: a HostedCluster with the status ARO HCP reads, and
// a NodePool as observed on an ARO HCP management cluster.
func TestFeedbackReadsHyperShiftStatus(t *testing.T) {
	c := minimalCluster("customer", "c", clusterID)
	clusterBundle, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	poolBundle, err := render.NodePoolBundle(c, fixtures.NodePool("customer", "c", "workers"), poolReleaseImage, render.Options{})
	if err != nil {
		t.Fatal(err)
	}

	hostedCluster := framework.HyperShiftExample(t, "aro-hcp-style-hostedcluster-with-status.yaml", "HostedCluster")
	hc := feedbackOn(t, hostedCluster, clusterBundle.ManifestConfigs[len(clusterBundle.ManifestConfigs)-1])
	history := `[{"completionTime":"2026-11-29T12:20:00Z","image":"quay.io/openshift-release-dev/ocp-release:4.20.8-multi",` +
		`"startedTime":"2026-11-29T12:00:00Z","state":"Completed","verified":false,"version":"4.20.8"}]`
	want := map[string]string{
		render.FeedbackAvailable:          "True",
		render.FeedbackProgressing:        "False",
		render.FeedbackDegraded:           "False",
		render.FeedbackVersionHistory:     history,
		render.FeedbackAPIHost:            "api-mycluster.ab12.eastus.example.com",
		render.FeedbackAPIPort:            "443",
		render.FeedbackGeneration:         "1",
		render.FeedbackObservedGeneration: "1",
	}
	for name, value := range want {
		if got := hc[name]; got != value {
			t.Errorf("%s = %q, want %q", name, got, value)
		}
	}
	// Their values are HyperShift's prose; that they are read is what matters.
	for _, name := range []string{render.FeedbackAvailableMessage, render.FeedbackProgressingMessage,
		render.FeedbackDegradedMessage, render.FeedbackControlPlaneVersionHistory} {
		if hc[name] == "" {
			t.Errorf("%s is not reported", name)
		}
	}

	nodePool := framework.HyperShiftExample(t, "aro-hcp-ci-nodepool-observed.yaml", "NodePool")
	np := feedbackOn(t, nodePool, poolBundle.ManifestConfigs[0])
	wantPool := map[string]string{
		render.FeedbackReady:           "True",
		render.FeedbackUpdatingVersion: "False",
		render.FeedbackUpdatingConfig:  "False",
		render.FeedbackReplicas:        "3",
		render.FeedbackVersion:         "4.20.24",
		// Being deleted, a generation HyperShift has not set its conditions on.
		render.FeedbackGeneration:         "4",
		render.FeedbackObservedGeneration: "3",
	}
	if !apiequality.Semantic.DeepEqual(wantPool, np) {
		t.Errorf("NodePool feedback (-want +got):\n%s", diff.Diff(wantPool, np))
	}

	// The load balancers that serve the cluster's names report the first address of their ingress.
	for i, want := range map[int]string{2: render.FeedbackAPIAddress, 3: render.FeedbackAppsAddress} {
		cfg := clusterBundle.ManifestConfigs[i]
		svc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": cfg.ResourceIdentifier.Name, "namespace": cfg.ResourceIdentifier.Namespace},
			"spec":     map[string]any{"type": "LoadBalancer"},
			"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{
				map[string]any{"ip": "203.0.113.7"}, map[string]any{"ip": "203.0.113.8"},
			}}},
		}}
		if got := feedbackOn(t, svc, cfg); !apiequality.Semantic.DeepEqual(got, map[string]string{want: "203.0.113.7"}) {
			t.Errorf("Service %s reports %v, want %s=203.0.113.7", cfg.ResourceIdentifier.Name, got, want)
		}
		// A load balancer without an address yet reports nothing, and is no error.
		delete(svc.Object, "status")
		if got := feedbackOn(t, svc, cfg); len(got) != 0 {
			t.Errorf("Service %s without an address reports %v, want nothing", cfg.ResourceIdentifier.Name, got)
		}
	}
}

// feedbackOn evaluates the feedback rules of cfg on obj, and returns each value as text:
// strings as they are, anything else as JSON.
func feedbackOn(t *testing.T, obj *unstructured.Unstructured, cfg protocol.ManifestConfigOption) map[string]string {
	t.Helper()
	values, err := agent.FeedbackValues(obj, cfg.FeedbackRules)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range values {
		switch f := v.Value; {
		case f.String != nil:
			got[v.Name] = *f.String
		case f.JSONRaw != nil:
			got[v.Name] = *f.JSONRaw
		default:
			raw, _ := json.Marshal(valueOf(f))
			got[v.Name] = string(raw)
		}
	}
	return got
}

func valueOf(f protocol.FieldValue) any {
	if f.Integer != nil {
		return *f.Integer
	}
	if f.Boolean != nil {
		return *f.Boolean
	}
	return nil
}
