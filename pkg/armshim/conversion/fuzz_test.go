package conversion

import (
	"encoding/json"
	"testing"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// Request bodies come from anyone who can reach ARM. Whatever they hold, the conversion answers
// with an object or field errors, never a panic; and what it accepts it can show, and take back
// unchanged: a client that PUTs back what it GETs is never refused.
//
//	go test ./pkg/armshim/conversion -run '^$' -fuzz '^FuzzClusterRequest$' -fuzztime 1m

func FuzzClusterRequest(f *testing.F) {
	for _, seed := range []string{
		fullClusterBody,
		`{"location":"eastus","properties":{"version":{"id":"4.20"},"platform":{"subnetId":"x","networkSecurityGroupId":"y"}}}`,
		`{"location":"East US","tags":{},"identity":{"type":"UserAssigned","userAssignedIdentities":{"a":null}},"properties":{}}`,
		`{"location":"eastus","properties":{"etcd":{"dataEncryption":{"keyManagementMode":"PlatformManaged","customerManaged":{"kms":{"activeKey":{"vaultName":"v"}}}}}}}`,
		`{"location":"eastus","properties":{"network":{"hostPrefix":99999999999}}}`,
		`{"properties":null,"location":null}`,
		`[]`,
		`null`,
	} {
		for v := range APIVersions {
			f.Add([]byte(seed), uint8(v), false)
			f.Add([]byte(seed), uint8(v), true)
		}
	}
	existing := mustCluster(fullClusterBody)
	f.Fuzz(func(t *testing.T, body []byte, version uint8, update bool) {
		v := APIVersions[int(version)%len(APIVersions)]
		var current *hcpv1alpha1.HCPCluster
		if update {
			current = existing
		}
		c, errs := ClusterFromARM(Request{APIVersion: v, ResourceID: testClusterID, Body: body}, current)
		if len(errs) > 0 {
			return
		}
		out, err := ClusterToARM(v, c)
		if err != nil {
			t.Fatalf("an accepted cluster cannot be shown: %v", err)
		}
		again, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := ClusterFromARM(Request{APIVersion: v, ResourceID: testClusterID, Body: again}, c); len(errs) > 0 {
			t.Fatalf("PUT of the GET body refused: %v\n%s", errs, again)
		}
	})
}

func FuzzNodePoolRequest(f *testing.F) {
	for _, seed := range []string{
		fullNodePoolBody,
		`{"location":"eastus","properties":{"platform":{"vmSize":"Standard_D8s_v3"},"replicas":3}}`,
		`{"location":"eastus","properties":{"labels":[{"key":"a"},{"key":"a","value":"b"}],"taints":[{"key":""}]}}`,
		`{"location":"eastus","properties":{"autoRepair":false,"autoScaling":{}}}`,
		`{"location":"eastus","identity":{"type":"SystemAssigned"},"properties":{"platform":{"osDisk":{"sizeGiB":-1}}}}`,
		`{}`,
	} {
		for v := range APIVersions {
			f.Add([]byte(seed), uint8(v), false)
			f.Add([]byte(seed), uint8(v), true)
		}
	}
	existing := mustNodePool(fullNodePoolBody)
	f.Fuzz(func(t *testing.T, body []byte, version uint8, update bool) {
		v := APIVersions[int(version)%len(APIVersions)]
		var current *hcpv1alpha1.NodePool
		if update {
			current = existing
		}
		np, errs := NodePoolFromARM(Request{APIVersion: v, ResourceID: testPoolID, Body: body}, current)
		if len(errs) > 0 {
			return
		}
		out, err := NodePoolToARM(v, np)
		if err != nil {
			t.Fatalf("an accepted node pool cannot be shown: %v", err)
		}
		again, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := NodePoolFromARM(Request{APIVersion: v, ResourceID: testPoolID, Body: again}, np); len(errs) > 0 {
			t.Fatalf("PUT of the GET body refused: %v\n%s", errs, again)
		}
	})
}

func mustCluster(body string) *hcpv1alpha1.HCPCluster {
	c, errs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID, Body: []byte(body), SystemData: testSystemData}, nil)
	if len(errs) > 0 {
		panic(errs.ToAggregate())
	}
	hcpv1alpha1.SetObjectDefaults_HCPCluster(c)
	return c
}

func mustNodePool(body string) *hcpv1alpha1.NodePool {
	np, errs := NodePoolFromARM(Request{APIVersion: V20260901Preview, ResourceID: testPoolID, Body: []byte(body), SystemData: testSystemData}, nil)
	if len(errs) > 0 {
		panic(errs.ToAggregate())
	}
	hcpv1alpha1.SetObjectDefaults_NodePool(np)
	return np
}
