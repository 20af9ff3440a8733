package render_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

var nodePoolFeedback = []string{
	render.FeedbackReady, render.FeedbackReadyMessage, render.FeedbackUpdatingVersion, render.FeedbackUpdatingConfig,
	render.FeedbackReplicas, render.FeedbackVersion, render.FeedbackGeneration, render.FeedbackObservedGeneration,
}

func TestNodePoolBundleWithDefaults(t *testing.T) {
	c := minimalCluster("customer", "minimal", clusterID)
	b, err := render.NodePoolBundle(c, fixtures.NodePool("customer", "minimal", "workers"), poolReleaseImage, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkBundleShape(t, b, []string{"NodePool"})
	checkFeedbackNames(t, b, map[int][]string{0: nodePoolFeedback})

	var np hyperv1.NodePool
	fromJSON(t, string(b.Manifests[0]), &np)
	if np.Name != "dev-workers" || np.Namespace != "ocm-dev-"+clusterID || np.Labels["api.openshift.com/id"] != clusterID {
		t.Errorf("NodePool %s/%s with labels %v, want ocm-dev-%s/dev-workers", np.Namespace, np.Name, np.Labels, clusterID)
	}
	want := `{"clusterName":"dev","release":{"image":"` + poolReleaseImage + `"},` +
		`"platform":{"type":"Azure","azure":{"vmSize":"Standard_D8s_v3","image":{"type":"AzureMarketplace","azureMarketplace":{"imageGeneration":"Gen2"}},` +
		`"osDisk":{"sizeGiB":64,"diskStorageAccountType":"Premium_LRS","persistence":"Persistent"},"encryptionAtHost":"Disabled",` +
		`"subnetID":"` + c.Spec.Platform.SubnetID + `"}},"replicas":3,"management":{"upgradeType":"Replace","autoRepair":true}}`
	if got := toJSON(t, np.Spec); got != want {
		t.Errorf("spec\n%s\nwant\n%s", got, want)
	}
}

func TestNodePoolBundleWithEverything(t *testing.T) {
	c := fullCluster("customer", "full", clusterID)
	pool := fullNodePool(t, c, "gpu")
	b, err := render.NodePoolBundle(c, pool, poolReleaseImage, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkBundleShape(t, b, []string{"ConfigMap", "ConfigMap", "ConfigMap", "NodePool"})
	checkFeedbackNames(t, b, map[int][]string{3: nodePoolFeedback})

	var np hyperv1.NodePool
	fromJSON(t, string(b.Manifests[3]), &np)
	if np.Name != "full-gpu" || np.Spec.ClusterName != "full" {
		t.Errorf("NodePool %s of cluster %s, want full-gpu of full", np.Name, np.Spec.ClusterName)
	}

	// One ConfigMap per document, in order, named after the pool and the content, holding the
	// document under the key HyperShift reads.
	var refs []string
	for _, r := range append(np.Spec.Config, np.Spec.TuningConfig...) {
		refs = append(refs, r.Name)
	}
	documents := append(append([]runtime.RawExtension{}, pool.Spec.Config...), pool.Spec.TuningConfig...)
	keys := []string{render.ConfigKey, render.ConfigKey, render.TuningKey}
	for i, key := range keys {
		var cm corev1.ConfigMap
		fromJSON(t, string(b.Manifests[i]), &cm)
		if cm.Name != refs[i] || !strings.HasPrefix(cm.Name, "full-gpu-"+key+"-") || cm.Namespace != np.Namespace {
			t.Errorf("ConfigMap %d is %s/%s, want %s, referred to by the NodePool as %q", i, cm.Namespace, cm.Name, key, refs[i])
		}
		if len(cm.Data) != 1 || cm.Data[key] != string(documents[i].Raw) {
			t.Errorf("ConfigMap %s holds %v, want the document under %q:\n%s", cm.Name, cm.Data, key, documents[i].Raw)
		}
	}
	if len(np.Spec.Config) != 2 || len(np.Spec.TuningConfig) != 1 {
		t.Errorf("config %v, tuning config %v; want the two MachineConfig-family ConfigMaps and the Tuned one", np.Spec.Config, np.Spec.TuningConfig)
	}

	spec := &np.Spec
	if spec.Replicas != nil || !apiequality.Semantic.DeepEqual(spec.AutoScaling, &hyperv1.NodePoolAutoScaling{Min: ptr.To[int32](1), Max: 5}) {
		t.Errorf("replicas %v, autoscaling %+v; want autoscaling from 1 to 5", spec.Replicas, spec.AutoScaling)
	}
	if spec.Management.UpgradeType != hyperv1.UpgradeTypeInPlace || spec.Management.AutoRepair {
		t.Errorf("management %+v, want InPlace without auto repair", spec.Management)
	}
	if spec.NodeDrainTimeout == nil || spec.NodeDrainTimeout.Duration != 30*time.Minute {
		t.Errorf("node drain timeout %v, want the cluster's 30 minutes", spec.NodeDrainTimeout)
	}
	if !apiequality.Semantic.DeepEqual(spec.NodeLabels, pool.Spec.Labels) {
		t.Errorf("node labels %v, want %v", spec.NodeLabels, pool.Spec.Labels)
	}
	wantTaints := []hyperv1.Taint{
		{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: "example.com/dedicated", Effect: corev1.TaintEffectPreferNoSchedule},
	}
	if !apiequality.Semantic.DeepEqual(spec.Taints, wantTaints) {
		t.Errorf("taints %+v, want %+v", spec.Taints, wantTaints)
	}
	wantAzure := &hyperv1.AzureNodePoolPlatform{
		VMSize: "Standard_D16s_v5",
		Image:  hyperv1.AzureVMImage{Type: hyperv1.AzureMarketplace, AzureMarketplace: &hyperv1.AzureMarketplaceImage{ImageGeneration: ptr.To(hyperv1.Gen2)}},
		OSDisk: hyperv1.AzureNodePoolOSDisk{
			SizeGiB:                256,
			DiskStorageAccountType: hyperv1.DiskStorageAccountTypesStandardSSDLRS,
			EncryptionSetID:        fixtures.ARMID("Microsoft.Compute/diskEncryptionSets", "des"),
			Persistence:            hyperv1.EphemeralDiskPersistence,
		},
		AvailabilityZone: "2",
		EncryptionAtHost: "Enabled",
		SubnetID:         fixtures.ARMID("Microsoft.Network/virtualNetworks", "vnet/subnets/gpu"),
	}
	if !apiequality.Semantic.DeepEqual(wantAzure, spec.Platform.Azure) {
		t.Errorf("Azure platform (-want +got):\n%s", diff.Diff(wantAzure, spec.Platform.Azure))
	}
}

func TestNodePoolBundleDocuments(t *testing.T) {
	c := minimalCluster("customer", "c", clusterID)
	render1 := func(docs ...runtime.RawExtension) []string {
		np := fixtures.NodePool("customer", "c", "workers")
		np.Spec.Config = docs
		b, err := render.NodePoolBundle(c, np, poolReleaseImage, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, cfg := range b.ManifestConfigs[:len(b.ManifestConfigs)-1] {
			names = append(names, cfg.ResourceIdentifier.Name)
		}
		return names
	}
	a, b := rawDocument(t, machineConfig("a")), rawDocument(t, machineConfig("b"))
	ab := render1(a, b)
	if len(ab) != 2 || ab[0] == ab[1] {
		t.Fatalf("ConfigMaps %q, want one for each document", ab)
	}
	if ba := render1(b, a); ba[0] != ab[1] || ba[1] != ab[0] {
		t.Errorf("reordered documents give ConfigMaps %q, want the same names reordered %q", ba, ab)
	}
	changed := rawDocument(t, machineConfig("a2"))
	if got := render1(changed, b); got[0] == ab[0] || got[1] != ab[1] {
		t.Errorf("a changed document gives %q, want a new name for it only (was %q)", got, ab)
	}
	if got := render1(a, a); len(got) != 1 {
		t.Errorf("the same document twice gives ConfigMaps %q, want one", got)
	}
	// Whitespace is no change: the API server may store the same document either way.
	var indented []byte
	indented, _ = json.MarshalIndent(machineConfig("a"), "", "  ")
	if got := render1(runtime.RawExtension{Raw: indented}); got[0] != ab[0] {
		t.Errorf("an indented document gives %q, want %q as for the compact one", got[0], ab[0])
	}
}

func TestNodePoolBundleIsDeterministic(t *testing.T) {
	c := fullCluster("customer", "full", clusterID)
	np := fullNodePool(t, c, "gpu")
	first, err := render.NodePoolBundle(c, np, poolReleaseImage, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := render.NodePoolBundle(c, np, poolReleaseImage, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if toJSON(t, again) != toJSON(t, first) {
			t.Fatalf("rendering again gave other bytes:\n%s\n%s", toJSON(t, first), toJSON(t, again))
		}
	}
}

func TestNodePoolBundleErrors(t *testing.T) {
	type input struct {
		cluster *v1alpha1.HCPCluster
		pool    *v1alpha1.NodePool
		image   string
	}
	for _, tc := range []struct {
		name    string
		mutate  func(in *input)
		wantErr []string
	}{
		{
			name:    "a VM size in lowercase",
			mutate:  func(in *input) { in.pool.Spec.Platform.VMSize = "standard_d8s_v3" },
			wantErr: []string{`spec.platform.vmSize: Invalid value: "standard_d8s_v3"`, "Standard_D8s_v3"},
		},
		{
			name: "autoscaling from zero",
			mutate: func(in *input) {
				in.pool.Spec.Replicas, in.pool.Spec.AutoScaling = nil, &v1alpha1.NodePoolAutoScaling{Min: 0, Max: 3}
			},
			wantErr: []string{"spec.autoScaling.min: Invalid value: 0"},
		},
		{
			name: "a subnet of another virtual network",
			mutate: func(in *input) {
				in.pool.Spec.Platform.SubnetID = fixtures.ARMID("Microsoft.Network/virtualNetworks", "other/subnets/gpu")
			},
			wantErr: []string{"spec.platform.subnetID: Invalid value", "must be a subnet of the cluster's virtual network"},
		},
		{
			name:    "a subnet ID that is no ARM ID",
			mutate:  func(in *input) { in.pool.Spec.Platform.SubnetID = "gpu" },
			wantErr: []string{`spec.platform.subnetID: Invalid value: "gpu"`},
		},
		{
			name: "a disk encryption set ID of another type",
			mutate: func(in *input) {
				in.pool.Spec.Platform.OSDisk.EncryptionSetID = fixtures.ARMID("Microsoft.KeyVault/vaults", "kv")
			},
			wantErr: []string{"spec.platform.osDisk.encryptionSetID: Invalid value", "Microsoft.Compute/diskEncryptionSets"},
		},
		{
			name:    "a tuning document that is not an object",
			mutate:  func(in *input) { in.pool.Spec.TuningConfig = []runtime.RawExtension{{Raw: []byte(`["Tuned"]`)}} },
			wantErr: []string{"spec.tuningConfig[0]: Invalid value", "must be a JSON object"},
		},
		{
			name:    "the pool of another cluster",
			mutate:  func(in *input) { in.pool.Spec.ClusterName = "other" },
			wantErr: []string{`spec.clusterName: Invalid value: "other"`},
		},
		{
			name:    "a cluster without ID",
			mutate:  func(in *input) { in.cluster.Status.ClusterID = "" },
			wantErr: []string{"status.clusterID: Required value"},
		},
		{
			name:    "no release image",
			mutate:  func(in *input) { in.image = "" },
			wantErr: []string{"releaseImage: Required value"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := input{
				cluster: minimalCluster("customer", "c", clusterID),
				pool:    fixtures.NodePool("customer", "c", "workers"),
				image:   poolReleaseImage,
			}
			tc.mutate(&in)
			b, err := render.NodePoolBundle(in.cluster, in.pool, in.image, render.Options{})
			if err == nil {
				t.Fatalf("no error, and a bundle of %d manifests", len(b.Manifests))
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestNames(t *testing.T) {
	c := minimalCluster("customer", "my-cluster", clusterID)
	if got, want := render.Namespace("dev", clusterID), "ocm-dev-"+clusterID; got != want {
		t.Errorf("Namespace = %q, want %q", got, want)
	}
	if got := render.HostedClusterName(c); got != "dev" {
		t.Errorf("HostedClusterName = %q, want the DNS prefix dev", got)
	}
	if got, want := render.ControlPlaneNamespace("dev", c), "ocm-dev-"+clusterID+"-dev"; got != want {
		t.Errorf("ControlPlaneNamespace = %q, want %q", got, want)
	}
	noPrefix := c.DeepCopy()
	noPrefix.Spec.DNS.BaseDomainPrefix = ""
	if got := render.HostedClusterName(noPrefix); got != "my-cluster" {
		t.Errorf("HostedClusterName without prefix = %q, want the cluster's name", got)
	}

	for _, tc := range []struct{ pool, want string }{
		{"my-cluster.workers", "dev-workers"},
		{"workers", "dev-workers"},
	} {
		np := fixtures.NodePool("customer", "my-cluster", "x")
		np.Name = tc.pool
		if got := render.NodePoolName(c, np); got != tc.want {
			t.Errorf("NodePoolName of %s = %q, want %q", tc.pool, got, tc.want)
		}
	}

	// The longest names ARM allows: a 54-character cluster name and a 15-character pool.
	long := minimalCluster("customer", strings.Repeat("c", 53)+"a", clusterID)
	long.Spec.DNS.BaseDomainPrefix = ""
	seen := map[string]bool{}
	for _, pool := range []string{"pool-number-001", "pool-number-002"} {
		name := render.NodePoolName(long, fixtures.NodePool("customer", long.Name, pool))
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("NodePoolName %q: %v", name, errs)
		}
		if !strings.HasPrefix(name, long.Name[:40]) || seen[name] {
			t.Errorf("NodePoolName %q, want a unique name that starts like the cluster's", name)
		}
		seen[name] = true
	}
}

func ExampleNodePoolName() {
	c := fixtures.HCPCluster("customer", "my-cluster")
	np := fixtures.NodePool("customer", "my-cluster", "workers")
	fmt.Println(np.Name, "->", render.NodePoolName(c, np))
	// Output: my-cluster.workers -> dev-workers
}
