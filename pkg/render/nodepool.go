package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The keys HyperShift reads a node pool's documents from, one document per ConfigMap.
const (
	ConfigKey = "config"
	TuningKey = "tuning"
)

// vmSizeRegexp is the VM size pattern of HyperShift's NodePool CRD, which is stricter than ARM:
// it wants ARM's own casing, such as Standard_D8s_v3.
var vmSizeRegexp = regexp.MustCompile(`^(Standard_|Basic_)?[A-Z]+[0-9]+(-[0-9]+)?[abdilmptsCNP]*(_[A-Z]*[0-9]+[A-Z]*)?(_v[0-9]+)?$`)

// NodePoolBundle renders the bundle of one node pool of cluster: a ConfigMap per config and
// tuning document, then the HyperShift NodePool that refers to them, all in the HostedCluster's
// namespace. releaseImage is the pull spec of the release the pool's nodes run. Bad input is an
// error naming the field, for the user to fix.
func NodePoolBundle(cluster *v1alpha1.HCPCluster, np *v1alpha1.NodePool, releaseImage string, o Options) (*protocol.ManifestBundle, error) {
	o, err := o.complete()
	if err != nil {
		return nil, err
	}
	if cluster == nil || np == nil {
		return nil, errors.New("a node pool renders with its cluster")
	}
	c, np := cluster.DeepCopy(), np.DeepCopy()
	v1alpha1.SetObjectDefaults_HCPCluster(c)
	v1alpha1.SetObjectDefaults_NodePool(np)

	errs := checkClusterID(o.Environment, c)
	if np.Namespace != c.Namespace || np.Spec.ClusterName != c.Name {
		errs = append(errs, field.Invalid(field.NewPath("spec", "clusterName"), np.Spec.ClusterName,
			fmt.Sprintf("the node pool %s/%s is rendered with the cluster %s/%s, which is not its own", np.Namespace, np.Name, c.Namespace, c.Name)))
	}
	errs = append(errs, checkReleaseImage(releaseImage)...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}

	name := NodePoolName(c, np)
	meta := metav1.ObjectMeta{Namespace: Namespace(o.Environment, c.Status.ClusterID), Labels: clusterLabels(o.Environment, c)}
	config, configErrs := configMaps(name, ConfigKey, np.Spec.Config, meta, field.NewPath("spec", "config"))
	tuning, tuningErrs := configMaps(name, TuningKey, np.Spec.TuningConfig, meta, field.NewPath("spec", "tuningConfig"))
	pool, poolErrs := nodePool(c, np, releaseImage)
	errs = append(append(append(errs, configErrs...), tuningErrs...), poolErrs...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}

	pool.ObjectMeta = *meta.DeepCopy()
	pool.Name = name
	var manifests []manifest
	for _, cm := range config {
		pool.Spec.Config = append(pool.Spec.Config, corev1.LocalObjectReference{Name: cm.Name})
		manifests = append(manifests, manifest{object: cm, resource: "configmaps"})
	}
	for _, cm := range tuning {
		pool.Spec.TuningConfig = append(pool.Spec.TuningConfig, corev1.LocalObjectReference{Name: cm.Name})
		manifests = append(manifests, manifest{object: cm, resource: "configmaps"})
	}
	// The ConfigMaps go first, so that HyperShift finds them when it sees the NodePool.
	manifests = append(manifests, manifest{object: pool, resource: "nodepools", feedback: nodePoolFeedback})
	return newBundle(manifests...)
}

// configMaps puts each document in a ConfigMap of its own, under key, as HyperShift reads them.
// They are named after the pool and the content, so that a changed document is a new ConfigMap
// and the old one goes with the bundle's next generation; the same document twice is one.
func configMaps(pool, key string, docs []runtime.RawExtension, meta metav1.ObjectMeta, fldPath *field.Path) ([]*corev1.ConfigMap, field.ErrorList) {
	var cms []*corev1.ConfigMap
	var errs field.ErrorList
	for i := range docs {
		content, err := document(&docs[i])
		if err != nil {
			errs = append(errs, field.Invalid(fldPath.Index(i), field.OmitValueType{}, err.Error()))
			continue
		}
		name := pool + "-" + key + "-" + hash(content)
		if slices.ContainsFunc(cms, func(cm *corev1.ConfigMap) bool { return cm.Name == name }) {
			continue
		}
		cm := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: *meta.DeepCopy(),
			Data:       map[string]string{key: content},
		}
		cm.Name = name
		cms = append(cms, cm)
	}
	return cms, errs
}

// document returns a config or tuning document as compact JSON, which is also YAML, as
// HyperShift reads it.
func document(doc *runtime.RawExtension) (string, error) {
	raw, err := doc.MarshalJSON()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil || !bytes.HasPrefix(b.Bytes(), []byte("{")) {
		return "", errors.New("must be a JSON object, a MachineConfig, KubeletConfig, ContainerRuntimeConfig, ImageDigestMirrorSet, Tuned or PerformanceProfile")
	}
	return b.String(), nil
}

