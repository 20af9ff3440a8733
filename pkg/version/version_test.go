package version

import (
	"runtime/debug"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

func TestGet(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name                              string
		stamped                           string
		bi                                *debug.BuildInfo
		wantVersion, wantMajor, wantMinor string
		wantCommit, wantTreeState         string
	}{
		{name: "stamped by make build", stamped: "v0.3.0-5-g0123abc", bi: &debug.BuildInfo{Settings: vcs},
			wantVersion: "v0.3.0-5-g0123abc", wantMajor: "0", wantMinor: "3"},
		{name: "stamped before the first tag", stamped: "v0.0.0-dev+0123abc",
			wantVersion: "v0.0.0-dev+0123abc", wantMajor: "0", wantMinor: "0"},
		{name: "go run: no stamp, no module version", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			wantVersion: Unstamped, wantMajor: "0", wantMinor: "0"},
		{name: "go install of a release", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			wantVersion: "v1.2.3", wantMajor: "1", wantMinor: "2"},
		{name: "go build in a clone: pseudo-version and commit",
			bi:          &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260721132016-d427ff9ee9ad+dirty"}, Settings: vcs},
			wantVersion: "v0.0.0-20260721132016-d427ff9ee9ad+dirty", wantMajor: "0", wantMinor: "0",
			wantCommit: "0123abcd", wantTreeState: "dirty"},
		{name: "kube's placeholder is not semver", stamped: "v0.0.0-master+$Format:%H$",
			wantVersion: Unstamped, wantMajor: "0", wantMinor: "0"},
		{name: "no build info", wantVersion: Unstamped, wantMajor: "0", wantMinor: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := get(apimachineryversion.Info{GitVersion: tc.stamped}, tc.bi)
			if got.GitVersion != tc.wantVersion || got.Major != tc.wantMajor || got.Minor != tc.wantMinor {
				t.Errorf("got %s (major %q, minor %q), want %s (%q, %q)", got.GitVersion, got.Major, got.Minor,
					tc.wantVersion, tc.wantMajor, tc.wantMinor)
			}
			if got.GitCommit != tc.wantCommit || got.GitTreeState != tc.wantTreeState {
				t.Errorf("got commit %q, tree %q; want %q, %q", got.GitCommit, got.GitTreeState, tc.wantCommit, tc.wantTreeState)
			}
		})
	}
}

// TestGetOfThisBinary checks the version an unstamped build (this test) reports is semver.
func TestGetOfThisBinary(t *testing.T) {
	info := Get()
	if _, err := utilversion.ParseSemantic(info.GitVersion); err != nil {
		t.Errorf("GitVersion %q: %v", info.GitVersion, err)
	}
	if info.GoVersion == "" || info.Platform == "" {
		t.Errorf("missing Go version or platform: %+v", info)
	}
}
