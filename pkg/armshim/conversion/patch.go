package conversion

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// In a JSON merge patch (RFC 7386) a null removes a field. A PUT that leaves out a create-only field
// keeps it, so the merged document alone cannot tell "left alone" from "removed": a PATCH's removals
// are checked here, against the fields each document marks required or create-only (x-ms-mutability
// [read, create]). The lists hold every such field of any api-version; a field a version lacks is not
// in its documents, so a patch cannot remove it. TestRemovableFieldsAreTheSpecs checks them against
// the four documents.

// requiredFields must be in every PUT, so a PATCH cannot remove them.
var requiredFields = map[names.Kind][]string{
	names.KindCluster: {
		"location",
		"properties",
		"properties.version",
		"properties.version.id",
		"properties.platform",
		"properties.platform.subnetId",
		"properties.platform.vnetIntegrationSubnetId",
		"properties.platform.networkSecurityGroupId",
		"properties.platform.operatorsAuthentication",
		"properties.platform.operatorsAuthentication.userAssignedIdentities",
		"properties.platform.operatorsAuthentication.userAssignedIdentities.controlPlaneOperators",
		"properties.platform.operatorsAuthentication.userAssignedIdentities.dataPlaneOperators",
		"properties.platform.operatorsAuthentication.userAssignedIdentities.serviceManagedIdentity",
		"properties.etcd.dataEncryption.keyManagementMode",
		"properties.etcd.dataEncryption.customerManaged.kms.vaultName",
		"properties.etcd.dataEncryption.customerManaged.kms.visibility",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey.vaultName",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey.name",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey.version",
	},
	names.KindNodePool: {
		"location",
		"properties",
		"properties.version.id",
		"properties.platform",
		"properties.platform.vmSize",
	},
	names.KindExternalAuth: {
		"properties",
		"properties.issuer",
		"properties.issuer.url",
		"properties.issuer.audiences",
		"properties.claim",
		"properties.claim.mappings",
		"properties.claim.mappings.username",
		"properties.claim.mappings.username.claim",
		"properties.claim.mappings.groups.claim",
	},
}

// createOnlyFields cannot change once the resource exists; removing one would change it. An external
// auth has none.
var createOnlyFields = map[names.Kind][]string{
	names.KindCluster: {
		"location",
		"properties.version.id",
		"properties.dns.baseDomainPrefix",
		"properties.network.networkType",
		"properties.network.podCidr",
		"properties.network.serviceCidr",
		"properties.network.machineCidr",
		"properties.network.hostPrefix",
		"properties.api.visibility",
		"properties.ingress.type",
		"properties.platform.managedResourceGroup",
		"properties.platform.subnetId",
		"properties.platform.vnetIntegrationSubnetId",
		"properties.platform.outboundType",
		"properties.platform.networkSecurityGroupId",
		"properties.etcd.dataEncryption.keyManagementMode",
		"properties.etcd.dataEncryption.customerManaged.encryptionType",
		"properties.etcd.dataEncryption.customerManaged.kms.vaultName",
		"properties.etcd.dataEncryption.customerManaged.kms.visibility",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey.vaultName",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey.name",
		"properties.etcd.dataEncryption.customerManaged.kms.activeKey.version",
		"properties.clusterImageRegistry.state",
		"properties.cryptoRestrictions",
	},
	names.KindNodePool: {
		"location",
		"properties.platform.subnetId",
		"properties.platform.vmSize",
		"properties.platform.enableEncryptionAtHost",
		"properties.platform.osDisk.sizeGiB",
		"properties.platform.osDisk.diskStorageAccountType",
		"properties.platform.osDisk.encryptionSetId",
		"properties.platform.osDisk.diskType",
		"properties.platform.availabilityZone",
		"properties.autoRepair",
	},
}

// optionalObjects may be removed whole though a field inside them is required: the field is required
// only of an object that is there.
var optionalObjects = map[names.Kind][]string{
	names.KindExternalAuth: {"properties.claim.mappings.groups"},
}

// requiredIn tells whether path is required in v: 2025-12-23-preview made version and version.id
// required (before, a cluster's version.id was create-only and a node pool's optional).
func requiredIn(v APIVersion, kind names.Kind, path string) bool {
	if (path == "properties.version" || path == "properties.version.id") && !v.atLeast(V20251223Preview) {
		return false
	}
	return slices.Contains(requiredFields[kind], path)
}

// createOnlyIn tells whether path cannot change in v once the resource exists.
func createOnlyIn(v APIVersion, kind names.Kind, path string) bool {
	if kind == names.KindCluster {
		switch {
		case path == "properties.version.id":
			return !v.versionIDUpdatable()
		case path == "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version":
			return !v.kmsKeyVersionUpdatable()
		}
	}
	return slices.Contains(createOnlyFields[kind], path)
}

// CheckRemovals refuses the nulls of a JSON merge patch that would remove, from the resource as
// current shows it in v, a required field or one that cannot change once the resource exists (itself
// or a field inside it). Errors name the ARM path of the null.
func CheckRemovals(v APIVersion, kind names.Kind, current, patch map[string]any) field.ErrorList {
	var errs field.ErrorList
	var walk func(prefix string, cur, p map[string]any)
	walk = func(prefix string, cur, p map[string]any) {
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := k
			if prefix != "" {
				path = prefix + "." + k
			}
			held, present := cur[k]
			if !present {
				continue
			}
			switch pv := p[k].(type) {
			case nil:
				if e := removal(v, kind, path, held); e != nil {
					errs = append(errs, e)
				}
			case map[string]any:
				if heldMap, ok := held.(map[string]any); ok {
					walk(path, heldMap, pv)
				}
			}
		}
	}
	walk("", current, patch)
	return errs
}

// removal is the error of removing path, which holds held, or nil when it may go.
func removal(v APIVersion, kind names.Kind, path string, held any) *field.Error {
	fp := fieldPath(path)
	if requiredIn(v, kind, path) {
		return field.Required(fp, "is required and cannot be removed")
	}
	if createOnlyIn(v, kind, path) {
		return field.Forbidden(fp, "cannot be removed: it cannot be changed once the resource exists")
	}
	if slices.Contains(optionalObjects[kind], path) {
		return nil
	}
	// An object goes with everything in it.
	var inside string
	var find func(prefix string, m map[string]any) bool
	find = func(prefix string, m map[string]any) bool {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := prefix + "." + k
			if requiredIn(v, kind, p) || createOnlyIn(v, kind, p) {
				inside = p
				return true
			}
			if child, ok := m[k].(map[string]any); ok && find(p, child) {
				return true
			}
		}
		return false
	}
	if m, ok := held.(map[string]any); ok && find(path, m) {
		return field.Forbidden(fp, "cannot be removed: "+inside+" in it cannot be changed once the resource exists")
	}
	return nil
}

func fieldPath(path string) *field.Path {
	parts := strings.Split(path, ".")
	return field.NewPath(parts[0], parts[1:]...)
}