// nodePool renders the spec of a HyperShift NodePool; the caller names it and adds the
// references to its documents.
func nodePool(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool, releaseImage string) (*hyperv1.NodePool, field.ErrorList) {
	spec := &np.Spec
	specPath := field.NewPath("spec")
	platformPath := specPath.Child("platform")
	var errs field.ErrorList

	if !vmSizeRegexp.MatchString(spec.Platform.VMSize) {
		errs = append(errs, field.Invalid(platformPath.Child("vmSize"), spec.Platform.VMSize,
			"HyperShift takes VM sizes as Azure spells them, such as Standard_D8s_v3"))
	}
	subnet, subnetErrs := nodePoolSubnet(c, np)
	errs = append(errs, subnetErrs...)
	disk := hyperv1.AzureNodePoolOSDisk{
		SizeGiB:                spec.Platform.OSDisk.SizeGiB,
		DiskStorageAccountType: hyperv1.AzureDiskStorageAccountType(spec.Platform.OSDisk.DiskStorageAccountType),
		Persistence:            hyperv1.PersistentDiskPersistence,
	}
	if spec.Platform.OSDisk.DiskType == "Ephemeral" {
		disk.Persistence = hyperv1.EphemeralDiskPersistence
	}
	if id := spec.Platform.OSDisk.EncryptionSetID; id != "" {
		set, err := parseARMID(platformPath.Child("osDisk", "encryptionSetID"), id, diskEncryptionSetType)
		if err != nil {
			errs = append(errs, err)
		} else {
			disk.EncryptionSetID = set.String()
		}
	}
	if a := spec.AutoScaling; a != nil && a.Min < 1 {
		errs = append(errs, field.Invalid(specPath.Child("autoScaling", "min"), a.Min,
			"HyperShift scales Azure node pools from zero only for AWS; set at least 1"))
	}
	if len(errs) > 0 {
		return nil, errs
	}

	// HyperShift turns encryption at host on unless told, while the API turns it on only when asked.
	encryptionAtHost := "Disabled"
	if spec.Platform.EnableEncryptionAtHost {
		encryptionAtHost = "Enabled"
	}
	pool := &hyperv1.NodePool{
		TypeMeta: metav1.TypeMeta{APIVersion: hyperv1.GroupVersion.String(), Kind: "NodePool"},
		Spec: hyperv1.NodePoolSpec{
			ClusterName: HostedClusterName(c),
			Release:     hyperv1.Release{Image: releaseImage},
			Platform: hyperv1.NodePoolPlatform{
				Type: hyperv1.AzurePlatform,
				Azure: &hyperv1.AzureNodePoolPlatform{
					VMSize: spec.Platform.VMSize,
					// The release payload names the marketplace image; only its generation is ours to pick.
					Image: hyperv1.AzureVMImage{
						Type:             hyperv1.AzureMarketplace,
						AzureMarketplace: &hyperv1.AzureMarketplaceImage{ImageGeneration: ptr.To(hyperv1.Gen2)},
					},
					OSDisk:           disk,
					AvailabilityZone: spec.Platform.AvailabilityZone,
					EncryptionAtHost: encryptionAtHost,
					SubnetID:         subnet,
				},
			},
			Replicas: spec.Replicas,
			Management: hyperv1.NodePoolManagement{
				UpgradeType: hyperv1.UpgradeType(spec.UpgradeType),
				AutoRepair:  ptr.Deref(spec.AutoRepair, true),
			},
			NodeLabels: spec.Labels,
		},
	}
	if a := spec.AutoScaling; a != nil {
		pool.Spec.AutoScaling = &hyperv1.NodePoolAutoScaling{Min: ptr.To(a.Min), Max: a.Max}
	}
	// A pool without its own drain timeout takes the cluster's.
	drain := spec.NodeDrainTimeoutMinutes
	if drain == nil {
		drain = c.Spec.NodeDrainTimeoutMinutes
	}
	if drain != nil {
		pool.Spec.NodeDrainTimeout = &metav1.Duration{Duration: time.Duration(*drain) * time.Minute}
	}
	for _, t := range spec.Taints {
		pool.Spec.Taints = append(pool.Spec.Taints, hyperv1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return pool, nil
}

// nodePoolSubnet is the pool's subnet, or the cluster's. HyperShift requires it in the cluster's
// virtual network.
func nodePoolSubnet(c *v1alpha1.HCPCluster, np *v1alpha1.NodePool) (string, field.ErrorList) {
	clusterSubnet, err := parseARMID(field.NewPath("cluster", "spec", "platform", "subnetID"), c.Spec.Platform.SubnetID, subnetType)
	if err != nil {
		return "", field.ErrorList{err}
	}
	if np.Spec.Platform.SubnetID == "" {
		return clusterSubnet.String(), nil
	}
	subnetPath := field.NewPath("spec", "platform", "subnetID")
	subnet, err := parseARMID(subnetPath, np.Spec.Platform.SubnetID, subnetType)
	if err != nil {
		return "", field.ErrorList{err}
	}
	if vnet := clusterSubnet.ancestor(1); !strings.EqualFold(subnet.ancestor(1), vnet) {
		return "", field.ErrorList{field.Invalid(subnetPath, np.Spec.Platform.SubnetID,
			fmt.Sprintf("must be a subnet of the cluster's virtual network %s", vnet))}
	}
	return subnet.String(), nil
}
