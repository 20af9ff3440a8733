package frontend

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clienttesting "k8s.io/client-go/testing"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// TestConflictsInARMTerms checks that a refusal naming another object of the API (a uniqueness claim,
// an admission plugin's conflict) reaches the caller naming that object's ARM resource ID, or no
// object at all when it is another subscription's, and never a namespace, an object name or a
// Kubernetes field path.
func TestConflictsInARMTerms(t *testing.T) {
	const otherSub = "99999999-8888-4777-8666-555555555555"
	otherID := testRGPath[:strings.Index(testRGPath, "/resourceGroups/")] + "/resourceGroups/Other-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Other"
	foreignID := "/subscriptions/" + otherSub + "/resourceGroups/Theirs/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Theirs"
	ownNS := names.Namespace(testSub, "Dev-RG")
	otherNS := names.Namespace(testSub, "Other-RG")
	foreignNS := names.Namespace(otherSub, "Theirs")
	cluster := func(ns, name, id string) *hcpv1alpha1.HCPCluster {
		return &hcpv1alpha1.HCPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{names.AnnotationResourceID: id}}}
	}
	clusterKind := schema.GroupKind{Group: hcpv1alpha1.SchemeGroupVersion.Group, Kind: "HCPCluster"}
	clusters := hcpv1alpha1.SchemeGroupVersion.WithResource("hcpclusters").GroupResource()
	nodePools := hcpv1alpha1.SchemeGroupVersion.WithResource("nodepools").GroupResource()
	claimed := func(holder string) error {
		return apierrors.NewInvalid(clusterKind, "dev-cluster", field.ErrorList{field.Invalid(field.NewPath("spec", "platform", "subnetID"), "s",
			"is already used by HCPCluster "+holder+"; a subnet can serve one cluster only")})
	}

	tests := []struct {
		name     string
		path     string
		body     string
		resource string
		err      error
		status   int
		target   string
		want     []string
	}{
		{name: "a subnet claimed by a cluster of the same subscription names its resource ID",
			path: testCluster, body: minimalClusterBody, resource: "hcpclusters", err: claimed(otherNS + "/other"),
			status: 400, target: "properties.platform.subnetId", want: []string{"is already used by cluster '" + otherID + "'", "a subnet can serve one cluster only"}},
		{name: "a claim as a 409 names the resource ID too",
			path: testCluster, body: minimalClusterBody, resource: "hcpclusters",
			err:    apierrors.NewConflict(clusters, "dev-cluster", errors.New("spec.platform.networkSecurityGroupID is already used by HCPCluster "+otherNS+"/other")),
			status: 409, want: []string{"properties.platform.networkSecurityGroupId is already used by cluster '" + otherID + "'"}},
		{name: "a cluster of another subscription stays unnamed",
			path: testCluster, body: minimalClusterBody, resource: "hcpclusters", err: claimed(foreignNS + "/theirs"),
			status: 400, target: "properties.platform.subnetId", want: []string{"is already used by another cluster;"}},
		{name: "an object that cannot be read stays unnamed",
			path: testCluster, body: minimalClusterBody, resource: "hcpclusters", err: claimed(otherNS + "/gone"),
			status: 400, target: "properties.platform.subnetId", want: []string{"is already used by another cluster;"}},
		{name: "an admission conflict naming the parent in the request's namespace",
			path: testNodePool, body: minimalNodePoolBody, resource: "nodepools",
			err: apierrors.NewConflict(nodePools, "dev-cluster.workers",
				errors.New("clusterreference: HCPCluster dev-cluster is being deleted; nothing new can be added to it")),
			status: 409, want: []string{"clusterreference: cluster '" + testCluster + "' is being deleted"}},
		{name: "a name taken meanwhile",
			path: testNodePool, body: minimalNodePoolBody, resource: "nodepools", err: apierrors.NewAlreadyExists(nodePools, "dev-cluster.workers"),
			status: 409, want: []string{"a resource of the same name already exists"}},
		{name: "a metadata field is not named",
			path: testCluster, body: minimalClusterBody, resource: "hcpclusters",
			err: apierrors.NewInvalid(clusterKind, "dev-cluster", field.ErrorList{
				field.Invalid(field.NewPath("metadata", "labels"), "x", "must be no more than 63 characters")}),
			status: 400, want: []string{"the resource: Invalid value: \"x\": must be no more than 63 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []runtime.Object{subscription(hcpv1alpha1.ARMSubscriptionRegistered),
				cluster(otherNS, "other", otherID), cluster(foreignNS, "theirs", foreignID)}
			if tt.resource == "nodepools" {
				objs = append(objs, cluster(ownNS, "dev-cluster", testCluster))
			}
			f, client := newTestFrontend(t, objs...)
			client.PrependReactor("create", tt.resource, func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, tt.err
			})
			rec := call(f, "PUT", tt.path+"?api-version="+testAPI, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			ce := cloudError(t, rec)
			if ce.Target != tt.target {
				t.Errorf("target = %q, want %q", ce.Target, tt.target)
			}
			for _, w := range tt.want {
				if !strings.Contains(ce.Message, w) {
					t.Errorf("message %q does not say %q", ce.Message, w)
				}
			}
			raw, _ := json.Marshal(ce)
			for _, internal := range []string{otherNS, foreignNS, ownNS, "HCPCluster", "NodePool", "hcp.aro.azure.com", "metadata.", "spec.", "dev-cluster.workers", foreignID} {
				if strings.Contains(string(raw), internal) {
					t.Errorf("the caller is told %q: %s", internal, raw)
				}
			}
		})
	}
}
