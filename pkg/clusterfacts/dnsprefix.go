package clusterfacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
)

// clusterIDLength is the length of the UUID a new cluster is given as its ID.
const clusterIDLength = 36

// prefixHashLength is how many hex digits of the name's hash end a prefix cut from a long name.
const prefixHashLength = 4

// PrefixRoom is the longest DNS prefix a cluster can have in the environment env: the prefix names the
// HostedCluster, and HyperShift runs its control plane in the namespace ocm-<env>-<clusterID>-<prefix>,
// which has to be a DNS label.
func PrefixRoom(env string) int {
	room := k8svalidation.DNS1123LabelMaxLength - len(Namespace(env, "")) - clusterIDLength - 1
	return min(room, validation.BaseDomainPrefixMaxLength)
}

// DerivedBaseDomainPrefix is the DNS prefix of a cluster created without one, as the service derives it:
// the cluster's name when it fits in room, and otherwise the name's start and a hash of the whole name, so
// that a retried create derives the same prefix and two long names that start alike differ. Cluster
// names start with a letter and hold lowercase letters, digits and '-', as prefixes do.
func DerivedBaseDomainPrefix(name string, room int) string {
	if len(name) <= room {
		return name
	}
	if room <= prefixHashLength+1 {
		// An environment this long leaves no room for a hash; ValidatePrefixRoom says so.
		return name[:max(room, 1)]
	}
	sum := sha256.Sum256([]byte(name))
	start := strings.TrimRight(name[:room-prefixHashLength-1], "-")
	return start + "-" + hex.EncodeToString(sum[:])[:prefixHashLength]
}

// ValidatePrefixRoom refuses, on create, a DNS prefix too long for the environment's namespaces, which
// HyperShift would otherwise refuse once the cluster is delivered. Longer than the API allows at all is
// validation's error, not this one.
func ValidatePrefixRoom(fldPath *field.Path, prefix, env string) field.ErrorList {
	room := PrefixRoom(env)
	if len(prefix) > room && len(prefix) <= validation.BaseDomainPrefixMaxLength {
		return field.ErrorList{field.Invalid(fldPath, prefix,
			fmt.Sprintf("must be at most %d characters in this service's environment (%s), whose control plane namespaces hold it", room, env))}
	}
	return nil
}
