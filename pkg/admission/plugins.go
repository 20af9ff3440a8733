// Package admission lists the service's admission plugins: the rules that need
// other objects, the version catalog or the caller, as opposed to validation,
// which looks at one object alone. Each plugin lives in a folder of its own,
// decides and never acts, and names itself in every refusal.
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
