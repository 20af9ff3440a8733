package integration

import (
	"strconv"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"

	"github.com/aro-hcp/hcp-apiserver/pkg/version"
)

// TestVersionIsSemver checks /version: kubectl version parses gitVersion as semver and fails when it is not.
func TestVersionIsSemver(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	v, err := utilversion.ParseSemantic(info.GitVersion)
	if err != nil {
		t.Fatalf("/version gitVersion %q is not semver: %v", info.GitVersion, err)
	}
	if want := version.Get().GitVersion; info.GitVersion != want {
		t.Errorf("/version gitVersion %q, want this build's %q", info.GitVersion, want)
	}
	if info.Major != strconv.Itoa(int(v.Major())) || info.Minor != strconv.Itoa(int(v.Minor())) {
		t.Errorf("/version major %q, minor %q do not match gitVersion %s", info.Major, info.Minor, info.GitVersion)
	}
	// The emulated Kubernetes version says which API behaviour clients get; it stays kube's.
	if info.EmulationMajor != "1" {
		t.Errorf("/version emulationMajor %q, want 1 (the Kubernetes version the server emulates)", info.EmulationMajor)
	}
}
