package conversion

import (
	"fmt"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// ClusterToARM returns the ARM body of c in api-version v: the spec, the envelope kept in
// annotations, and what the status says of provisioning, conditions and URLs.
func ClusterToARM(v APIVersion, c *hcpv1alpha1.HCPCluster) (*Cluster, error) {
	if _, err := ParseAPIVersion(string(v)); err != nil {
		return nil, err
	}
	armName, err := clusterARMName(c)
	if err != nil {
		return nil, err
	}
	spec, status := &c.Spec, &c.Status
	out := &Cluster{
		ID:         &armName.ID,
		Name:       &armName.Name,
		Type:       &armName.Type,
		Location:   &spec.Location,
		Tags:       tagsFrom(c.Annotations),
		SystemData: systemDataFrom(c.Annotations),
		Identity:   identityToARM(spec.Identity),
	}
	p := &ClusterProperties{
		ProvisioningState: nonEmpty(string(status.ProvisioningState)),
		Version:           &VersionProfile{ID: nonEmpty(spec.Version.ID), ChannelGroup: nonEmpty(spec.Version.ChannelGroup)},
		// dns.baseDomain is left out: v1alpha1's status has no base domain yet.
		DNS: &DNSProfile{BaseDomainPrefix: nonEmpty(spec.DNS.BaseDomainPrefix)},
		Network: &NetworkProfile{
			NetworkType: nonEmpty(spec.Network.NetworkType),
			PodCIDR:     nonEmpty(spec.Network.PodCIDR),
			ServiceCIDR: nonEmpty(spec.Network.ServiceCIDR),
			MachineCIDR: nonEmpty(spec.Network.MachineCIDR),
			HostPrefix:  nonZero(spec.Network.HostPrefix),
		},
		// api.url and platform.issuerUrl are required of every cluster the documents describe, as is
		// vnetIntegrationSubnetId from 2025-12-23-preview: empty until known (the URLs until the control
		// plane is up; the subnet of a cluster made in an older api-version, forever), as ARM's frontend
		// answers them.
		API:     &APIProfile{URL: ptr.To(status.API.URL), Visibility: nonEmpty(spec.API.Visibility), AuthorizedCIDRs: spec.API.AuthorizedCIDRs},
		Ingress: &IngressProfile{Type: nonEmpty(spec.Ingress.Type)},
		Platform: &PlatformProfile{
			ManagedResourceGroup:    nonEmpty(spec.Platform.ManagedResourceGroup),
			SubnetID:                nonEmpty(spec.Platform.SubnetID),
			VnetIntegrationSubnetID: ptr.To(spec.Platform.VnetIntegrationSubnetID),
			OutboundType:            nonEmpty(spec.Platform.OutboundType),
			NetworkSecurityGroupID:  nonEmpty(spec.Platform.NetworkSecurityGroupID),
			OperatorsAuthentication: operatorsAuthenticationToARM(spec.Platform.OperatorsAuthentication),
			IssuerURL:               ptr.To(status.IssuerURL),
		},
		Autoscaling: &ClusterAutoscalingProfile{
			MaxNodesTotal:               spec.Autoscaling.MaxNodesTotal,
			MaxPodGracePeriodSeconds:    spec.Autoscaling.MaxPodGracePeriodSeconds,
			MaxNodeProvisionTimeSeconds: spec.Autoscaling.MaxNodeProvisionTimeSeconds,
			PodPriorityThreshold:        spec.Autoscaling.PodPriorityThreshold,
		},
		Etcd:                    etcdToARM(spec.Etcd),
		NodeDrainTimeoutMinutes: spec.NodeDrainTimeoutMinutes,
		ClusterImageRegistry:    &ClusterImageRegistryProfile{State: nonEmpty(spec.ClusterImageRegistry.State)},
		Status:                  statusToARM(status.Conditions, nil),
		CryptoRestrictions:      nonEmpty(spec.CryptoRestrictions),
	}
	// The console and its URL are read-only and the URL is required: no URL, no console.
	if status.Console.URL != "" {
		p.Console = &ConsoleProfile{URL: &status.Console.URL}
	}
	for _, m := range spec.ImageDigestMirrors {
		p.ImageDigestMirrors = append(p.ImageDigestMirrors, ImageDigestMirror{Source: m.Source, Mirrors: m.Mirrors})
	}
	out.Properties = p
	clusterForVersion(v, out)
	return out, nil
}

// clusterARMName is the cluster's ARM name as ARM spelled it, or, for a cluster made without ARM,
// one built from spec.azure.
func clusterARMName(c *hcpv1alpha1.HCPCluster) (names.ARMName, error) {
	if _, ok := c.Annotations[names.AnnotationResourceID]; ok {
		return names.FromAnnotations(c.Annotations)
	}
	az := c.Spec.Azure
	if az.SubscriptionID == "" || az.ResourceGroup == "" {
		return names.ARMName{}, fmt.Errorf("HCPCluster %s/%s has neither annotation %s nor spec.azure to name its ARM resource",
			c.Namespace, c.Name, names.AnnotationResourceID)
	}
	id := fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/%s/%s", az.SubscriptionID, az.ResourceGroup, names.ClusterType, c.Name)
	return names.ARMName{ID: id, Name: c.Name, Type: names.ClusterType}, nil
}

func operatorsAuthenticationToARM(in hcpv1alpha1.OperatorsAuthenticationProfile) *OperatorsAuthenticationProfile {
	uai := in.UserAssignedIdentities
	return &OperatorsAuthenticationProfile{UserAssignedIdentities: &UserAssignedIdentitiesProfile{
		ControlPlaneOperators: cloneOrEmpty(uai.ControlPlaneOperators),
		DataPlaneOperators:    cloneOrEmpty(uai.DataPlaneOperators),
		// Required in responses; "" says the cluster has none, as a minimal create leaves it.
		ServiceManagedIdentity: ptr.To(uai.ServiceManagedIdentity),
	}}
}

func cloneOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

func etcdToARM(in hcpv1alpha1.EtcdProfile) *EtcdProfile {
	de := in.DataEncryption
	if de == nil {
		return nil
	}
	out := &EtcdDataEncryptionProfile{KeyManagementMode: nonEmpty(de.KeyManagementMode)}
	if cm := de.CustomerManaged; cm != nil {
		out.CustomerManaged = &CustomerManagedEncryptionProfile{EncryptionType: nonEmpty(cm.EncryptionType)}
		if kms := cm.KMS; kms != nil {
			out.CustomerManaged.KMS = &KMSEncryptionProfile{
				VaultName:  nonEmpty(kms.VaultName),
				Visibility: nonEmpty(kms.Visibility),
				ActiveKey:  &KMSKey{Name: ptr.To(kms.ActiveKey.Name), Version: ptr.To(kms.ActiveKey.Version)},
			}
		}
	}
	return &EtcdProfile{DataEncryption: out}
}

// armConditionTypes are the condition types ARM's ConditionType enum has.
var armConditionTypes = map[string]bool{
	hcpv1alpha1.ConditionAvailable:   true,
	hcpv1alpha1.ConditionDegraded:    true,
	hcpv1alpha1.ConditionProgressing: true,
}

// statusToARM reports the conditions ARM knows; rename maps a v1alpha1 type to an ARM one first.
func statusToARM(conditions []metav1.Condition, rename map[string]string) *ResourceStatus {
	var out []Condition
	for _, c := range conditions {
		t := c.Type
		if r, ok := rename[t]; ok {
			t = r
		}
		if !armConditionTypes[t] || c.Reason == "" {
			continue
		}
		out = append(out, Condition{
			Type:               t,
			Status:             string(c.Status),
			LastTransitionTime: c.LastTransitionTime.UTC().Format(time.RFC3339),
			Reason:             c.Reason,
			Message:            c.Message,
		})
	}
	if len(out) == 0 {
		return nil
	}
	return &ResourceStatus{Conditions: out}
}

func nonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
