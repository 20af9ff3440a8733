#!/usr/bin/env bash
# Builds the real components the tests run against into _output/tools/<version>/:
# kube-apiserver and kube-controller-manager (k8s.io/kubernetes) and etcd (go.etcd.io/etcd/server/v3), at the
# versions hack/tools/go.mod pins. A binary is rebuilt only when missing, so the
# first run takes a while (kube-apiserver: about 12 minutes on 2 cores) and later
# runs take a second. Prints nothing but what it builds.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="${ROOT}/hack/tools"

version_of() { (cd "${TOOLS}" && go list -m -f '{{.Version}}' "$1"); }

build() {
    local name=$1 pkg=$2 module=$3 ldflags=${4:-}
    local dir="${ROOT}/_output/tools/${name}-$(version_of "${module}")"
    if [[ ! -x "${dir}/${name}" ]]; then
        echo "Building ${name} from ${module}@$(version_of "${module}") into ${dir} (once; it is cached there)"
        mkdir -p "${dir}"
        (cd "${TOOLS}" && CGO_ENABLED=0 go build -trimpath -ldflags="-s ${ldflags}" -o "${dir}/${name}.tmp" "${pkg}")
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
