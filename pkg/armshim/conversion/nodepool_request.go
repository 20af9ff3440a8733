package conversion

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// NodePoolFromARM applies a PUT of a nodePools resource to existing (nil on create) and returns the
// NodePool to create or update, as ClusterFromARM does for clusters.
func NodePoolFromARM(req Request, existing *hcpv1alpha1.NodePool) (*hcpv1alpha1.NodePool, field.ErrorList) {
	obj, systemData, errs := parseRequest(req, names.KindNodePool)
	if len(errs) > 0 {
		return nil, errs
	}
	var in NodePool
	if errs := decode(req.Body, &in); len(errs) > 0 {
		return nil, errs
	}
	nodePoolForVersion(req.APIVersion, &in)

	out := &hcpv1alpha1.NodePool{ObjectMeta: newObjectMeta(obj)}
	out.Spec.ClusterName = obj.ClusterName
	if existing != nil {
		out = existing.DeepCopy()
		ensureAnnotations(&out.ObjectMeta)
	}

	a := &applier{update: existing != nil}
	// v1alpha1 NodePools have no location or identity: the annotations keep ARM's.
	location := out.Annotations[AnnotationLocation]
	applyLocation(a, in.Location, &location)
	out.Annotations[AnnotationLocation] = location
	applyTags(a, out.Annotations, in.Tags)
	mergeSystemData(out.Annotations, systemData)
	var storedIdentity hcpv1alpha1.ManagedServiceIdentity
	hadIdentity := getJSONAnnotation(out.Annotations, AnnotationIdentity, &storedIdentity)
	identity, idErrs := identityFromARM(pathIdentity, in.Identity, &storedIdentity)
	a.errs = append(a.errs, idErrs...)
	switch {
	case identity != nil:
		setJSONAnnotation(out.Annotations, AnnotationIdentity, identity)
	case hadIdentity:
		delete(out.Annotations, AnnotationIdentity)
	}

	if in.Properties == nil {
		a.errs = append(a.errs, field.Required(pathProperties, "a node pool needs properties, with at least platform"))
		return nil, a.result()
	}
	applyNodePoolProperties(a, in.Properties, &out.Spec)
	if len(a.errs) > 0 {
		return nil, a.result()
	}
	return out, nil
}

func applyNodePoolProperties(a *applier, in *NodePoolProperties, spec *hcpv1alpha1.NodePoolSpec) {
	path := pathProperties
	// Read-only and ignored: provisioningState, status.

	spec.Version = hcpv1alpha1.VersionProfile{}
	if in.Version != nil {
		spec.Version = hcpv1alpha1.VersionProfile{ID: deref(in.Version.ID), ChannelGroup: deref(in.Version.ChannelGroup)}
	}

	if p := in.Platform; p != nil {
		pp := path.Child("platform")
		createOnlyFold(a, pp.Child("subnetId"), p.SubnetID, &spec.Platform.SubnetID)
		createOnly(a, pp.Child("vmSize"), p.VMSize, &spec.Platform.VMSize)
		createOnly(a, pp.Child("enableEncryptionAtHost"), p.EnableEncryptionAtHost, &spec.Platform.EnableEncryptionAtHost)
		createOnly(a, pp.Child("availabilityZone"), p.AvailabilityZone, &spec.Platform.AvailabilityZone)
		if d := p.OSDisk; d != nil {
			dp := pp.Child("osDisk")
			disk := &spec.Platform.OSDisk
			createOnly(a, dp.Child("sizeGiB"), d.SizeGiB, &disk.SizeGiB)
			createOnly(a, dp.Child("diskStorageAccountType"), d.DiskStorageAccountType, &disk.DiskStorageAccountType)
			createOnlyFold(a, dp.Child("encryptionSetId"), d.EncryptionSetID, &disk.EncryptionSetID)
			createOnly(a, dp.Child("diskType"), d.DiskType, &disk.DiskType)
		}
	}

	spec.Replicas = in.Replicas
	if in.AutoRepair != nil {
		if a.update {
			// A pool stored without autoRepair has the API's default, true.
			current := ptr.Deref(spec.AutoRepair, true)
			createOnly(a, path.Child("autoRepair"), in.AutoRepair, &current)
		} else {
			spec.AutoRepair = ptr.To(*in.AutoRepair)
		}
	}

	spec.AutoScaling = nil
	if as := in.AutoScaling; as != nil {
		spec.AutoScaling = &hcpv1alpha1.NodePoolAutoScaling{Min: deref(as.Min), Max: deref(as.Max)}
		// ARM's replicas of an autoscaled pool is 0, as the frontend accepts it: the pool has no fixed count.
		if spec.Replicas != nil && *spec.Replicas == 0 {
			spec.Replicas = nil
		}
	}

	spec.Labels = nil
	for i, l := range in.Labels {
		if _, dup := spec.Labels[l.Key]; dup {
			a.errs = append(a.errs, field.Duplicate(path.Child("labels").Index(i).Child("key"), l.Key))
			continue
		}
		if spec.Labels == nil {
			spec.Labels = map[string]string{}
		}
		spec.Labels[l.Key] = deref(l.Value)
	}

	spec.Taints = nil
	for _, t := range in.Taints {
		spec.Taints = append(spec.Taints, hcpv1alpha1.Taint{Key: t.Key, Value: deref(t.Value), Effect: t.Effect})
	}

	spec.NodeDrainTimeoutMinutes = in.NodeDrainTimeoutMinutes
}
