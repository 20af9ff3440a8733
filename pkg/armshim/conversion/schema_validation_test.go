package conversion

import (
	"regexp"
	"strings"
	"testing"
)

// TestResponsesValidateAgainstOpenAPI checks every body the conversion produces for a fully
// populated cluster, node pool and external auth against the OpenAPI document of its api-version.
func TestResponsesValidateAgainstOpenAPI(t *testing.T) {
	cluster := withClusterStatus(createCluster(t, V20260901Preview, fullClusterBody))
	pool := withNodePoolStatus(createNodePool(t, V20260901Preview, fullNodePoolBody))
	auth := withExternalAuthStatus(createExternalAuth(t, V20260901Preview, fullExternalAuthBody))
	for _, v := range APIVersions {
		t.Run(string(v), func(t *testing.T) {
			if err := validateAgainst(t, v, "HcpOpenShiftCluster", clusterJSON(t, v, cluster)); err != nil {
				t.Errorf("cluster: %v\n%s", err, clusterJSON(t, v, cluster))
			}
			if err := validateAgainst(t, v, "NodePool", nodePoolJSON(t, v, pool)); err != nil {
				t.Errorf("node pool: %v\n%s", err, nodePoolJSON(t, v, pool))
			}
			if err := validateAgainst(t, v, "ExternalAuth", externalAuthJSON(t, v, auth)); err != nil {
				t.Errorf("external auth: %v\n%s", err, externalAuthJSON(t, v, auth))
			}
		})
	}
}

// TestValidatorRefusesWhatTheDocumentsForbid makes sure the validation above can fail: a body out of
// the schema, and a field of a newer version where its document has it required elsewhere.
func TestValidatorRefusesWhatTheDocumentsForbid(t *testing.T) {
	cluster := withClusterStatus(createCluster(t, V20260901Preview, fullClusterBody))
	good := string(clusterJSON(t, V20260901Preview, cluster))
	for name, body := range map[string]string{
		"unknown provisioning state": strings.Replace(good, `"provisioningState": "Succeeded"`, `"provisioningState": "Bogus"`, 1),
		"host prefix as a string":    strings.Replace(good, `"hostPrefix": 23`, `"hostPrefix": "23"`, 1),
		"no location":                strings.Replace(good, `"location": "eastus",`, ``, 1),
	} {
		if body == good {
			t.Fatalf("%s: the test did not change the body", name)
		}
		if err := validateAgainst(t, V20260901Preview, "HcpOpenShiftCluster", []byte(body)); err == nil {
			t.Errorf("%s: the validator accepted it", name)
		}
	}
	// 2024-06-10-preview keeps the vault name in activeKey, where it is required.
	old := string(clusterJSON(t, V20240610Preview, cluster))
	moved := regexp.MustCompile(`,\s*"vaultName": "dev-vault"`).ReplaceAllString(old, "")
	if moved == old {
		t.Fatalf("no vault name in the 2024-06-10-preview body:\n%s", old)
	}
	if err := validateAgainst(t, V20240610Preview, "HcpOpenShiftCluster", []byte(moved)); err == nil {
		t.Error("a 2024-06-10-preview key without its vault name passed validation")
	}
}
