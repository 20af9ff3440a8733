package frontend

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// TestPatchAsPut checks that a PATCH is refused where a PUT of the merged resource would be: numbers
// in integer fields decode as a PUT's do, and a null that removes a required or create-only field is
// an error at its ARM path rather than a 202 that changes nothing.
func TestPatchAsPut(t *testing.T) {
	const clusterBody = `{"location": "eastus", "properties": {"version": {"id": "4.20"}, "network": {"podCidr": "10.128.0.0/14"},
		"platform": {"subnetId": "s", "networkSecurityGroupId": "n"}, "nodeDrainTimeoutMinutes": 5}}`
	const nodePoolBody = `{"location": "eastus", "properties": {"version": {"id": "4.20.8"},
		"platform": {"vmSize": "Standard_D8s_v3", "osDisk": {"sizeGiB": 64}}, "replicas": 2}}`
	tests := []struct {
		name   string
		path   string
		patch  string
		status int
		target string
		// put is a PUT body that must be refused with the same error.
		put  string
		want string
	}{
		{name: "replicas 10.0", path: testNodePool, patch: `{"properties": {"replicas": 10.0}}`, status: 400, target: "properties.replicas",
			put: strings.Replace(nodePoolBody, `"replicas": 2`, `"replicas": 10.0`, 1)},
		{name: "replicas 1e1", path: testNodePool, patch: `{"properties": {"replicas": 1e1}}`, status: 400, target: "properties.replicas",
			put: strings.Replace(nodePoolBody, `"replicas": 2`, `"replicas": 1e1`, 1)},
		{name: "os disk size 64.0", path: testNodePool, patch: `{"properties": {"platform": {"osDisk": {"sizeGiB": 64.0}}}}`, status: 400,
			target: "properties.platform.osDisk.sizeGiB", put: strings.Replace(nodePoolBody, `"sizeGiB": 64`, `"sizeGiB": 64.0`, 1)},
		{name: "drain timeout 5e0", path: testCluster, patch: `{"properties": {"nodeDrainTimeoutMinutes": 5e0}}`, status: 400,
			target: "properties.nodeDrainTimeoutMinutes", put: strings.Replace(clusterBody, `"nodeDrainTimeoutMinutes": 5`, `"nodeDrainTimeoutMinutes": 5e0`, 1)},
		{name: "an integer as written", path: testNodePool, patch: `{"properties": {"replicas": 3}}`, status: 202},

		{name: "cluster version null", path: testCluster, patch: `{"properties": {"version": null}}`, status: 400, target: "properties.version", want: "Required value"},
		{name: "cluster version.id null", path: testCluster, patch: `{"properties": {"version": {"id": null}}}`, status: 400, target: "properties.version.id", want: "Required value"},
		{name: "cluster subnetId null", path: testCluster, patch: `{"properties": {"platform": {"subnetId": null}}}`, status: 400, target: "properties.platform.subnetId", want: "Required value"},
		{name: "cluster platform null", path: testCluster, patch: `{"properties": {"platform": null}}`, status: 400, target: "properties.platform"},
		{name: "cluster network null", path: testCluster, patch: `{"properties": {"network": null}}`, status: 400, target: "properties.network",
			want: "properties.network.podCidr in it cannot be changed"},
		{name: "cluster podCidr null", path: testCluster, patch: `{"properties": {"network": {"podCidr": null}}}`, status: 400, target: "properties.network.podCidr", want: "Forbidden"},
		{name: "cluster location null", path: testCluster, patch: `{"location": null}`, status: 400, target: "location"},
		{name: "cluster properties null", path: testCluster, patch: `{"properties": null}`, status: 400, target: "properties"},
		{name: "node pool vmSize null", path: testNodePool, patch: `{"properties": {"platform": {"vmSize": null}}}`, status: 400, target: "properties.platform.vmSize"},
		{name: "node pool version.id null", path: testNodePool, patch: `{"properties": {"version": {"id": null}}}`, status: 400, target: "properties.version.id"},
		{name: "node pool osDisk null", path: testNodePool, patch: `{"properties": {"platform": {"osDisk": null}}}`, status: 400, target: "properties.platform.osDisk"},
		{name: "two removals are two details", path: testCluster, patch: `{"location": null, "properties": {"version": null}}`, status: 400,
			want: "2 errors occurred"},

		{name: "tags null", path: testCluster, patch: `{"tags": null}`, status: 202},
		{name: "an updatable field null", path: testCluster, patch: `{"properties": {"nodeDrainTimeoutMinutes": null}}`, status: 202},
		{name: "a field the resource does not have", path: testCluster, patch: `{"properties": {"autoscaling": null, "etcd": null}}`, status: 202},
		{name: "node pool replicas null", path: testNodePool, patch: `{"properties": {"replicas": null}}`, status: 202},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			if rec := call(f, "PUT", testCluster+"?api-version="+testAPI, clusterBody); rec.Code != 201 {
				t.Fatalf("creating the cluster: %d %s", rec.Code, rec.Body)
			}
			if rec := call(f, "PUT", testNodePool+"?api-version="+testAPI, nodePoolBody); rec.Code != 201 {
				t.Fatalf("creating the node pool: %d %s", rec.Code, rec.Body)
			}
			rec := call(f, "PATCH", tt.path+"?api-version="+testAPI, tt.patch)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status != 400 {
				return
			}
			ce := cloudError(t, rec)
			if ce.Target != tt.target {
				t.Errorf("target = %q, want %q: %s", ce.Target, tt.target, ce.Message)
			}
			if !strings.Contains(ce.Message, tt.want) {
				t.Errorf("message = %q, want it to say %q", ce.Message, tt.want)
			}
			if tt.put == "" {
				return
			}
			put := call(f, "PUT", tt.path+"?api-version="+testAPI, tt.put)
			if put.Code != 400 {
				t.Fatalf("the PUT = %d: %s", put.Code, put.Body)
			}
			if want := cloudError(t, put); !reflect.DeepEqual(ce, want) {
				t.Errorf("PATCH error %+v, PUT error %+v", ce, want)
			}
		})
	}
}

