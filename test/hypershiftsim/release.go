package hypershiftsim

import (
	"regexp"
	"strings"
)

// The architecture suffixes of OpenShift release image tags, and the
// status.payloadArch each stands for.
var tagArchitectures = map[string]string{
	"x86_64":  "AMD64",
	"aarch64": "ARM64",
	"multi":   "Multi",
	"ppc64le": "PPC64LE",
	"s390x":   "S390X",
}

var semverPrefix = regexp.MustCompile(`^\d+\.\d+\.\d+`)

// VersionFromReleaseImage reads the OpenShift version from a release image tag:
// quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64 is 4.20.8, and
// ...:4.21.0-rc.1-multi is 4.21.0-rc.1. The real operator reads the version from
// the release payload; a digest-only image (...@sha256:...) cannot be read here.
func VersionFromReleaseImage(image string) (string, bool) {
	tag, ok := releaseTag(image)
	if !ok {
		return "", false
	}
	if i := strings.LastIndex(tag, "-"); i > 0 {
		if _, known := tagArchitectures[tag[i+1:]]; known {
			tag = tag[:i]
		}
	}
	if !semverPrefix.MatchString(tag) {
		return "", false
	}
	return tag, true
}

// payloadArch is the status.payloadArch of a release image, "" when the tag does not say.
func payloadArch(image string) string {
	tag, ok := releaseTag(image)
	if !ok {
		return ""
	}
	if i := strings.LastIndex(tag, "-"); i > 0 {
		return tagArchitectures[tag[i+1:]]
	}
	return ""
}

// releaseTag is the tag of an image reference, without any digest.
func releaseTag(image string) (string, bool) {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i+1:], "/") {
		return "", false
	}
	return image[i+1:], true
}
