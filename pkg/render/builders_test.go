package render_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const (
	releaseImage     = "quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64"
	poolReleaseImage = "quay.io/openshift-release-dev/ocp-release:4.20.7-x86_64"
	tenantID         = "00000000-0000-0000-0000-0000000000aa"
)

// controlPlaneOperators are ARO HCP's control plane operator identities, and the HyperShift
// identity each becomes.
var controlPlaneOperators = map[string]string{
	"cloud-controller-manager": "cloudProvider",
	"cluster-api-azure":        "nodePoolManagement",
	"control-plane":            "controlPlaneOperator",
	"image-registry":           "imageRegistry",
	"ingress":                  "ingress",
	"cloud-network-config":     "network",
	"disk-csi-driver":          "disk",
	"file-csi-driver":          "file",
	"kms":                      "",
}

var dataPlaneOperators = []string{"image-registry", "disk-csi-driver", "file-csi-driver"}

// minimalCluster is the fixture cluster with the cluster ID the service gives it on create.
func minimalCluster(namespace, name, clusterID string) *v1alpha1.HCPCluster {
	c := fixtures.HCPCluster(namespace, name)
	c.Status.ClusterID = clusterID
	return c
}

// fullCluster sets every field of the API that rendering reads, away from the defaults.
func fullCluster(namespace, name, clusterID string) *v1alpha1.HCPCluster {
	c := minimalCluster(namespace, name, clusterID)
	spec := &c.Spec
	spec.Azure.TenantID = tenantID
	spec.Version = v1alpha1.VersionProfile{ID: "4.20", ChannelGroup: "fast"}
	spec.DNS.BaseDomainPrefix = "full"
	spec.Network = v1alpha1.NetworkProfile{
		NetworkType: "Other",
		PodCIDR:     "10.132.0.0/14",
		ServiceCIDR: "172.31.0.0/16",
		MachineCIDR: "10.1.0.0/16",
		HostPrefix:  24,
	}
	spec.API = v1alpha1.APIProfile{Visibility: "Private", AuthorizedCIDRs: []string{"192.0.2.7", "198.51.100.0/24"}}
	spec.Ingress.Type = "Private"

	ids := &spec.Platform.OperatorsAuthentication.UserAssignedIdentities
	ids.ControlPlaneOperators = map[string]string{}
	ids.DataPlaneOperators = map[string]string{}
	spec.Identity = &v1alpha1.ManagedServiceIdentity{Type: "UserAssigned", UserAssignedIdentities: map[string]v1alpha1.UserAssignedIdentity{}}
	i := 0
	assign := func(operators map[string]string, operator, plane string) {
		i++
		id := fixtures.ARMID("Microsoft.ManagedIdentity/userAssignedIdentities", plane+"-"+operator)
		operators[operator] = id
		spec.Identity.UserAssignedIdentities[id] = v1alpha1.UserAssignedIdentity{ClientID: clientID(plane, operator), PrincipalID: fmt.Sprintf("00000000-0000-0000-0001-%012d", i)}
	}
	for operator := range controlPlaneOperators {
		assign(ids.ControlPlaneOperators, operator, "cp")
	}
	for _, operator := range dataPlaneOperators {
		assign(ids.DataPlaneOperators, operator, "dp")
	}

	spec.Autoscaling = v1alpha1.ClusterAutoscalingProfile{
		MaxNodesTotal:               ptr.To[int32](100),
		MaxPodGracePeriodSeconds:    ptr.To[int32](300),
		MaxNodeProvisionTimeSeconds: ptr.To[int32](600),
		PodPriorityThreshold:        ptr.To[int32](-5),
	}
	spec.Etcd.DataEncryption = &v1alpha1.EtcdDataEncryptionProfile{
		KeyManagementMode: "CustomerManaged",
		CustomerManaged: &v1alpha1.CustomerManagedEncryptionProfile{
			KMS: &v1alpha1.KMSEncryptionProfile{
				VaultName:  "customer-kv",
				Visibility: "Private",
				ActiveKey:  v1alpha1.KMSKey{Name: "etcd", Version: "0123456789abcdef"},
			},
		},
	}
	spec.ImageDigestMirrors = []v1alpha1.ImageDigestMirror{
		{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"mirror.example.com/ocp-release"}},
		{Source: "registry.redhat.io", Mirrors: []string{"mirror.example.com/redhat", "backup.example.com/redhat"}},
	}
	spec.NodeDrainTimeoutMinutes = ptr.To[int32](30)
	spec.ClusterImageRegistry.State = "Disabled"
	spec.CryptoRestrictions = "FIPS"
	return c
}