// TestBodyNameAndSystemData checks the envelope as the public frontend reads it: a body's name must be
// the path's, to the letter, its id and type are ignored, and a system data header that is not
// systemData is ignored rather than refused.
func TestBodyNameAndSystemData(t *testing.T) {
	withEnvelope := func(fields string) string {
		return `{` + fields + `, ` + strings.TrimPrefix(minimalClusterBody, "{")
	}
	tests := []struct {
		name    string
		method  string
		body    string
		headers []string
		status  int
		// missing: a PATCH finds no cluster.
		missing bool
		// createdBy is the system data the created cluster answers with.
		createdBy string
	}{
		{name: "another name", method: "PUT", body: withEnvelope(`"name": "Other-Cluster"`), status: 400},
		{name: "the name in another case", method: "PUT", body: withEnvelope(`"name": "dev-cluster"`), status: 400},
		{name: "the path's name, any id and type", method: "PUT",
			body: withEnvelope(`"name": "Dev-Cluster", "id": "/subscriptions/x", "type": "Microsoft.Compute/virtualMachines"`), status: 201},
		{name: "a PATCH naming another resource", method: "PATCH", body: `{"name": "Other-Cluster", "tags": {"a": "b"}}`, status: 400},
		{name: "only the key name is the name", method: "PUT", body: withEnvelope(`"NAME": "Other-Cluster", "Name": "x"`), status: 201},
		// Whether the resource exists comes first.
		{name: "a PATCH of a missing resource naming another", method: "PATCH", missing: true, body: `{"name": "Other-Cluster"}`, status: 404},
		{name: "system data that is not JSON", method: "PUT", body: minimalClusterBody,
			headers: []string{headerSystemData, "im_a_potato_not_a_json"}, status: 201, createdBy: "Unknown-ARO-HCP-frontend"},
		{name: "system data of an unknown kind of creator", method: "PUT", body: minimalClusterBody,
			headers: []string{headerSystemData, `{"createdBy": "alice", "createdByType": "Robot"}`}, status: 201, createdBy: "Unknown-ARO-HCP-frontend"},
		{name: "system data", method: "PUT", body: minimalClusterBody,
			headers: []string{headerSystemData, `{"createdBy": "alice@example.com", "createdByType": "User"}`}, status: 201, createdBy: "alice@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFrontend(t, subscription(hcpv1alpha1.ARMSubscriptionRegistered))
			if tt.method == "PATCH" && !tt.missing {
				if rec := call(f, "PUT", testCluster+"?api-version="+testAPI, minimalClusterBody); rec.Code != 201 {
					t.Fatalf("creating the cluster: %d %s", rec.Code, rec.Body)
				}
			}
			rec := call(f, tt.method, testCluster+"?api-version="+testAPI, tt.body, tt.headers...)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status == 404 {
				return
			}
			if tt.status == 400 {
				ce := cloudError(t, rec)
				if ce.Code != CodeInvalidRequestContent || ce.Target != "name" || !strings.Contains(ce.Message, "name must match resourceID path: "+testCluster) {
					t.Errorf("error %+v, want InvalidRequestContent at name, which must match %s", ce, testCluster)
				}
				return
			}
			var got struct {
				SystemData struct {
					CreatedBy string `json:"createdBy"`
				} `json:"systemData"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if tt.createdBy != "" && got.SystemData.CreatedBy != tt.createdBy {
				t.Errorf("createdBy = %q, want %q", got.SystemData.CreatedBy, tt.createdBy)
			}
		})
	}
}
