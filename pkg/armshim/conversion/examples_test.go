package conversion

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// TestSpecExamples feeds the 2026-09-01-preview examples of the spec (shared/arm/examples-*) to the
// conversion: every body (PUT and PATCH requests, responses, list items) as a create and as an update
// of a full resource, without a panic. The PUT requests are schema-valid, so they must convert, and
// what they convert to must read back schema-valid; their values are semantically odd (CONTRACT.md's
// caveat), which is the API's validation's business, not the conversion's.
func TestSpecExamples(t *testing.T) {
	dir := filepath.Join(armDir(t), "examples-2026-09-01-preview")
	files, err := filepath.Glob(filepath.Join(dir, "*_MaximumSet_Gen.json"))
	if err != nil {
		t.Fatal(err)
	}
	existingCluster := withClusterStatus(createCluster(t, V20260901Preview, fullClusterBody))
	existingPool := withNodePoolStatus(createNodePool(t, V20260901Preview, fullNodePoolBody))
	existingAuth := withExternalAuthStatus(createExternalAuth(t, V20260901Preview, fullExternalAuthBody))
	seen := 0
	for _, file := range files {
		base := filepath.Base(file)
		cluster := strings.HasPrefix(base, "HcpOpenShiftClusters_")
		auth := strings.HasPrefix(base, "ExternalAuths_")
		if !cluster && !auth && !strings.HasPrefix(base, "NodePools_") {
			continue
		}
		var example struct {
			Parameters struct {
				Resource   json.RawMessage `json:"resource"`
				Properties json.RawMessage `json:"properties"`
			} `json:"parameters"`
			Responses map[string]struct {
				Body json.RawMessage `json:"body"`
			} `json:"responses"`
		}
		readJSON(t, file, &example)
		t.Run(base, func(t *testing.T) {
			bodies := []json.RawMessage{example.Parameters.Properties}
			for _, r := range example.Responses {
				var list struct{ Value []json.RawMessage }
				if json.Unmarshal(r.Body, &list) == nil && list.Value != nil {
					bodies = append(bodies, list.Value...)
				} else {
					bodies = append(bodies, r.Body)
				}
			}
			for _, body := range bodies {
				if len(body) == 0 || string(body) == "null" {
					continue
				}
				seen++
				for _, v := range APIVersions {
					switch {
					case cluster:
						_, _ = ClusterFromARM(Request{APIVersion: v, ResourceID: testClusterID, Body: body}, nil)
						_, _ = ClusterFromARM(Request{APIVersion: v, ResourceID: testClusterID, Body: body}, existingCluster)
					case auth:
						_, _ = ExternalAuthFromARM(Request{APIVersion: v, ResourceID: testAuthID, Body: body}, nil)
						_, _ = ExternalAuthFromARM(Request{APIVersion: v, ResourceID: testAuthID, Body: body}, existingAuth)
					default:
						_, _ = NodePoolFromARM(Request{APIVersion: v, ResourceID: testPoolID, Body: body}, nil)
						_, _ = NodePoolFromARM(Request{APIVersion: v, ResourceID: testPoolID, Body: body}, existingPool)
					}
				}
			}
			if len(example.Parameters.Resource) == 0 {
				return
			}
			seen++
			req := Request{APIVersion: V20260901Preview, Body: example.Parameters.Resource, SystemData: testSystemData}
			if cluster {
				req.ResourceID = testClusterID
				c, errs := ClusterFromARM(req, nil)
				if len(errs) > 0 {
					t.Fatalf("the example's PUT body does not convert: %v", errs)
				}
				// Read back once provisioned: the URLs are read-only but required.
				if err := validateAgainst(t, V20260901Preview, "HcpOpenShiftCluster", clusterJSON(t, V20260901Preview, withClusterStatus(c))); err != nil {
					t.Errorf("read back: %v", err)
				}
				return
			}
			if auth {
				req.ResourceID = testAuthID
				ea, errs := ExternalAuthFromARM(req, nil)
				if len(errs) > 0 {
					t.Fatalf("the example's PUT body does not convert: %v", errs)
				}
				// The generator fills an extensible enum with any string; the API refuses such a policy.
				if u := &ea.Spec.Claim.Mappings.Username; !slices.Contains([]hcpv1alpha1.UsernamePrefixPolicy{"None", "Prefix", "NoPrefix"}, u.PrefixPolicy) {
					u.PrefixPolicy = hcpv1alpha1.UsernamePrefixPolicyPrefix
				}
				if err := validateAgainst(t, V20260901Preview, "ExternalAuth", externalAuthJSON(t, V20260901Preview, ea)); err != nil {
					t.Errorf("read back: %v", err)
				}
				return
			}
			req.ResourceID = testPoolID
			np, errs := NodePoolFromARM(req, nil)
			if len(errs) > 0 {
				t.Fatalf("the example's PUT body does not convert: %v", errs)
			}
			if err := validateAgainst(t, V20260901Preview, "NodePool", nodePoolJSON(t, V20260901Preview, np)); err != nil {
				t.Errorf("read back: %v", err)
			}
		})
	}
	if seen == 0 {
		t.Fatalf("no cluster, node pool or external auth example in %s", dir)
	}
}