// clientID makes a distinct, recognisable client ID for each identity.
func clientID(plane, operator string) string {
	n := 0
	for _, r := range plane + operator {
		n = n*31 + int(r)
	}
	return fmt.Sprintf("11111111-2222-3333-4444-%012x", uint64(n)%(1<<48))
}

// fullNodePool sets every field of the API that rendering reads, away from the defaults:
// autoscaled, its own subnet and disk encryption, config and tuning documents.
func fullNodePool(t *testing.T, c *v1alpha1.HCPCluster, pool string) *v1alpha1.NodePool {
	np := fixtures.NodePool(c.Namespace, c.Name, pool)
	spec := &np.Spec
	spec.Replicas = nil
	spec.AutoScaling = &v1alpha1.NodePoolAutoScaling{Min: 1, Max: 5}
	spec.Platform = v1alpha1.NodePoolPlatformProfile{
		SubnetID:               fixtures.ARMID("Microsoft.Network/virtualNetworks", "vnet/subnets/"+pool),
		VMSize:                 "Standard_D16s_v5",
		EnableEncryptionAtHost: true,
		OSDisk: v1alpha1.OSDiskProfile{
			SizeGiB:                256,
			DiskStorageAccountType: "StandardSSD_LRS",
			EncryptionSetID:        fixtures.ARMID("Microsoft.Compute/diskEncryptionSets", "des"),
			DiskType:               "Ephemeral",
		},
		AvailabilityZone: "2",
	}
	spec.AutoRepair = ptr.To(false)
	spec.Labels = map[string]string{"node-role.kubernetes.io/gpu": "", "example.com/team": "ml"}
	spec.Taints = []v1alpha1.Taint{
		{Key: "example.com/gpu", Value: "true", Effect: "NoSchedule"},
		{Key: "example.com/dedicated", Effect: "PreferNoSchedule"},
	}
	spec.UpgradeType = "InPlace"
	spec.Config = []runtime.RawExtension{
		rawDocument(t, machineConfig("99-worker-ssh")),
		rawDocument(t, map[string]any{
			"apiVersion": "machineconfiguration.openshift.io/v1",
			"kind":       "KubeletConfig",
			"metadata":   map[string]any{"name": "max-pods"},
			"spec":       map[string]any{"kubeletConfig": map[string]any{"maxPods": 300}},
		}),
	}
	spec.TuningConfig = []runtime.RawExtension{rawDocument(t, map[string]any{
		"apiVersion": "tuned.openshift.io/v1",
		"kind":       "Tuned",
		"metadata":   map[string]any{"name": "hugepages", "namespace": "openshift-cluster-node-tuning-operator"},
		"spec": map[string]any{
			"profile":   []any{map[string]any{"name": "hugepages", "data": "[main]\ninclude=openshift-node\n[bootloader]\ncmdline_openshift_node_hugepages=hugepagesz=2M hugepages=50\n"}},
			"recommend": []any{map[string]any{"priority": 20, "profile": "hugepages"}},
		},
	})}
	return np
}

func machineConfig(name string) map[string]any {
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "MachineConfig",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{"machineconfiguration.openshift.io/role": "worker"}},
		"spec": map[string]any{
			"config": map[string]any{
				"ignition": map[string]any{"version": "3.2.0"},
				"passwd":   map[string]any{"users": []any{map[string]any{"name": "core", "sshAuthorizedKeys": []any{"ssh-ed25519 AAAA example"}}}},
			},
		},
	}
}

// rawDocument is a document as the API server hands it over: JSON bytes.
func rawDocument(t *testing.T, doc map[string]any) runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: raw}
}
