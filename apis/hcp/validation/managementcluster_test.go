package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

func validManagementCluster() *hcp.ManagementCluster {
	return &hcp.ManagementCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "mgmt-eastus-1", ResourceVersion: "1"},
		Spec: hcp.ManagementClusterSpec{
			ConsumerName: "mgmt-eastus-1",
			Location:     "eastus",
			Capacity:     50,
			Schedulable:  ptr.To(true),
		},
	}
}

func TestValidateManagementCluster(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(mc *hcp.ManagementCluster)
		want   []wantErr
	}{
		{name: "valid", mutate: func(mc *hcp.ManagementCluster) {}},
		{name: "namespace", mutate: func(mc *hcp.ManagementCluster) { mc.Namespace = "default" }, want: []wantErr{forbidden("metadata.namespace")}},
		{name: "name with a period", mutate: func(mc *hcp.ManagementCluster) { mc.Name = "mgmt.eastus" }, want: []wantErr{invalid("metadata.name")}},
		{name: "no consumer name", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = "" }, want: []wantErr{required("spec.consumerName")}},
		{name: "consumer name starting with a digit", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = "1-mgmt" }},
		{name: "63 character consumer name", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = strings.Repeat("c", 63) }},
		{name: "64 character consumer name", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = strings.Repeat("c", 64) }, want: []wantErr{tooLong("spec.consumerName")}},
		{name: "consumer name with a slash", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = "mgmt/1" }, want: []wantErr{invalid("spec.consumerName")}},
		{name: "consumer name ends with a dash", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = "mgmt-" }, want: []wantErr{invalid("spec.consumerName")}},
		{name: "upper case consumer name", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = "Mgmt" }, want: []wantErr{invalid("spec.consumerName")}},
		{name: "no location", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Location = "" }, want: []wantErr{required("spec.location")}},
		{name: "invalid location", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Location = "East US" }, want: []wantErr{invalid("spec.location")}},
		{name: "capacity 1", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Capacity = 1 }},
		{name: "capacity 10000", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Capacity = 10000 }},
		{name: "no capacity", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Capacity = 0 }, want: []wantErr{invalid("spec.capacity")}},
		{name: "capacity over 10000", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Capacity = 10001 }, want: []wantErr{invalid("spec.capacity")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mc := validManagementCluster()
			tc.mutate(mc)
			expectErrors(t, ValidateManagementCluster(mc), tc.want...)
		})
	}
}

func TestValidateManagementClusterUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(mc *hcp.ManagementCluster)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(mc *hcp.ManagementCluster) {}},
		{name: "capacity", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Capacity = 80 }},
		{name: "cordoned", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Schedulable = ptr.To(false) }},
		{name: "create rules still apply", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Capacity = 0 }, want: []wantErr{invalid("spec.capacity")}},
		{name: "consumer name", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.ConsumerName = "other" }, want: []wantErr{invalid("spec.consumerName")}},
		{name: "location", mutate: func(mc *hcp.ManagementCluster) { mc.Spec.Location = "westus" }, want: []wantErr{invalid("spec.location")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldMC, newMC := validManagementCluster(), validManagementCluster()
			tc.mutate(newMC)
			expectErrors(t, ValidateManagementClusterUpdate(newMC, oldMC), tc.want...)
		})
	}
}

func TestValidateManagementClusterStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(mc *hcp.ManagementCluster)
		want   []wantErr
	}{
		{name: "connected", mutate: func(mc *hcp.ManagementCluster) {
			mc.Status = hcp.ManagementClusterStatus{
				Conditions:     []metav1.Condition{condition("AgentConnected", metav1.ConditionTrue)},
				HostedClusters: 12,
				LastSeen:       ptr.To(metav1.Unix(1767225600, 0)),
			}
		}},
		{name: "negative hosted clusters", mutate: func(mc *hcp.ManagementCluster) { mc.Status.HostedClusters = -1 }, want: []wantErr{invalid("status.hostedClusters")}},
		{name: "condition without transition time", mutate: func(mc *hcp.ManagementCluster) {
			c := condition("AgentConnected", metav1.ConditionFalse)
			c.LastTransitionTime = metav1.Time{}
			mc.Status.Conditions = []metav1.Condition{c}
		}, want: []wantErr{required("status.conditions[0].lastTransitionTime")}},
		{name: "no resource version", mutate: func(mc *hcp.ManagementCluster) { mc.ResourceVersion = "" }, want: []wantErr{invalid("metadata.resourceVersion")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldMC, newMC := validManagementCluster(), validManagementCluster()
			tc.mutate(newMC)
			expectErrors(t, ValidateManagementClusterStatusUpdate(newMC, oldMC), tc.want...)
		})
	}
}
