package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// validLogsInspection is a defaulted inspection of the logs view that sets every optional field.
func validLogsInspection() *hcp.ClusterInspection {
	return &hcp.ClusterInspection{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cluster-x7k2p", Namespace: "team-a", ResourceVersion: "1"},
		Spec: hcp.ClusterInspectionSpec{
			ClusterName: "my-cluster", View: hcp.InspectionViewLogs, Container: "kube-apiserver", Pod: "kube-apiserver-0",
			TailLines: ptr.To[int64](200), Reason: "ICM 12345: API server restarts", TTLSeconds: ptr.To[int64](900),
			Username: "sre@example.com",
		},
	}
}

func TestValidateClusterInspection(t *testing.T) {
	if errs := ValidateClusterInspection(validLogsInspection()); len(errs) != 0 {
		t.Fatalf("a valid inspection was refused: %v", errs)
	}
	for _, view := range InspectionViews[:4] {
		ci := validLogsInspection()
		ci.Spec.View, ci.Spec.Container, ci.Spec.Pod, ci.Spec.TailLines = view, "", "", nil
		if errs := ValidateClusterInspection(ci); len(errs) != 0 {
			t.Errorf("a valid inspection of the %s view was refused: %v", view, errs)
		}
	}
	tests := []struct {
		name   string
		mutate func(*hcp.ClusterInspection)
		// want are the field errors, as "path: message fragment", in order.
		want []string
	}{
		{"no cluster, view or reason", func(ci *hcp.ClusterInspection) {
			ci.Spec = hcp.ClusterInspectionSpec{}
		}, []string{"spec.clusterName: Required value", `spec.view: Required value: must be one of "hostedcluster", "nodepools", "controlplane-pods", "events", "logs"`,
			"spec.reason: Required value: say why the control plane is inspected"}},
		{"a view that is not one", func(ci *hcp.ClusterInspection) {
			ci.Spec.View, ci.Spec.Container, ci.Spec.Pod, ci.Spec.TailLines = "secrets", "", "", nil
		}, []string{`spec.view: Unsupported value: "secrets": supported values: "hostedcluster", "nodepools", "controlplane-pods", "events", "logs"`}},
		{"logs without container", func(ci *hcp.ClusterInspection) { ci.Spec.Container = "" },
			[]string{"spec.container: Required value: the logs view reads one control-plane container's log"}},
		{"container of another view", func(ci *hcp.ClusterInspection) {
			ci.Spec.View = hcp.InspectionViewEvents
		}, []string{"spec.container: Forbidden: only the logs view reads a container", "spec.pod: Forbidden: only the logs view reads a pod",
			"spec.tailLines: Forbidden: only the logs view reads a log's tail"}},
		{"tail out of range", func(ci *hcp.ClusterInspection) { ci.Spec.TailLines = ptr.To[int64](10001) },
			[]string{"spec.tailLines: Invalid value: 10001: must be less than or equal to 10000"}},
		{"blank reason", func(ci *hcp.ClusterInspection) { ci.Spec.Reason = "  " },
			[]string{"spec.reason: Required value"}},
		{"reason too long", func(ci *hcp.ClusterInspection) { ci.Spec.Reason = strings.Repeat("r", 1025) },
			[]string{"spec.reason: Too long: may not be more than 1024 bytes"}},
		{"ttl too short", func(ci *hcp.ClusterInspection) { ci.Spec.TTLSeconds = ptr.To[int64](5) },
			[]string{"spec.ttlSeconds: Invalid value: 5: must be greater than or equal to 10"}},
		{"container that is no DNS label", func(ci *hcp.ClusterInspection) { ci.Spec.Container = "Kube_APIServer" },
			[]string{`spec.container: Invalid value: "Kube_APIServer"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ci := validLogsInspection()
			tt.mutate(ci)
			errs := ValidateClusterInspection(ci)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tt.want), errs)
			}
			for i, want := range tt.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d is %q, want it to contain %q", i, errs[i].Error(), want)
				}
			}
		})
	}
}

func TestValidateClusterInspectionUpdate(t *testing.T) {
	old := validLogsInspection()
	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"incident": "12345"}
	if errs := ValidateClusterInspectionUpdate(relabelled, old); len(errs) != 0 {
		t.Errorf("labels may change: %v", errs)
	}
	reworded := old.DeepCopy()
	reworded.Spec.Reason = "something else"
	errs := ValidateClusterInspectionUpdate(reworded, old)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec: Forbidden: spec is immutable after creation") {
		t.Errorf("changing the reason after the fact gave %v, want spec is immutable", errs)
	}
}
