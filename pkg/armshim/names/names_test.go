package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	sub        = "00000000-1111-2222-3333-444444444444"
	clusterID  = "/subscriptions/" + sub + "/resourceGroups/My_RG.(prod)/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev-Cluster"
	nodePoolID = clusterID + "/nodePools/Workers-1"
	authID     = clusterID + "/externalAuths/Entra"
)

func TestParse(t *testing.T) {
	ns := Namespace(sub, "My_RG.(prod)")
	tests := []struct {
		name    string
		id      string
		want    Object
		wantErr string
	}{
		{name: "cluster", id: clusterID, want: Object{Kind: KindCluster, Namespace: ns, Name: "dev-cluster", ClusterName: "dev-cluster"}},
		{name: "node pool", id: nodePoolID, want: Object{Kind: KindNodePool, Namespace: ns, Name: "dev-cluster.workers-1", ClusterName: "dev-cluster"}},
		{
			name: "other casing, same objects",
			id:   strings.ToUpper(nodePoolID),
			want: Object{Kind: KindNodePool, Namespace: ns, Name: "dev-cluster.workers-1", ClusterName: "dev-cluster"},
		},
		{name: "external auth", id: authID, want: Object{Kind: KindExternalAuth, Namespace: ns, Name: "dev-cluster.entra", ClusterName: "dev-cluster"}},
		{name: "not an ID", id: "dev-cluster", wantErr: "invalid resource ID"},
		{name: "empty", id: "", wantErr: "invalid resource ID"},
		{
			name:    "other provider",
			id:      "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm",
			wantErr: "is none of",
		},
		{
			name:    "cluster name too long",
			id:      "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + strings.Repeat("a", 55),
			wantErr: "must be 1 to 54",
		},
		{
			name:    "cluster name with a dot",
			id:      "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/a.b",
			wantErr: "must be 1 to 54",
		},
		{name: "node pool name too long", id: clusterID + "/nodePools/" + strings.Repeat("p", 16), wantErr: "must be 1 to 15"},
		{name: "node pool name starts with a digit", id: clusterID + "/nodePools/1pool", wantErr: "must be 1 to 15"},
		{name: "external auth name too long", id: clusterID + "/externalAuths/" + strings.Repeat("e", 16), wantErr: "external auth name"},
		{
			name:    "cluster without resource group",
			id:      "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c",
			wantErr: "resource group",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.id)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one that says %q", tt.id, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.id, err)
			}
			got.ID = nil
			if got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.id, got, tt.want)
			}
			if errs := validation.IsDNS1123Subdomain(got.Name); len(errs) > 0 {
				t.Errorf("name %q is not a valid object name: %v", got.Name, errs)
			}
		})
	}
}

func TestNamespace(t *testing.T) {
	tests := []struct {
		name string
		sub  string
		rg   string
	}{
		{name: "plain", sub: sub, rg: "rg"},
		{name: "odd characters", sub: sub, rg: "My_RG.(prod)"},
		{name: "only odd characters", sub: sub, rg: "___"},
		{name: "longest resource group", sub: sub, rg: strings.Repeat("Ab_", 30)},
		{name: "ends in a period", sub: sub, rg: "rg."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := Namespace(tt.sub, tt.rg)
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				t.Errorf("Namespace(%q, %q) = %q, not a DNS-1123 label: %v", tt.sub, tt.rg, ns, errs)
			}
			if again := Namespace(strings.ToUpper(tt.sub), strings.ToUpper(tt.rg)); again != ns {
				t.Errorf("case changes the namespace: %q and %q", ns, again)
			}
		})
	}
	if Namespace(sub, "rg-a") == Namespace(sub, "rg-b") {
		t.Error("two resource groups share a namespace")
	}
	if Namespace(sub, "rg") == Namespace("99999999-1111-2222-3333-444444444444", "rg") {
		t.Error("two subscriptions share a namespace")
	}
	// Long names that agree in their first 40 characters still differ by the hash.
	long := strings.Repeat("a", 60)
	if Namespace(sub, long+"1") == Namespace(sub, long+"2") {
		t.Error("resource groups that differ after the readable part share a namespace")
	}
}

func TestFromAnnotationsKeepsARMSpelling(t *testing.T) {
	for _, id := range []string{clusterID, nodePoolID} {
		o, err := Parse(id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FromAnnotations(ObjectAnnotations(o))
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != id {
			t.Errorf("id = %q, want %q", got.ID, id)
		}
		wantName, wantType := "Dev-Cluster", ClusterType
		if o.Kind == KindNodePool {
			wantName, wantType = "Workers-1", NodePoolType
		}
		if got.Name != wantName || got.Type != wantType {
			t.Errorf("name, type = %q, %q, want %q, %q", got.Name, got.Type, wantName, wantType)
		}
	}
	if ann := NamespaceAnnotations(mustParse(t, clusterID)); ann[AnnotationResourceGroup] != "My_RG.(prod)" || ann[AnnotationSubscriptionID] != sub {
		t.Errorf("namespace annotations = %v", ann)
	}
	if _, err := FromAnnotations(map[string]string{}); err == nil || !strings.Contains(err.Error(), AnnotationResourceID) {
		t.Errorf("an object without the annotation: error = %v, want one naming %s", err, AnnotationResourceID)
	}
	if _, err := FromAnnotations(map[string]string{AnnotationResourceID: "garbage"}); err == nil {
		t.Error("a garbled annotation gave no error")
	}
}

func mustParse(t *testing.T, id string) Object {
	t.Helper()
	o, err := Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSubscriptionLabels(t *testing.T) {
	upper := strings.ToUpper(sub)
	labels := SubscriptionLabels(upper)
	if got := labels[LabelSubscription]; got != sub {
		t.Errorf("label = %q, want the lowercased subscription %q", got, sub)
	}
	if errs := validation.IsValidLabelValue(labels[LabelSubscription]); len(errs) > 0 {
		t.Errorf("not a label value: %v", errs)
	}
	if got, want := SubscriptionSelector(upper), LabelSubscription+"="+sub; got != want {
		t.Errorf("SubscriptionSelector = %q, want %q", got, want)
	}
}
