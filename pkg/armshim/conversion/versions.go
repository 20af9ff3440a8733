package conversion

// Going from the newest shape to an older api-version's and back. The same pruning runs on requests
// (a field the version lacks is ignored, so the stored value stays) and on responses (a field the
// version lacks is not shown).

// clusterForVersion drops the fields v lacks from c and moves the KMS vault name to where v has it.
// A response is built in the newest shape and passed through it.
func clusterForVersion(v APIVersion, c *Cluster) {
	p := c.Properties
	if p == nil {
		return
	}
	if !v.hasImageDigestMirrors() {
		p.ImageDigestMirrors = nil
	}
	if !v.hasIngress() {
		p.Ingress = nil
	}
	if !v.hasCryptoRestrictions() {
		p.CryptoRestrictions = nil
	}
	if !v.hasStatusConditions() {
		p.Status = nil
	}
	if p.Platform != nil && !v.hasVnetIntegrationSubnet() {
		p.Platform.VnetIntegrationSubnetID = nil
	}
	if kms := kmsOf(p); kms != nil {
		if v.vaultNameInKeyProfile() {
			if kms.ActiveKey == nil {
				kms.ActiveKey = &KMSKey{}
			}
			kms.ActiveKey.VaultName, kms.VaultName, kms.Visibility = kms.VaultName, nil, nil
		} else if kms.ActiveKey != nil {
			kms.ActiveKey.VaultName = nil
		}
	}
}

// clusterRequestToNewest is clusterForVersion's inverse for a request: it drops what v lacks (so
// that it is ignored) and moves a 2024-06-10-preview vault name to kms.vaultName.
func clusterRequestToNewest(v APIVersion, c *Cluster) {
	kms := kmsOf(c.Properties)
	var vaultName *string
	if kms != nil && kms.ActiveKey != nil {
		vaultName = kms.ActiveKey.VaultName
	}
	clusterForVersion(v, c)
	if kms != nil && v.vaultNameInKeyProfile() {
		kms.VaultName = vaultName
		if kms.ActiveKey != nil {
			kms.ActiveKey.VaultName = nil
		}
	}
}

func kmsOf(p *ClusterProperties) *KMSEncryptionProfile {
	if p == nil || p.Etcd == nil || p.Etcd.DataEncryption == nil || p.Etcd.DataEncryption.CustomerManaged == nil {
		return nil
	}
	return p.Etcd.DataEncryption.CustomerManaged.KMS
}

// nodePoolForVersion drops the fields v lacks from np, for a request or a response.
func nodePoolForVersion(v APIVersion, np *NodePool) {
	p := np.Properties
	if p == nil {
		return
	}
	if !v.hasStatusConditions() {
		p.Status = nil
	}
	if p.Platform != nil && p.Platform.OSDisk != nil && !v.hasOSDiskType() {
		p.Platform.OSDisk.DiskType = nil
	}
}

// externalAuthForVersion shows an external auth's state as v has it: one condition before
// 2026-06-30-preview, status.conditions from it on. Both are read-only, so a request's are dropped
// here too.
func externalAuthForVersion(v APIVersion, ea *ExternalAuth) {
	p := ea.Properties
	if p == nil {
		return
	}
	if v.hasStatusConditions() {
		p.Condition = nil
	} else {
		p.Status = nil
	}
}
