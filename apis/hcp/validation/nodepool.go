package validation

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
)

const (
	osDiskSizeGiBMin   = 64
	osDiskSizeGiBMax   = 4095
	maxConfigDocuments = 10
)

var (
	diskStorageAccountTypes = []string{"Premium_LRS", "StandardSSD_LRS", "Standard_LRS"}
	diskTypes               = []string{"Managed", "Ephemeral"}
	availabilityZones       = []string{"1", "2", "3"}
	taintEffects            = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	upgradeTypes            = []string{"Replace", "InPlace"}

	// nodePoolNameRegexp is ARM's node pool and external auth name rule (1 to 15 characters), lowercased.
	nodePoolNameRegexp = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,13}[a-z0-9])?$`)
	// nodePoolVersionRegexp is MAJOR.MINOR.PATCH; candidate and nightly releases carry a
	// pre-release suffix such as 4.21.0-rc.1.
	nodePoolVersionRegexp = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	vmSizeRegexp          = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

	// configKinds are the documents HyperShift accepts in a node pool's config. The API group
	// must match the kind: a MachineConfig of another group would be ignored, not applied.
	configKinds = []documentKind{
		{"MachineConfig", "machineconfiguration.openshift.io", "v1"},
		{"KubeletConfig", "machineconfiguration.openshift.io", "v1"},
		{"ContainerRuntimeConfig", "machineconfiguration.openshift.io", "v1"},
		{"ImageDigestMirrorSet", "config.openshift.io", "v1"},
	}
	tuningConfigKinds = []documentKind{
		{"Tuned", "tuned.openshift.io", "v1"},
		{"PerformanceProfile", "performance.openshift.io", "v2"},
	}
)

// documentKind is a kind allowed in config or tuningConfig, its group and a current version.
type documentKind struct {
	kind, group, version string
}

// ValidateNodePool validates a node pool on create.
func ValidateNodePool(np *hcp.NodePool) field.ErrorList {
	validateName := func(fldPath *field.Path, name string) field.ErrorList {
		return validateNodePoolName(fldPath, name, np.Spec.ClusterName)
	}
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&np.ObjectMeta, true, validateName, field.NewPath("metadata"))
	return append(allErrs, validateNodePoolSpec(&np.Spec, field.NewPath("spec"))...)
}

// ValidateNodePoolUpdate validates a node pool on update: everything ValidateNodePool checks,
// and that the fields ARM only accepts on create did not change.
func ValidateNodePoolUpdate(newNP, oldNP *hcp.NodePool) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newNP.ObjectMeta, &oldNP.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateNodePool(newNP)...)
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newNP.Spec.ClusterName, oldNP.Spec.ClusterName, fldPath.Child("clusterName"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newNP.Spec.Platform, oldNP.Spec.Platform, fldPath.Child("platform"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newNP.Spec.AutoRepair, oldNP.Spec.AutoRepair, fldPath.Child("autoRepair"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newNP.Spec.UpgradeType, oldNP.Spec.UpgradeType, fldPath.Child("upgradeType"))...)
	return allErrs
}

// ValidateNodePoolStatusUpdate validates a write to the status subresource.
func ValidateNodePoolStatusUpdate(newNP, oldNP *hcp.NodePool) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newNP.ObjectMeta, &oldNP.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateNodePoolStatus(&newNP.Status, field.NewPath("status"))...)
}

func validateNodePoolStatus(status *hcp.NodePoolStatus, fldPath *field.Path) field.ErrorList {
	allErrs := validateOptionalEnum(fldPath.Child("provisioningState"), status.ProvisioningState, provisioningStates)
	allErrs = append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(status.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	allErrs = append(allErrs, validateMinimum(fldPath.Child("replicas"), status.Replicas, 0)...)
	if status.DesiredVersion != "" {
		allErrs = append(allErrs, validateFullVersion(fldPath.Child("desiredVersion"), status.DesiredVersion)...)
	}
	return allErrs
}

// validateNodePoolName accepts "<pool>" or "<spec.clusterName>.<pool>". The second form keeps
// the pools of several clusters in one namespace apart; the pool part is the ARM name either way.
func validateNodePoolName(fldPath *field.Path, name, clusterName string) field.ErrorList {
	return validateClusterChildName(fldPath, name, clusterName, "pool", "workers")
}

// validateClusterChildName is the name rule of a cluster's child resources (node pools, external
// auths): "<child>" or "<spec.clusterName>.<child>", where the child part follows ARM's rule of
// 1 to 15 characters, lowercased.
func validateClusterChildName(fldPath *field.Path, name, clusterName, child, example string) field.ErrorList {
	if errs := validateDNSSubdomainName(fldPath, name); len(errs) > 0 {
		return errs
	}
	part := name
	if prefix, rest, found := strings.Cut(name, "."); found {
		if prefix != clusterName {
			return field.ErrorList{field.Invalid(fldPath, name,
				fmt.Sprintf("must be <%s> or <spec.clusterName>.<%s>, and spec.clusterName is %q", child, child, clusterName))}
		}
		part = rest
	}
	if !nodePoolNameRegexp.MatchString(part) {
		return field.ErrorList{field.Invalid(fldPath, name,
			fmt.Sprintf("the %s name must be 1 to 15 lowercase letters, digits and '-', start with a letter and end with a letter or digit, such as %s", child, example))}
	}
	return nil
}

func validateNodePoolSpec(spec *hcp.NodePoolSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateClusterName(fldPath.Child("clusterName"), spec.ClusterName)
	allErrs = append(allErrs, validateNodePoolVersion(&spec.Version, fldPath.Child("version"))...)
	allErrs = append(allErrs, validateNodePoolPlatform(&spec.Platform, fldPath.Child("platform"))...)
	allErrs = append(allErrs, validateNodePoolScaling(spec, fldPath)...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Labels, fldPath.Child("labels"))...)
	allErrs = append(allErrs, validateTaints(spec.Taints, fldPath.Child("taints"))...)
	if spec.NodeDrainTimeoutMinutes != nil {
		allErrs = append(allErrs, validateRange(fldPath.Child("nodeDrainTimeoutMinutes"), *spec.NodeDrainTimeoutMinutes, 0, maxNodeDrainTimeoutMinutes)...)
	}
	allErrs = append(allErrs, validateEnum(fldPath.Child("upgradeType"), spec.UpgradeType, upgradeTypes)...)
	allErrs = append(allErrs, validateConfigDocuments(spec.Config, configKinds, fldPath.Child("config"))...)
	allErrs = append(allErrs, validateConfigDocuments(spec.TuningConfig, tuningConfigKinds, fldPath.Child("tuningConfig"))...)
	return allErrs
}

// validateNodePoolVersion allows an empty version: the pool then follows the cluster's.
func validateNodePoolVersion(v *hcp.VersionProfile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if v.ID != "" && !nodePoolVersionRegexp.MatchString(v.ID) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("id"), v.ID, "must be MAJOR.MINOR.PATCH, such as 4.20.8, with a pre-release suffix for candidate and nightly releases, such as 4.21.0-rc.1"))
	}
	if v.UpgradePolicy != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("upgradePolicy"), "a node pool moves only when its version.id changes; upgradePolicy is its cluster's"))
	}
	return append(allErrs, validateOptionalEnum(fldPath.Child("channelGroup"), v.ChannelGroup, channelGroups)...)
}

func validateNodePoolPlatform(p *hcp.NodePoolPlatformProfile, fldPath *field.Path) field.ErrorList {
	const vmSizeMsg = "must be an Azure VM size such as Standard_D8s_v3"
	var allErrs field.ErrorList
	switch {
	case p.VMSize == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("vmSize"), vmSizeMsg))
	case !vmSizeRegexp.MatchString(p.VMSize):
		allErrs = append(allErrs, field.Invalid(fldPath.Child("vmSize"), p.VMSize, vmSizeMsg))
	}
	// Whether the subnet is in the cluster's subscription needs the cluster, which is not at hand here.
	if p.SubnetID != "" {
		allErrs = append(allErrs, validateARMID(fldPath.Child("subnetID"), p.SubnetID, subnetResourceType, "")...)
	}
	diskPath := fldPath.Child("osDisk")
	allErrs = append(allErrs, validateRange(diskPath.Child("sizeGiB"), p.OSDisk.SizeGiB, osDiskSizeGiBMin, osDiskSizeGiBMax)...)
	allErrs = append(allErrs, validateEnum(diskPath.Child("diskStorageAccountType"), p.OSDisk.DiskStorageAccountType, diskStorageAccountTypes)...)
	allErrs = append(allErrs, validateEnum(diskPath.Child("diskType"), p.OSDisk.DiskType, diskTypes)...)
	if p.OSDisk.EncryptionSetID != "" {
		allErrs = append(allErrs, validateARMID(diskPath.Child("encryptionSetID"), p.OSDisk.EncryptionSetID, diskEncryptionSetResourceType, "")...)
	}
	allErrs = append(allErrs, validateOptionalEnum(fldPath.Child("availabilityZone"), p.AvailabilityZone, availabilityZones)...)
	return allErrs
}

// validateNodePoolScaling requires exactly one of replicas and autoScaling.
func validateNodePoolScaling(spec *hcp.NodePoolSpec, fldPath *field.Path) field.ErrorList {
	replicasPath, autoScalingPath := fldPath.Child("replicas"), fldPath.Child("autoScaling")
	// A pool in one availability zone has that zone's capacity; a pool spread over the region, as ARO
	// HCP bounds it, at most maxNodesWithoutZone.
	limit := int32(maxNodes)
	if spec.Platform.AvailabilityZone == "" {
		limit = maxNodesWithoutZone
	}
	var allErrs field.ErrorList
	switch {
	case spec.Replicas == nil && spec.AutoScaling == nil:
		allErrs = append(allErrs, field.Required(replicasPath,
			fmt.Sprintf("set %s for a fixed node count, or %s", replicasPath, autoScalingPath)))
	case spec.Replicas != nil && spec.AutoScaling != nil && *spec.Replicas != 0:
		// The ARO HCP frontend's words: an autoscaled pool has no fixed count.
		allErrs = append(allErrs, field.Invalid(replicasPath, *spec.Replicas, "must be equal to 0"))
	case spec.Replicas != nil && spec.AutoScaling != nil:
		allErrs = append(allErrs, field.Forbidden(replicasPath,
			fmt.Sprintf("may not be set together with %s; leave it out", autoScalingPath)))
	}
	if spec.Replicas != nil {
		allErrs = append(allErrs, validateRange(replicasPath, *spec.Replicas, 0, limit)...)
	}
	if a := spec.AutoScaling; a != nil {
		minPath, maxPath := autoScalingPath.Child("min"), autoScalingPath.Child("max")
		allErrs = append(allErrs, validateMinimum(minPath, a.Min, 0)...)
		switch {
		case a.Max > limit:
			allErrs = append(allErrs, field.Invalid(maxPath, a.Max, fmt.Sprintf("must be less than or equal to %d", limit)))
		case a.Max < a.Min:
			allErrs = append(allErrs, validateMinimum(maxPath, a.Max, a.Min)...)
		case a.Max < 1:
			allErrs = append(allErrs, validateMinimum(maxPath, a.Max, 1)...)
		}
	}
	return allErrs
}

func validateTaints(taints []hcp.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// Kubernetes keeps one taint per key and effect on a node.
	seen := map[[2]string]bool{}
	for i, t := range taints {
		p := fldPath.Index(i)
		if t.Key == "" {
			allErrs = append(allErrs, field.Required(p.Child("key"), "must be a qualified name such as example.com/dedicated"))
		} else {
			for _, msg := range content.IsQualifiedName(t.Key) {
				allErrs = append(allErrs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		for _, msg := range content.IsLabelValue(t.Value) {
			allErrs = append(allErrs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		allErrs = append(allErrs, validateEnum(p.Child("effect"), t.Effect, taintEffects)...)
		key := [2]string{t.Key, t.Effect}
		if seen[key] {
			dup := field.Duplicate(p, t)
			dup.Detail = "taints must be unique by key and effect"
			allErrs = append(allErrs, dup)
		}
		seen[key] = true
	}
	return allErrs
}

// documentHeader is the part of a config document that validation looks at; the rest is the
// business of the operator that applies it.
type documentHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// validateConfigDocuments checks the inline documents of config or tuningConfig.
func validateConfigDocuments(docs []runtime.RawExtension, kinds []documentKind, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(docs) > maxConfigDocuments {
		allErrs = append(allErrs, field.TooMany(fldPath, len(docs), maxConfigDocuments))
	}
	allowed := make([]string, len(kinds))
	for i, k := range kinds {
		allowed[i] = k.kind
	}
	names := map[string]bool{}
	for i := range docs {
		p := fldPath.Index(i)
		if errs := validateDocumentCost(&docs[i], p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			continue
		}
		h, err := decodeDocumentHeader(&docs[i])
		if err != nil {
			allErrs = append(allErrs, field.Invalid(p, field.OmitValueType{},
				fmt.Sprintf("must be an object with apiVersion, kind (one of %s) and metadata.name: %v", strings.Join(allowed, ", "), err)))
			continue
		}

		var want *documentKind
		if j := slices.IndexFunc(kinds, func(k documentKind) bool { return k.kind == h.Kind }); j >= 0 {
			want = &kinds[j]
		} else {
			allErrs = append(allErrs, validateEnum(p.Child("kind"), h.Kind, allowed)...)
		}

		apiVersionPath := p.Child("apiVersion")
		gv, gvErr := schema.ParseGroupVersion(h.APIVersion)
		switch {
		case h.APIVersion == "":
			allErrs = append(allErrs, field.Required(apiVersionPath, "must be the document's API version, such as machineconfiguration.openshift.io/v1"))
		case gvErr != nil:
			allErrs = append(allErrs, field.Invalid(apiVersionPath, h.APIVersion, "must be GROUP/VERSION, such as machineconfiguration.openshift.io/v1"))
		case want != nil && gv.Group != want.group:
			allErrs = append(allErrs, field.Invalid(apiVersionPath, h.APIVersion,
				fmt.Sprintf("a %s must be in API group %s, such as %s/%s", want.kind, want.group, want.group, want.version)))
		}

		namePath := p.Child("metadata", "name")
		switch {
		case h.Metadata.Name == "":
			allErrs = append(allErrs, field.Required(namePath, "must name the document; names must be unique within "+fldPath.String()))
		case names[h.Metadata.Name]:
			allErrs = append(allErrs, field.Duplicate(namePath, h.Metadata.Name))
		}
		names[h.Metadata.Name] = true
	}
	return allErrs
}

// MaxConfigDocumentBytes bounds one document of a node pool's config or tuningConfig. A MachineConfig
// carries its files inline (Ignition data URLs); those applied to node pools (registries, chrony,
// certificates, kubelet and CRI-O settings, Tuned profiles) run from a few KiB to tens of KiB, so
// 256 KiB leaves room for the largest while bounding what parsing and rendering one document costs.
const MaxConfigDocumentBytes = 256 << 10

// validateDocumentCost bounds what a document costs every reader: its size, and how deeply it nests
// (indented output grows with the square of the depth).
func validateDocumentCost(doc *runtime.RawExtension, fldPath *field.Path) field.ErrorList {
	if n := len(doc.Raw); n > MaxConfigDocumentBytes {
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{},
			fmt.Sprintf("must be at most %d bytes, not %d: split it into several documents", MaxConfigDocumentBytes, n))}
	}
	// A CBOR body's documents are CBOR, which MarshalJSON transcodes.
	raw, err := doc.MarshalJSON()
	if err != nil {
		raw = doc.Raw
	}
	if jsonlimit.CheckDepth(raw, jsonlimit.MaxDepth) != nil {
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{},
			fmt.Sprintf("must nest objects and arrays at most %d levels deep", jsonlimit.MaxDepth))}
	}
	return nil
}

// decodeDocumentHeader reads the header of a document however it arrived: MarshalJSON turns
// CBOR bytes or a typed Object into JSON.
func decodeDocumentHeader(doc *runtime.RawExtension) (*documentHeader, error) {
	raw, err := doc.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	// Case-sensitive, as the API server decodes: "Kind" is not "kind".
	var h documentHeader
	if err := utiljson.Unmarshal(raw, &h); err != nil {
		return nil, err
	}
	return &h, nil
}
