package conversion

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// Realistic requests (CONTRACT.md: a version such as 4.20, stable, a real location, replicas or
// autoScaling) with every field 2026-09-01-preview has set.
const (
	testSub       = "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	testRGID      = "/subscriptions/" + testSub + "/resourceGroups/Dev-RG"
	testClusterID = testRGID + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Dev-Cluster"
	testPoolID    = testClusterID + "/nodePools/Workers"
	testUAI       = testRGID + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
	testVNet      = testRGID + "/providers/Microsoft.Network/virtualNetworks/vnet/subnets/"

	testSystemData = `{"createdBy":"alice@example.com","createdByType":"User","createdAt":"2026-12-01T10:00:00Z",` +
		`"lastModifiedBy":"alice@example.com","lastModifiedByType":"User","lastModifiedAt":"2026-12-01T10:00:00Z"}`
)

const fullClusterBody = `{
  "location": "eastus",
  "tags": {"env": "dev", "Team": "ARO"},
  "identity": {
    "type": "UserAssigned",
    "userAssignedIdentities": {
      "` + testUAI + `cp-ingress": {},
      "` + testUAI + `service": {}
    }
  },
  "properties": {
    "version": {"id": "4.20", "channelGroup": "stable"},
    "dns": {"baseDomainPrefix": "dev"},
    "network": {"networkType": "OVNKubernetes", "podCidr": "10.128.0.0/14", "serviceCidr": "172.30.0.0/16", "machineCidr": "10.0.0.0/16", "hostPrefix": 23},
    "api": {"visibility": "Public", "authorizedCidrs": ["203.0.113.0/24"]},
    "ingress": {"type": "Private"},
    "platform": {
      "managedResourceGroup": "dev-cluster-managed",
      "subnetId": "` + testVNet + `workers",
      "vnetIntegrationSubnetId": "` + testVNet + `integration",
      "outboundType": "LoadBalancer",
      "networkSecurityGroupId": "` + testRGID + `/providers/Microsoft.Network/networkSecurityGroups/nsg",
      "operatorsAuthentication": {
        "userAssignedIdentities": {
          "controlPlaneOperators": {"ingress": "` + testUAI + `cp-ingress"},
          "dataPlaneOperators": {"disk-csi-driver": "` + testUAI + `dp-disk"},
          "serviceManagedIdentity": "` + testUAI + `service"
        }
      }
    },
    "autoscaling": {"maxNodesTotal": 100, "maxPodGracePeriodSeconds": 300, "maxNodeProvisionTimeSeconds": 600, "podPriorityThreshold": -5},
    "etcd": {"dataEncryption": {"keyManagementMode": "CustomerManaged", "customerManaged": {"encryptionType": "KMS",
      "kms": {"vaultName": "dev-vault", "visibility": "Public", "activeKey": {"name": "etcd-key", "version": "v1"}}}}},
    "imageDigestMirrors": [{"source": "quay.io/openshift-release-dev", "mirrors": ["mirror.example.com/ocp"]}],
    "nodeDrainTimeoutMinutes": 30,
    "clusterImageRegistry": {"state": "Enabled"},
    "cryptoRestrictions": "FIPS"
  }
}`

const fullNodePoolBody = `{
  "location": "eastus",
  "tags": {"pool": "workers"},
  "properties": {
    "version": {"id": "4.20.8", "channelGroup": "stable"},
    "platform": {
      "subnetId": "` + testVNet + `workers",
      "vmSize": "Standard_D8s_v3",
      "enableEncryptionAtHost": true,
      "osDisk": {"sizeGiB": 128, "diskStorageAccountType": "Premium_LRS",
        "encryptionSetId": "` + testRGID + `/providers/Microsoft.Compute/diskEncryptionSets/des", "diskType": "Ephemeral"},
      "availabilityZone": "1"
    },
    "autoRepair": true,
    "autoScaling": {"min": 2, "max": 6},
    "labels": [{"key": "tier", "value": "web"}],
    "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
    "nodeDrainTimeoutMinutes": 15
  }
}`

