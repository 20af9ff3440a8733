// Package admission lists the service's admission plugins: the policies that read
// other objects, the version catalog or the caller, as opposed to validation,
// which looks at one object alone. Each plugin lives in a folder of its own,
// decides and never acts, and names itself in every refusal. A plugin only reads:
// a rule that must hold while requests race (a uniqueness, a count over several
// objects) is the storage's, kept with claims and locks in etcd (pkg/registry/claims),
// and listed with its race test in the README's Admission section.
package admission

import (
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/pkg/admission/breakglasspolicy"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/clusterreference"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/managementclusterprotection"
	"github.com/aro-hcp/hcp-apiserver/pkg/admission/versionpolicy"
)

// OrderedPlugins are the service's plugins in the order they run; all are on by default.
var OrderedPlugins = []string{
	clusterreference.PluginName,
	versionpolicy.PluginName,
	breakglasspolicy.PluginName,
	managementclusterprotection.PluginName,
}

// RegisterAll registers every plugin of the service.
func RegisterAll(plugins *admission.Plugins) {
	clusterreference.Register(plugins)
	versionpolicy.Register(plugins)
	breakglasspolicy.Register(plugins)
	managementclusterprotection.Register(plugins)
}
