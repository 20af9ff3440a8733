package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The defaults are ARM's, from the 2026-09-01-preview OpenAPI document.
const (
	DefaultChannelGroup             = "stable"
	DefaultNetworkType              = "OVNKubernetes"
	DefaultPodCIDR                  = "10.128.0.0/14"
	DefaultServiceCIDR              = "172.30.0.0/16"
	DefaultMachineCIDR              = "10.0.0.0/16"
	DefaultHostPrefix         int32 = 23
	DefaultVisibility               = "Public"
	DefaultOutboundType             = "LoadBalancer"
	DefaultImageRegistry            = "Enabled"
	DefaultCryptoRestrictions       = "None"
	DefaultEncryptionType           = "KMS"
	DefaultOSDiskSizeGiB      int32 = 64
	DefaultDiskStorageType          = "Premium_LRS"
	DefaultDiskType                 = "Managed"
	DefaultUpgradeType              = "Replace"
	// DefaultExpirationSeconds is the longest a break-glass credential lives: 24 hours.
	DefaultExpirationSeconds int64 = 24 * 60 * 60
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_HCPClusterSpec fills what ARM fills when a request leaves it out.
func SetDefaults_HCPClusterSpec(spec *HCPClusterSpec) {
	setDefault(&spec.Version.ChannelGroup, DefaultChannelGroup)
	setDefault(&spec.Network.NetworkType, DefaultNetworkType)
	setDefault(&spec.Network.PodCIDR, DefaultPodCIDR)
	setDefault(&spec.Network.ServiceCIDR, DefaultServiceCIDR)
	setDefault(&spec.Network.MachineCIDR, DefaultMachineCIDR)
	if spec.Network.HostPrefix == 0 {
		spec.Network.HostPrefix = DefaultHostPrefix
	}
	setDefault(&spec.API.Visibility, DefaultVisibility)
	setDefault(&spec.Ingress.Type, DefaultVisibility)
	setDefault(&spec.Platform.OutboundType, DefaultOutboundType)
	setDefault(&spec.ClusterImageRegistry.State, DefaultImageRegistry)
	setDefault(&spec.CryptoRestrictions, DefaultCryptoRestrictions)
	if cm := spec.Etcd.DataEncryption; cm != nil && cm.CustomerManaged != nil {
		setDefault(&cm.CustomerManaged.EncryptionType, DefaultEncryptionType)
	}
}

// SetDefaults_NodePoolSpec fills what ARM fills when a request leaves it out.
func SetDefaults_NodePoolSpec(spec *NodePoolSpec) {
	if spec.Version.ID != "" {
		setDefault(&spec.Version.ChannelGroup, DefaultChannelGroup)
	}
	if spec.AutoRepair == nil {
		spec.AutoRepair = ptr.To(true)
	}
	if spec.Platform.OSDisk.SizeGiB == 0 {
		spec.Platform.OSDisk.SizeGiB = DefaultOSDiskSizeGiB
	}
	setDefault(&spec.Platform.OSDisk.DiskStorageAccountType, DefaultDiskStorageType)
	setDefault(&spec.Platform.OSDisk.DiskType, DefaultDiskType)
	setDefault(&spec.UpgradeType, DefaultUpgradeType)
}

// SetDefaults_ExternalAuthSpec fills what ARM fills when a request leaves it out: the type of a claim
// validation rule, and the username prefix policy (None: the platform's choice).
func SetDefaults_ExternalAuthSpec(spec *ExternalAuthSpec) {
	for i := range spec.Claim.ValidationRules {
		setDefault(&spec.Claim.ValidationRules[i].Type, TokenValidationRuleRequiredClaim)
	}
	setDefault(&spec.Claim.Mappings.Username.PrefixPolicy, UsernamePrefixPolicyNone)
}

// SetDefaults_BreakglassCredentialSpec gives a credential the longest allowed life unless asked otherwise.
func SetDefaults_BreakglassCredentialSpec(spec *BreakglassCredentialSpec) {
	if spec.ExpirationSeconds == nil {
		spec.ExpirationSeconds = ptr.To(DefaultExpirationSeconds)
	}
}

// SetDefaults_ManagementClusterSpec makes a new management cluster schedulable.
func SetDefaults_ManagementClusterSpec(spec *ManagementClusterSpec) {
	if spec.Schedulable == nil {
		spec.Schedulable = ptr.To(true)
	}
}

func setDefault[T ~string](field *T, value T) {
	if *field == "" {
		*field = value
	}
}

// An inspection lives 15 minutes and reads a log's last 100 lines unless it asks otherwise.
const (
	DefaultInspectionTTLSeconds int64 = 15 * 60
	DefaultInspectionTailLines  int64 = 100
)

// SetDefaults_ClusterInspectionSpec fills the inspection's time to live and, for the logs view, its tail.
func SetDefaults_ClusterInspectionSpec(spec *ClusterInspectionSpec) {
	if spec.TTLSeconds == nil {
		spec.TTLSeconds = ptr.To(DefaultInspectionTTLSeconds)
	}
	if spec.View == InspectionViewLogs && spec.TailLines == nil {
		spec.TailLines = ptr.To(DefaultInspectionTailLines)
	}
}
