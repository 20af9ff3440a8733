// Package version says which build of hcp-apiserver and maestro-agent is running: the server's /version
// serves it and --version prints it. It is this project's version, not an OpenShift release (those are in
// pkg/versioncatalog).
//
// `make build` stamps it from git with -ldflags. A build without them (go run, go test, go install) takes
// the module version Go recorded in the binary, or v0.0.0-dev. Either way it is semver, which kubectl
// version requires of a server.
package version

import (
	"runtime"
	"runtime/debug"
	"strconv"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// Set with -ldflags "-X github.com/aro-hcp/hcp-apiserver/pkg/version.gitVersion=..." (see the Makefile).
var (
	gitVersion   string // git describe: v0.3.0 or v0.3.0-5-g0123abc; v0.0.0-dev+0123abc before the first tag
	gitCommit    string // git rev-parse HEAD
	gitTreeState string // clean or dirty
	buildDate    string // RFC 3339, UTC
)

// Unstamped is the version of a build that carries none.
const Unstamped = "v0.0.0-dev"

// Get returns the version of this binary.
func Get() apimachineryversion.Info {
	bi, _ := debug.ReadBuildInfo()
	return get(apimachineryversion.Info{
		GitVersion:   gitVersion,
		GitCommit:    gitCommit,
		GitTreeState: gitTreeState,
		BuildDate:    buildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}, bi)
}

// get completes what was stamped with what Go recorded about the build (bi may be nil), and keeps
// GitVersion semver: a stamp that is not gives way to the module's version or to Unstamped.
func get(info apimachineryversion.Info, bi *debug.BuildInfo) apimachineryversion.Info {
	v, err := utilversion.ParseSemantic(info.GitVersion)
	if err != nil {
		info.GitVersion = Unstamped
		if bi != nil {
			// go install ...@v0.3.0 records v0.3.0; go build records a pseudo-version from the VCS, or (devel).
			if _, err := utilversion.ParseSemantic(bi.Main.Version); err == nil {
				info.GitVersion = bi.Main.Version
			}
			for _, s := range bi.Settings {
				switch {
				case s.Key == "vcs.revision" && info.GitCommit == "":
					info.GitCommit = s.Value
				case s.Key == "vcs.modified" && info.GitTreeState == "":
					info.GitTreeState = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
				}
			}
		}
		v = utilversion.MustParseSemantic(info.GitVersion)
	}
	info.Major, info.Minor = strconv.Itoa(int(v.Major())), strconv.Itoa(int(v.Minor()))
	return info
}