var testTime = metav1.Date(2026, 12, 1, 11, 0, 0, 0, metav1.Now().UTC().Location())

// createCluster creates a cluster from body in v, with the API's defaults, as the server stores it.
func createCluster(t *testing.T, v APIVersion, body string) *hcpv1alpha1.HCPCluster {
	t.Helper()
	c, errs := ClusterFromARM(Request{APIVersion: v, ResourceID: testClusterID, Body: []byte(body), SystemData: testSystemData}, nil)
	if len(errs) > 0 {
		t.Fatalf("creating the cluster in %s: %v", v, errs)
	}
	hcpv1alpha1.SetObjectDefaults_HCPCluster(c)
	return c
}

func createNodePool(t *testing.T, v APIVersion, body string) *hcpv1alpha1.NodePool {
	t.Helper()
	np, errs := NodePoolFromARM(Request{APIVersion: v, ResourceID: testPoolID, Body: []byte(body), SystemData: testSystemData}, nil)
	if len(errs) > 0 {
		t.Fatalf("creating the node pool in %s: %v", v, errs)
	}
	hcpv1alpha1.SetObjectDefaults_NodePool(np)
	return np
}

// withClusterStatus gives c what a provisioned cluster's status reports.
func withClusterStatus(c *hcpv1alpha1.HCPCluster) *hcpv1alpha1.HCPCluster {
	c.Status = hcpv1alpha1.HCPClusterStatus{
		ProvisioningState: hcpv1alpha1.ProvisioningStateSucceeded,
		Conditions: []metav1.Condition{
			{Type: hcpv1alpha1.ConditionPlaced, Status: metav1.ConditionTrue, Reason: "Placed", LastTransitionTime: testTime},
			{Type: hcpv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "AsExpected", Message: "The control plane is available", LastTransitionTime: testTime},
			{Type: hcpv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: testTime},
			{Type: hcpv1alpha1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: testTime},
		},
		ClusterID: "2c9d5a0e-8a1f-4c55-9b0f-0d6e7f1a2b3c",
		API:       hcpv1alpha1.EndpointStatus{URL: "https://api.dev.abcd.eastus.aroapp.io:6443"},
		Console:   hcpv1alpha1.EndpointStatus{URL: "https://console-openshift-console.apps.dev.abcd.eastus.aroapp.io"},
		IssuerURL: "https://oidc.eastus.aroapp.io/2c9d5a0e-8a1f-4c55-9b0f-0d6e7f1a2b3c",
	}
	if c.Spec.Identity == nil {
		return c
	}
	for id, uai := range c.Spec.Identity.UserAssignedIdentities {
		uai.PrincipalID, uai.ClientID = "11111111-2222-4333-8444-555555555555", "66666666-7777-4888-9999-000000000000"
		c.Spec.Identity.UserAssignedIdentities[id] = uai
	}
	return c
}

func withNodePoolStatus(np *hcpv1alpha1.NodePool) *hcpv1alpha1.NodePool {
	np.Status = hcpv1alpha1.NodePoolStatus{
		ProvisioningState: hcpv1alpha1.ProvisioningStateSucceeded,
		Conditions: []metav1.Condition{
			{Type: hcpv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "NodesReady", LastTransitionTime: testTime},
			{Type: hcpv1alpha1.ConditionDelivered, Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: testTime},
		},
		Replicas: 2,
		Version:  "4.20.8",
	}
	return np
}

func clusterJSON(t *testing.T, v APIVersion, c *hcpv1alpha1.HCPCluster) []byte {
	t.Helper()
	out, err := ClusterToARM(v, c)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func nodePoolJSON(t *testing.T, v APIVersion, np *hcpv1alpha1.NodePool) []byte {
	t.Helper()
	out, err := NodePoolToARM(v, np)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
