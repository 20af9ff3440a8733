package conversion

import (
	"github.com/google/uuid"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// ARM's defaults that v1alpha1 does not apply yet (CONTRACT.md "Defaults"). The rest (channel group,
// network, visibility, node pool disk and autoRepair) are the API's own defaulting in
// apis/hcp/v1alpha1/defaults.go. These belong there too, later: then any client gets them.
const (
	defaultMaxPodGracePeriodSeconds    int32 = 600
	defaultMaxNodeProvisionTimeSeconds int32 = 900
	defaultPodPriorityThreshold        int32 = -10
	managedResourceGroupPrefix               = "arohcp-"
	managedResourceGroupNameMax              = 45
)

// defaultAutoscaling fills what a PUT left out of autoscaling; it runs on every PUT, as ARM's RP
// defaults the whole body it replaces the resource with.
func defaultAutoscaling(a *hcpv1alpha1.ClusterAutoscalingProfile) {
	setDefaultInt32(&a.MaxPodGracePeriodSeconds, defaultMaxPodGracePeriodSeconds)
	setDefaultInt32(&a.MaxNodeProvisionTimeSeconds, defaultMaxNodeProvisionTimeSeconds)
	setDefaultInt32(&a.PodPriorityThreshold, defaultPodPriorityThreshold)
}

// defaultManagedResourceGroup names the resource group the service creates for a new cluster:
// "arohcp-", at most 45 characters of the cluster's ARM name, "-", a UUID.
func defaultManagedResourceGroup(armClusterName string) string {
	name := armClusterName
	if len(name) > managedResourceGroupNameMax {
		name = name[:managedResourceGroupNameMax]
	}
	return managedResourceGroupPrefix + name + "-" + uuid.NewString()
}

func setDefaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}
