#!/usr/bin/env bash
# Builds the real components the tests run against into _output/tools/<version>/:
# kube-apiserver and kube-controller-manager (k8s.io/kubernetes) and etcd (go.etcd.io/etcd/server/v3), at the
# versions hack/tools/go.mod pins, and the open-cluster-management work agent (open-cluster-management.io/ocm,
# the agent Maestro runs) as ocm-work-agent, at the version hack/ocm-agent/go.mod pins. A binary is rebuilt
# only when missing, so the first run takes a while (kube-apiserver: about 12 minutes on 2 cores; the work
# agent: about 25 minutes on a loaded one) and later runs take a second. Prints nothing but what it builds.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="${ROOT}/hack/tools"

# version_of prints the version of a module that the tools module in $2 (default hack/tools) requires.
version_of() { (cd "${2:-${TOOLS}}" && go list -m -f '{{.Version}}' "$1"); }

# build builds package $2 of module $3 as _output/tools/$1, with extra ldflags $4, in the tools module
# $5 (default hack/tools).
build() {
    local name=$1 pkg=$2 module=$3 ldflags=${4:-} tools=${5:-${TOOLS}}
    local version
    version=$(version_of "${module}" "${tools}")
    local dir="${ROOT}/_output/tools/${name}-${version}"
    if [[ ! -x "${dir}/${name}" ]]; then
        echo "Building ${name} from ${module}@${version} into ${dir} (once; it is cached there)"
        mkdir -p "${dir}"
        (cd "${tools}" && CGO_ENABLED=0 go build -trimpath -ldflags="-s ${ldflags}" -o "${dir}/${name}.tmp" "${pkg}")
        mv "${dir}/${name}.tmp" "${dir}/${name}"
    fi
    ln -sfn "${dir}/${name}" "${ROOT}/_output/tools/${name}"
}

build etcd go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3
# kube-apiserver reports the version it was stamped with, as a release build does.
kube_version=$(version_of k8s.io/kubernetes)
kube_minor=${kube_version#v1.}
kube_minor=${kube_minor%%.*}
kube_ldflags="-X k8s.io/component-base/version.gitVersion=${kube_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${kube_minor}"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes "${kube_ldflags}"
# The garbage collector and the namespace controller finish foreground and namespace deletes on the
# management cluster, as they do on a real one.
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes "${kube_ldflags}"

# The open-cluster-management work agent, which the e2e tests run in place of maestro-agent. Its own
# module keeps ocm's Kubernetes libraries out of hack/tools. The tests also read its AppliedManifestWork
# CRD from the module cache, so the module stays downloaded when the binary is already built.
ocm_tools="${ROOT}/hack/ocm-agent"
ocm_version=$(version_of open-cluster-management.io/ocm "${ocm_tools}")
build ocm-work-agent open-cluster-management.io/ocm/cmd/work open-cluster-management.io/ocm \
    "-X open-cluster-management.io/ocm/pkg/version.versionFromGit=${ocm_version}" "${ocm_tools}"
(cd "${ocm_tools}" && go mod download open-cluster-management.io/ocm)
