package conversion

import (
	"maps"
	"slices"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// nodePoolConditionTypes renames a NodePool's Ready to ARM's Available: a pool is available to
// workloads once its nodes are ready.
var nodePoolConditionTypes = map[string]string{hcpv1alpha1.ConditionReady: hcpv1alpha1.ConditionAvailable}

// NodePoolToARM returns the ARM body of np in api-version v.
func NodePoolToARM(v APIVersion, np *hcpv1alpha1.NodePool) (*NodePool, error) {
	if _, err := ParseAPIVersion(string(v)); err != nil {
		return nil, err
	}
	armName, err := names.FromAnnotations(np.Annotations)
	if err != nil {
		return nil, err
	}
	spec := &np.Spec
	out := &NodePool{
		ID:         &armName.ID,
		Name:       &armName.Name,
		Type:       &armName.Type,
		Tags:       tagsFrom(np.Annotations),
		SystemData: systemDataFrom(np.Annotations),
	}
	if l := np.Annotations[AnnotationLocation]; l != "" {
		out.Location = &l
	}
	var identity hcpv1alpha1.ManagedServiceIdentity
	if getJSONAnnotation(np.Annotations, AnnotationIdentity, &identity) {
		out.Identity = identityToARM(&identity)
	}
	p := &NodePoolProperties{
		ProvisioningState: nonEmpty(string(np.Status.ProvisioningState)),
		Platform: &NodePoolPlatformProfile{
			SubnetID:               nonEmpty(spec.Platform.SubnetID),
			VMSize:                 &spec.Platform.VMSize,
			EnableEncryptionAtHost: &spec.Platform.EnableEncryptionAtHost,
			OSDisk: &OSDiskProfile{
				SizeGiB:                nonZero(spec.Platform.OSDisk.SizeGiB),
				DiskStorageAccountType: nonEmpty(spec.Platform.OSDisk.DiskStorageAccountType),
				EncryptionSetID:        nonEmpty(spec.Platform.OSDisk.EncryptionSetID),
				DiskType:               nonEmpty(spec.Platform.OSDisk.DiskType),
			},
			AvailabilityZone: nonEmpty(spec.Platform.AvailabilityZone),
		},
		Replicas:                spec.Replicas,
		AutoRepair:              spec.AutoRepair,
		NodeDrainTimeoutMinutes: spec.NodeDrainTimeoutMinutes,
		Status:                  statusToARM(np.Status.Conditions, nodePoolConditionTypes),
	}
	if spec.Version.ID != "" {
		p.Version = &VersionProfile{ID: &spec.Version.ID, ChannelGroup: nonEmpty(spec.Version.ChannelGroup)}
	}
	if as := spec.AutoScaling; as != nil {
		p.AutoScaling = &NodePoolAutoScaling{Min: &as.Min, Max: &as.Max}
	}
	// Labels in key order, so that a response reads the same every time.
	for _, k := range slices.Sorted(maps.Keys(spec.Labels)) {
		p.Labels = append(p.Labels, Label{Key: k, Value: nonEmpty(spec.Labels[k])})
	}
	for _, t := range spec.Taints {
		p.Taints = append(p.Taints, Taint{Key: t.Key, Value: nonEmpty(t.Value), Effect: t.Effect})
	}
	out.Properties = p
	nodePoolForVersion(v, out)
	return out, nil
}
