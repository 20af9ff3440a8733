package validation

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// validNodePool is a defaulted node pool that sets every optional field.
func validNodePool() *hcp.NodePool {
	return &hcp.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cluster.workers", Namespace: "team-a", ResourceVersion: "1"},
		Spec: hcp.NodePoolSpec{
			ClusterName: "my-cluster",
			Version:     hcp.VersionProfile{ID: "4.20.8", ChannelGroup: "stable"},
			Platform: hcp.NodePoolPlatformProfile{
				SubnetID:               subnetID(testSubscription, "workers"),
				VMSize:                 "Standard_D8s_v3",
				EnableEncryptionAtHost: true,
				OSDisk: hcp.OSDiskProfile{
					SizeGiB:                128,
					DiskStorageAccountType: "Premium_LRS",
					EncryptionSetID:        armID(testSubscription, "disks-rg", "Microsoft.Compute/diskEncryptionSets/des"),
					DiskType:               "Managed",
				},
				AvailabilityZone: "1",
			},
			Replicas:                ptr.To[int32](3),
			AutoRepair:              ptr.To(true),
			Labels:                  map[string]string{"node-role.kubernetes.io/infra": ""},
			Taints:                  []hcp.Taint{{Key: "example.com/dedicated", Value: "infra", Effect: "NoSchedule"}},
			NodeDrainTimeoutMinutes: ptr.To[int32](30),
			UpgradeType:             "Replace",
			Config: []runtime.RawExtension{
				document("machineconfiguration.openshift.io/v1", "MachineConfig", "99-worker-ssh"),
				document("machineconfiguration.openshift.io/v1", "KubeletConfig", "max-pods"),
			},
			TuningConfig: []runtime.RawExtension{document("tuned.openshift.io/v1", "Tuned", "hugepages")},
		},
	}
}

