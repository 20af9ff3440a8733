package app

import (
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/aro-hcp/hcp-apiserver/pkg/version"
)

// buildVersion is the Kubernetes effective version (which features and API behaviour the server has)
// that reports this build's version at /version, where kube's would report k8s.io/component-base's
// unstamped placeholder, which is not semver and which kubectl version cannot parse.
type buildVersion struct {
	basecompatibility.EffectiveVersion
}

func withBuildVersion(v basecompatibility.EffectiveVersion) basecompatibility.EffectiveVersion {
	return buildVersion{EffectiveVersion: v}
}

// Info keeps the emulated Kubernetes version and takes the rest from this build.
func (v buildVersion) Info() *apimachineryversion.Info {
	info := version.Get()
	if kube := v.EffectiveVersion.Info(); kube != nil {
		info.EmulationMajor, info.EmulationMinor = kube.EmulationMajor, kube.EmulationMinor
		info.MinCompatibilityMajor, info.MinCompatibilityMinor = kube.MinCompatibilityMajor, kube.MinCompatibilityMinor
	}
	return &info
}
