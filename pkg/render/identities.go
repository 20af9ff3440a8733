package render

import (
	"maps"
	"slices"
	"strings"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	apivalidation "github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
)

// The operator names of ARO HCP's operator identities (the HcpOperatorIdentityRoleSets of the
// ARM API), the keys of spec.platform.operatorsAuthentication.userAssignedIdentities.
const (
	operatorClusterAPIAzure        = "cluster-api-azure"
	operatorControlPlane           = "control-plane"
	operatorCloudControllerManager = "cloud-controller-manager"
	operatorIngress                = "ingress"
	operatorDiskCSIDriver          = "disk-csi-driver"
	operatorFileCSIDriver          = "file-csi-driver"
	operatorImageRegistry          = "image-registry"
	operatorCloudNetworkConfig     = "cloud-network-config"
	operatorKMS                    = "kms"
)

// objectEncodingUTF8 is how the service stores identity certificates in the Key Vault.
const objectEncodingUTF8 hyperv1.ObjectEncodingFormat = "utf-8"

// identities maps a cluster's operator identities to HyperShift's managed identities. HyperShift
// reads each control plane identity's certificate from a Key Vault secret that the service
// writes, so the secret names are the service's, derived from the cluster ID and the operator;
// client IDs come from spec.identity, where ARM reports them, and are left out when unknown.
type identities struct {
	clusterID string
	spec      *v1alpha1.HCPClusterSpec
	// errs are the client IDs HyperShift would refuse, each reported once, since operators may
	// share an identity.
	errs     field.ErrorList
	reported map[string]bool
}

func newIdentities(c *v1alpha1.HCPCluster) *identities {
	return &identities{clusterID: c.Status.ClusterID, spec: &c.Spec, reported: map[string]bool{}}
}

func (r *identities) managed(o Options) *hyperv1.AzureResourceManagedIdentities {
	tenantID := o.ManagedIdentitiesTenantID
	if tenantID == "" {
		tenantID = r.spec.Azure.TenantID
	}
	return &hyperv1.AzureResourceManagedIdentities{
		ControlPlane: hyperv1.ControlPlaneManagedIdentities{
			ManagedIdentitiesKeyVault: hyperv1.ManagedAzureKeyVault{Name: o.ManagedIdentitiesKeyVault, TenantID: tenantID},
			CloudProvider:             r.controlPlane(operatorCloudControllerManager),
			NodePoolManagement:        r.controlPlane(operatorClusterAPIAzure),
			ControlPlaneOperator:      r.controlPlane(operatorControlPlane),
			ImageRegistry:             r.controlPlane(operatorImageRegistry),
			Ingress:                   r.controlPlane(operatorIngress),
			Network:                   r.controlPlane(operatorCloudNetworkConfig),
			Disk:                      r.controlPlane(operatorDiskCSIDriver),
			File:                      r.controlPlane(operatorFileCSIDriver),
		},
		DataPlane: hyperv1.DataPlaneManagedIdentities{
			ImageRegistryMSIClientID: r.dataPlaneClientID(operatorImageRegistry),
			DiskMSIClientID:          r.dataPlaneClientID(operatorDiskCSIDriver),
			FileMSIClientID:          r.dataPlaneClientID(operatorFileCSIDriver),
		},
	}
}

// controlPlane is the HyperShift identity of a control plane operator.
func (r *identities) controlPlane(operator string) hyperv1.ManagedIdentity {
	ids := r.spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators
	return hyperv1.ManagedIdentity{
		ClientID:              hyperv1.AzureClientID(r.clientID(ids[operator])),
		ObjectEncoding:        objectEncodingUTF8,
		CredentialsSecretName: r.clusterID + "-" + operator,
	}
}

func (r *identities) dataPlaneClientID(operator string) string {
	return r.clientID(r.spec.Platform.OperatorsAuthentication.UserAssignedIdentities.DataPlaneOperators[operator])
}

// clientID finds the client ID that spec.identity reports for the identity resourceID; "" when
// it does not. ARM IDs compare without case.
func (r *identities) clientID(resourceID string) string {
	if resourceID == "" || r.spec.Identity == nil {
		return ""
	}
	assigned := r.spec.Identity.UserAssignedIdentities
	for _, key := range slices.Sorted(maps.Keys(assigned)) {
		if !strings.EqualFold(key, resourceID) {
			continue
		}
		id := assigned[key].ClientID
		if id != "" && !apivalidation.IsUUID(id) {
			if !r.reported[key] {
				r.reported[key] = true
				r.errs = append(r.errs, field.Invalid(field.NewPath("spec", "identity", "userAssignedIdentities").Key(key).Child("clientID"),
					id, "must be a UUID such as 00000000-0000-0000-0000-000000000000"))
			}
			return ""
		}
		return id
	}
	return ""
}