func document(apiVersion, kind, name string) runtime.RawExtension {
	return runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q},"spec":{}}`, apiVersion, kind, name))}
}

func documents(n int) []runtime.RawExtension {
	docs := make([]runtime.RawExtension, n)
	for i := range docs {
		docs[i] = document("machineconfiguration.openshift.io/v1", "MachineConfig", fmt.Sprintf("mc-%d", i))
	}
	return docs
}

func TestValidateNodePool(t *testing.T) {
	// A document sent as CBOR arrives as the API server's CBOR decoder leaves it.
	cborBytes, err := direct.Marshal(map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "ContainerRuntimeConfig", "metadata": map[string]any{"name": "crio"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var cborDocument runtime.RawExtension
	if err := cborDocument.UnmarshalCBOR(cborBytes); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(np *hcp.NodePool)
		want   []wantErr
	}{
		{name: "valid", mutate: func(np *hcp.NodePool) {}},
		{name: "valid without optional fields", mutate: func(np *hcp.NodePool) {
			np.Spec.Version = hcp.VersionProfile{}
			np.Spec.Platform.SubnetID = ""
			np.Spec.Platform.OSDisk.EncryptionSetID = ""
			np.Spec.Platform.AvailabilityZone = ""
			np.Spec.Labels, np.Spec.Taints, np.Spec.NodeDrainTimeoutMinutes = nil, nil, nil
			np.Spec.Config, np.Spec.TuningConfig = nil, nil
		}},

		// metadata
		{name: "pool name alone", mutate: func(np *hcp.NodePool) { np.Name = "workers" }},
		{name: "15 character pool name", mutate: func(np *hcp.NodePool) { np.Name = "my-cluster.w" + strings.Repeat("0", 14) }},
		{name: "16 character pool name", mutate: func(np *hcp.NodePool) { np.Name = "my-cluster.w" + strings.Repeat("0", 15) }, want: []wantErr{invalid("metadata.name")}},
		{name: "name of another cluster", mutate: func(np *hcp.NodePool) { np.Name = "other.workers" }, want: []wantErr{invalid("metadata.name")}},
		{name: "pool name starts with a digit", mutate: func(np *hcp.NodePool) { np.Name = "1workers" }, want: []wantErr{invalid("metadata.name")}},
		{name: "two periods", mutate: func(np *hcp.NodePool) { np.Name = "my-cluster.workers.a" }, want: []wantErr{invalid("metadata.name")}},
		{name: "upper case name", mutate: func(np *hcp.NodePool) { np.Name = "Workers" }, want: []wantErr{invalid("metadata.name")}},
		{name: "name starts with a period", mutate: func(np *hcp.NodePool) { np.Name, np.Spec.ClusterName = ".workers", "" }, want: []wantErr{
			invalid("metadata.name"), required("spec.clusterName"),
		}},

		// cluster name and version
		{name: "no cluster name", mutate: func(np *hcp.NodePool) { np.Name, np.Spec.ClusterName = "workers", "" }, want: []wantErr{required("spec.clusterName")}},
		{name: "invalid cluster name", mutate: func(np *hcp.NodePool) { np.Name, np.Spec.ClusterName = "workers", "My_Cluster" }, want: []wantErr{invalid("spec.clusterName")}},
		{name: "cluster name too long", mutate: func(np *hcp.NodePool) { np.Name, np.Spec.ClusterName = "workers", "c"+strings.Repeat("0", 54) }, want: []wantErr{tooLong("spec.clusterName")}},
		{name: "release candidate", mutate: func(np *hcp.NodePool) {
			np.Spec.Version = hcp.VersionProfile{ID: "4.21.0-rc.1", ChannelGroup: "candidate"}
		}},
		{name: "version without patch", mutate: func(np *hcp.NodePool) { np.Spec.Version.ID = "4.20" }, want: []wantErr{invalid("spec.version.id")}},
		{name: "version with a v", mutate: func(np *hcp.NodePool) { np.Spec.Version.ID = "v4.20.8" }, want: []wantErr{invalid("spec.version.id")}},
		{name: "unknown channel group", mutate: func(np *hcp.NodePool) { np.Spec.Version.ChannelGroup = "eus" }, want: []wantErr{notSupported("spec.version.channelGroup")}},

		// platform
		{name: "no VM size", mutate: func(np *hcp.NodePool) { np.Spec.Platform.VMSize = "" }, want: []wantErr{required("spec.platform.vmSize")}},
		{name: "VM size with a space", mutate: func(np *hcp.NodePool) { np.Spec.Platform.VMSize = "Standard D8s" }, want: []wantErr{invalid("spec.platform.vmSize")}},
		{name: "subnet in another subscription", mutate: func(np *hcp.NodePool) { np.Spec.Platform.SubnetID = subnetID(otherSubscription, "workers") }},
		{name: "subnet not a subnet", mutate: func(np *hcp.NodePool) { np.Spec.Platform.SubnetID = identityID("x") }, want: []wantErr{invalid("spec.platform.subnetID")}},
		{name: "64 GiB disk", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.SizeGiB = 64 }},
		{name: "63 GiB disk", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.SizeGiB = 63 }, want: []wantErr{invalid("spec.platform.osDisk.sizeGiB")}},
		{name: "4096 GiB disk", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.SizeGiB = 4096 }, want: []wantErr{invalid("spec.platform.osDisk.sizeGiB")}},
		{name: "unknown storage account type", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.DiskStorageAccountType = "UltraSSD_LRS" }, want: []wantErr{notSupported("spec.platform.osDisk.diskStorageAccountType")}},
		{name: "ephemeral disk", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.DiskType = "Ephemeral" }},
		{name: "unknown disk type", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.DiskType = "Local" }, want: []wantErr{notSupported("spec.platform.osDisk.diskType")}},
		{name: "encryption set not an ID", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.EncryptionSetID = "des" }, want: []wantErr{invalid("spec.platform.osDisk.encryptionSetID")}},
		{name: "unknown zone", mutate: func(np *hcp.NodePool) { np.Spec.Platform.AvailabilityZone = "4" }, want: []wantErr{notSupported("spec.platform.availabilityZone")}},
		{name: "zone with region", mutate: func(np *hcp.NodePool) { np.Spec.Platform.AvailabilityZone = "eastus-1" }, want: []wantErr{notSupported("spec.platform.availabilityZone")}},

		// scaling
		{name: "no nodes", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = ptr.To[int32](0) }},
		{name: "500 nodes", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = ptr.To[int32](500) }},
		{name: "501 nodes", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = ptr.To[int32](501) }, want: []wantErr{invalid("spec.replicas")}},
		{name: "negative replicas", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.replicas")}},
		{name: "neither replicas nor autoscaling", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = nil }, want: []wantErr{required("spec.replicas")}},
		{name: "replicas and autoscaling", mutate: func(np *hcp.NodePool) { np.Spec.AutoScaling = &hcp.NodePoolAutoScaling{Min: 1, Max: 3} }, want: []wantErr{invalid("spec.replicas")}},
		{name: "201 nodes spread over the region", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.Platform.AvailabilityZone = ptr.To[int32](201), ""
		}, want: []wantErr{invalid("spec.replicas")}},
		{name: "201 nodes in one zone", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.Platform.AvailabilityZone = ptr.To[int32](201), "1"
		}},
		{name: "replicas 0 and autoscaling", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = ptr.To[int32](0), &hcp.NodePoolAutoScaling{Min: 1, Max: 3}
		}, want: []wantErr{forbidden("spec.replicas")}},
		{name: "autoscaling from 0", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 0, Max: 1}
		}},
		{name: "autoscaling to 500", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 500, Max: 500}
		}},
		{name: "negative min", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: -1, Max: 3}
		}, want: []wantErr{invalid("spec.autoScaling.min")}},
		{name: "max below min", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 3, Max: 2}
		}, want: []wantErr{invalid("spec.autoScaling.max")}},
		{name: "max 0", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 0, Max: 0}
		}, want: []wantErr{invalid("spec.autoScaling.max")}},
		{name: "max 501", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 1, Max: 501}
		}, want: []wantErr{invalid("spec.autoScaling.max")}},

		// labels and taints
		{name: "invalid label key", mutate: func(np *hcp.NodePool) { np.Spec.Labels["bad key"] = "x" }, want: []wantErr{invalid("spec.labels")}},
		{name: "invalid label value", mutate: func(np *hcp.NodePool) { np.Spec.Labels["tier"] = "a b" }, want: []wantErr{invalid("spec.labels")}},
		{name: "taint without value", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Value = "" }},
		{name: "taint without key", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Key = "" }, want: []wantErr{required("spec.taints[0].key")}},
		{name: "invalid taint key", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Key = "example.com/bad key" }, want: []wantErr{invalid("spec.taints[0].key")}},
		{name: "taint key too long", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Key = strings.Repeat("k", 64) }, want: []wantErr{invalid("spec.taints[0].key")}},
		{name: "taint value too long", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Value = strings.Repeat("v", 64) }, want: []wantErr{invalid("spec.taints[0].value")}},
		{name: "no taint effect", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Effect = "" }, want: []wantErr{required("spec.taints[0].effect")}},
		{name: "unknown taint effect", mutate: func(np *hcp.NodePool) { np.Spec.Taints[0].Effect = "NoEvict" }, want: []wantErr{notSupported("spec.taints[0].effect")}},
		{name: "same key, other effect", mutate: func(np *hcp.NodePool) {
			np.Spec.Taints = append(np.Spec.Taints, hcp.Taint{Key: "example.com/dedicated", Value: "other", Effect: "NoExecute"})
		}},
		{name: "same key and effect", mutate: func(np *hcp.NodePool) {
			np.Spec.Taints = append(np.Spec.Taints, hcp.Taint{Key: "example.com/dedicated", Value: "other", Effect: "NoSchedule"})
		}, want: []wantErr{duplicate("spec.taints[1]")}},

		// the rest of the spec
		{name: "drain timeout over a week", mutate: func(np *hcp.NodePool) { np.Spec.NodeDrainTimeoutMinutes = ptr.To[int32](10081) }, want: []wantErr{invalid("spec.nodeDrainTimeoutMinutes")}},
		{name: "negative drain timeout", mutate: func(np *hcp.NodePool) { np.Spec.NodeDrainTimeoutMinutes = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.nodeDrainTimeoutMinutes")}},
		{name: "in-place upgrades", mutate: func(np *hcp.NodePool) { np.Spec.UpgradeType = "InPlace" }},
		{name: "unknown upgrade type", mutate: func(np *hcp.NodePool) { np.Spec.UpgradeType = "Rolling" }, want: []wantErr{notSupported("spec.upgradeType")}},

		// config and tuningConfig
		{name: "every config kind", mutate: func(np *hcp.NodePool) {
			np.Spec.Config = []runtime.RawExtension{
				document("machineconfiguration.openshift.io/v1", "MachineConfig", "a"),
				document("machineconfiguration.openshift.io/v1", "KubeletConfig", "b"),
				document("machineconfiguration.openshift.io/v1", "ContainerRuntimeConfig", "c"),
				document("config.openshift.io/v1", "ImageDigestMirrorSet", "d"),
			}
			np.Spec.TuningConfig = []runtime.RawExtension{
				document("tuned.openshift.io/v1", "Tuned", "a"),
				document("performance.openshift.io/v2", "PerformanceProfile", "b"),
			}
		}},
		{name: "CBOR document", mutate: func(np *hcp.NodePool) { np.Spec.Config = []runtime.RawExtension{cborDocument} }},
		{name: "10 config documents", mutate: func(np *hcp.NodePool) { np.Spec.Config = documents(10) }},
		{name: "11 config documents", mutate: func(np *hcp.NodePool) { np.Spec.Config = documents(11) }, want: []wantErr{tooMany("spec.config")}},
		{name: "config not an object", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = runtime.RawExtension{Raw: []byte(`["MachineConfig"]`)} }, want: []wantErr{invalid("spec.config[1]")}},
		{name: "config not JSON", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = runtime.RawExtension{Raw: []byte(`{kind: MachineConfig}`)} }, want: []wantErr{invalid("spec.config[1]")}},
		{name: "config 100 levels deep", mutate: func(np *hcp.NodePool) {
			np.Spec.Config[1] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"deep"},"spec":` +
				strings.Repeat("[", 99) + strings.Repeat("]", 99) + `}`)}
		}},
		{name: "config 101 levels deep", mutate: func(np *hcp.NodePool) {
			np.Spec.Config[1] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"deep"},"spec":` +
				strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)}
		}, want: []wantErr{invalid("spec.config[1]")}},
		{name: "tuning document over 256 KiB", mutate: func(np *hcp.NodePool) {
			np.Spec.TuningConfig[0] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"tuned.openshift.io/v1","kind":"Tuned","metadata":{"name":"big"},"spec":"` +
				strings.Repeat("x", MaxConfigDocumentBytes) + `"}`)}
		}, want: []wantErr{invalid("spec.tuningConfig[0]")}},
		{name: "empty config document", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = runtime.RawExtension{} }, want: []wantErr{invalid("spec.config[1]")}},
		{name: "config without kind", mutate: func(np *hcp.NodePool) {
			np.Spec.Config[1] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","metadata":{"name":"x"}}`)}
		}, want: []wantErr{required("spec.config[1].kind")}},
		{name: "kind in the wrong case", mutate: func(np *hcp.NodePool) {
			np.Spec.Config[1] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","Kind":"MachineConfig","metadata":{"name":"x"}}`)}
		}, want: []wantErr{required("spec.config[1].kind")}},
		{name: "config of another kind", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = document("v1", "ConfigMap", "x") }, want: []wantErr{notSupported("spec.config[1].kind")}},
		{name: "tuning document in config", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = document("tuned.openshift.io/v1", "Tuned", "x") }, want: []wantErr{notSupported("spec.config[1].kind")}},
		{name: "config without apiVersion", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = document("", "MachineConfig", "x") }, want: []wantErr{required("spec.config[1].apiVersion")}},
		{name: "malformed apiVersion", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = document("a/b/c", "MachineConfig", "x") }, want: []wantErr{invalid("spec.config[1].apiVersion")}},
		{name: "kind in the wrong group", mutate: func(np *hcp.NodePool) { np.Spec.Config[1] = document("config.openshift.io/v1", "MachineConfig", "x") }, want: []wantErr{invalid("spec.config[1].apiVersion")}},
		{name: "config without name", mutate: func(np *hcp.NodePool) {
			np.Spec.Config[1] = document("machineconfiguration.openshift.io/v1", "KubeletConfig", "")
		}, want: []wantErr{required("spec.config[1].metadata.name")}},
		{name: "duplicate config name", mutate: func(np *hcp.NodePool) {
			np.Spec.Config[1] = document("machineconfiguration.openshift.io/v1", "KubeletConfig", "99-worker-ssh")
		}, want: []wantErr{duplicate("spec.config[1].metadata.name")}},
		{name: "same name in config and tuningConfig", mutate: func(np *hcp.NodePool) {
			np.Spec.TuningConfig[0] = document("tuned.openshift.io/v1", "Tuned", "99-worker-ssh")
		}},
		{name: "11 tuning documents", mutate: func(np *hcp.NodePool) {
			np.Spec.TuningConfig = make([]runtime.RawExtension, 11)
			for i := range np.Spec.TuningConfig {
				np.Spec.TuningConfig[i] = document("tuned.openshift.io/v1", "Tuned", fmt.Sprintf("t%d", i))
			}
		}, want: []wantErr{tooMany("spec.tuningConfig")}},
		{name: "machine config in tuningConfig", mutate: func(np *hcp.NodePool) {
			np.Spec.TuningConfig[0] = document("machineconfiguration.openshift.io/v1", "MachineConfig", "x")
		}, want: []wantErr{notSupported("spec.tuningConfig[0].kind")}},
		{name: "performance profile in the wrong group", mutate: func(np *hcp.NodePool) {
			np.Spec.TuningConfig[0] = document("tuned.openshift.io/v1", "PerformanceProfile", "x")
		}, want: []wantErr{invalid("spec.tuningConfig[0].apiVersion")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			np := validNodePool()
			tc.mutate(np)
			expectErrors(t, ValidateNodePool(np), tc.want...)
		})
	}
}

