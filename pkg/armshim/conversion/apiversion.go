package conversion

import (
	"fmt"
	"slices"
)

// APIVersion is an ARM api-version of the resource provider.
type APIVersion string

const (
	V20240610Preview APIVersion = "2024-06-10-preview"
	V20251223Preview APIVersion = "2025-12-23-preview"
	V20260630Preview APIVersion = "2026-06-30-preview"
	V20260901Preview APIVersion = "2026-09-01-preview"
)

// APIVersions are the api-versions served, oldest first.
var APIVersions = []APIVersion{V20240610Preview, V20251223Preview, V20260630Preview, V20260901Preview}

// ParseAPIVersion returns the api-version of an api-version query parameter.
func ParseAPIVersion(s string) (APIVersion, error) {
	if v := APIVersion(s); slices.Contains(APIVersions, v) {
		return v, nil
	}
	return "", fmt.Errorf("api-version %q is not one of %v", s, APIVersions)
}

// atLeast compares two api-versions; their date form sorts as text.
func (v APIVersion) atLeast(o APIVersion) bool { return v >= o }

// What each api-version added, from the diff of the four OpenAPI documents.

// 2025-12-23-preview added the VNet integration subnet, image digest mirrors and the OS disk type,
// made a cluster's version.id updatable, and moved the KMS vaultName from activeKey up to kms, beside
// a new visibility.
func (v APIVersion) hasVnetIntegrationSubnet() bool { return v.atLeast(V20251223Preview) }
func (v APIVersion) hasImageDigestMirrors() bool    { return v.atLeast(V20251223Preview) }
func (v APIVersion) hasOSDiskType() bool            { return v.atLeast(V20251223Preview) }
func (v APIVersion) versionIDUpdatable() bool       { return v.atLeast(V20251223Preview) }
func (v APIVersion) vaultNameInKeyProfile() bool    { return !v.atLeast(V20251223Preview) }

// 2026-06-30-preview added status.conditions (an external auth had one condition before), ingress and
// cryptoRestrictions, made the KMS key version updatable (before, all of etcd was create-only), and
// dropped PlatformManaged key management.
func (v APIVersion) hasStatusConditions() bool    { return v.atLeast(V20260630Preview) }
func (v APIVersion) hasIngress() bool             { return v.atLeast(V20260630Preview) }
func (v APIVersion) hasCryptoRestrictions() bool  { return v.atLeast(V20260630Preview) }
func (v APIVersion) kmsKeyVersionUpdatable() bool { return v.atLeast(V20260630Preview) }
func (v APIVersion) hasPlatformManagedEtcd() bool { return !v.atLeast(V20260630Preview) }

// 2026-09-01-preview changed only the requestAdminCredential body, which is not converted here.
