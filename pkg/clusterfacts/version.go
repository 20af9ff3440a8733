package clusterfacts

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// VersionResolution is what a cluster's status says of its version: the release it resolved to (desired,
// or the current one kept when nothing resolves) and the VersionResolved condition, minus the
// generation, which the caller's object has.
type VersionResolution struct {
	Desired   string
	Condition metav1.Condition
}

// ResolveVersion resolves a cluster's spec.version (MAJOR.MINOR in a channel group) to a release of the
// catalog; desired is what the cluster's status holds now. The registry calls it when a cluster is
// created or its version changes, the version controller when the catalog does.
func ResolveVersion(catalog *versioncatalog.Catalog, channelGroup, id, desired string) VersionResolution {
	r := catalog.ResolveCluster(channelGroup, id, desired)
	status := metav1.ConditionFalse
	if r.Resolved {
		status = metav1.ConditionTrue
		desired = r.Desired
	}
	return VersionResolution{Desired: desired, Condition: metav1.Condition{
		Type: hcp.ConditionVersionResolved, Status: status, Reason: r.Reason, Message: r.Message,
	}}
}