func TestValidateNodePoolMessages(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(np *hcp.NodePool)
		want   []string
	}{
		{"taint effects", func(np *hcp.NodePool) { np.Spec.Taints[0].Effect = "NoEvict" }, []string{`"NoSchedule", "PreferNoSchedule", "NoExecute"`}},
		{"disk storage", func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.DiskStorageAccountType = "x" }, []string{`"Premium_LRS", "StandardSSD_LRS", "Standard_LRS"`}},
		{"config kinds", func(np *hcp.NodePool) { np.Spec.Config[0] = document("v1", "Secret", "x") },
			[]string{`"MachineConfig", "KubeletConfig", "ContainerRuntimeConfig", "ImageDigestMirrorSet"`}},
		{"config group", func(np *hcp.NodePool) { np.Spec.Config[0] = document("example.com/v1", "ImageDigestMirrorSet", "x") },
			[]string{"config.openshift.io/v1"}},
		{"scaling", func(np *hcp.NodePool) { np.Spec.AutoScaling = &hcp.NodePoolAutoScaling{Min: 1, Max: 2} }, []string{"spec.replicas"}},
		{"pool name", func(np *hcp.NodePool) { np.Name = "other.workers" }, []string{`spec.clusterName is "my-cluster"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			np := validNodePool()
			tc.mutate(np)
			expectDetail(t, ValidateNodePool(np), tc.want...)
		})
	}
}

func TestValidateNodePoolUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(np *hcp.NodePool)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(np *hcp.NodePool) {}},
		{name: "version", mutate: func(np *hcp.NodePool) { np.Spec.Version.ID = "4.20.9" }},
		{name: "replicas", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = ptr.To[int32](5) }},
		{name: "replicas to autoscaling", mutate: func(np *hcp.NodePool) {
			np.Spec.Replicas, np.Spec.AutoScaling = nil, &hcp.NodePoolAutoScaling{Min: 1, Max: 5}
		}},
		{name: "labels and taints", mutate: func(np *hcp.NodePool) { np.Spec.Labels, np.Spec.Taints = nil, nil }},
		{name: "config", mutate: func(np *hcp.NodePool) { np.Spec.Config = documents(2) }},

		{name: "create rules still apply", mutate: func(np *hcp.NodePool) { np.Spec.Replicas = ptr.To[int32](-1) }, want: []wantErr{invalid("spec.replicas")}},
		{name: "cluster name", mutate: func(np *hcp.NodePool) { np.Name, np.Spec.ClusterName = "workers", "other" }, want: []wantErr{
			invalid("metadata.name"), invalid("spec.clusterName"),
		}},
		{name: "VM size", mutate: func(np *hcp.NodePool) { np.Spec.Platform.VMSize = "Standard_D16s_v3" }, want: []wantErr{invalid("spec.platform")}},
		{name: "disk size", mutate: func(np *hcp.NodePool) { np.Spec.Platform.OSDisk.SizeGiB = 256 }, want: []wantErr{invalid("spec.platform")}},
		{name: "auto repair", mutate: func(np *hcp.NodePool) { np.Spec.AutoRepair = ptr.To(false) }, want: []wantErr{invalid("spec.autoRepair")}},
		{name: "upgrade type", mutate: func(np *hcp.NodePool) { np.Spec.UpgradeType = "InPlace" }, want: []wantErr{invalid("spec.upgradeType")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldNP, newNP := validNodePool(), validNodePool()
			tc.mutate(newNP)
			expectErrors(t, ValidateNodePoolUpdate(newNP, oldNP), tc.want...)
		})
	}
}

func TestValidateNodePoolStatusUpdate(t *testing.T) {
	withStatus := func() *hcp.NodePool {
		np := validNodePool()
		np.Status = hcp.NodePoolStatus{
			ProvisioningState: hcp.ProvisioningStateSucceeded,
			Conditions:        []metav1.Condition{condition("Ready", metav1.ConditionTrue)},
			Replicas:          3,
			Version:           "4.20.8",
		}
		return np
	}
	tests := []struct {
		name   string
		mutate func(np *hcp.NodePool)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(np *hcp.NodePool) {}},
		{name: "scaled", mutate: func(np *hcp.NodePool) { np.Status.Replicas = 0 }},
		{name: "no state", mutate: func(np *hcp.NodePool) { np.Status.ProvisioningState = "" }},
		{name: "unknown state", mutate: func(np *hcp.NodePool) { np.Status.ProvisioningState = "Ready" }, want: []wantErr{notSupported("status.provisioningState")}},
		{name: "invalid condition status", mutate: func(np *hcp.NodePool) { np.Status.Conditions[0].Status = "Yes" }, want: []wantErr{notSupported("status.conditions[0].status")}},
		{name: "negative replicas", mutate: func(np *hcp.NodePool) { np.Status.Replicas = -1 }, want: []wantErr{invalid("status.replicas")}},
		{name: "negative observed generation", mutate: func(np *hcp.NodePool) { np.Status.ObservedGeneration = -1 }, want: []wantErr{invalid("status.observedGeneration")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldNP, newNP := withStatus(), withStatus()
			tc.mutate(newNP)
			expectErrors(t, ValidateNodePoolStatusUpdate(newNP, oldNP), tc.want...)
		})
	}
}
