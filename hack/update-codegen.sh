#!/usr/bin/env bash
# Regenerates everything under pkg/generated/ and every zz_generated.* file from
# the API types in apis/. Run it after changing a type; CI runs verify-codegen.sh.
set -o errexit -o nounset -o pipefail

SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${SCRIPT_ROOT}"

# module_dir prints where module $1 (of the module in the current directory) lies in the module
# cache, downloading it first: "go list -m -f {{.Dir}}" alone prints nothing for a module that is
# not downloaded yet, as on a fresh machine or in CI, which runs with an empty module cache.
module_dir() {
    go mod download "$1"
    go list -m -f '{{.Dir}}' "$1"
}

CODEGEN_PKG=${CODEGEN_PKG:-$(module_dir k8s.io/code-generator)}
THIS_PKG=github.com/aro-hcp/hcp-apiserver
BOILERPLATE="${SCRIPT_ROOT}/hack/boilerplate.go.txt"

source "${CODEGEN_PKG}/kube_codegen.sh"

kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" "${SCRIPT_ROOT}/apis"

# autoscaling/v1 is there for the Scale that nodepools/scale serves.
kube::codegen::gen_openapi \
    --extra-pkgs k8s.io/api/autoscaling/v1 \
    --output-dir "${SCRIPT_ROOT}/pkg/generated/openapi" \
    --output-pkg "${THIS_PKG}/pkg/generated/openapi" \
    --output-model-name-file zz_generated.model_name.go \
    --report-filename "${SCRIPT_ROOT}/hack/api-rules-violations.list" \
    --update-report \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/apis"

kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --applyconfig-openapi-schema <(go run ./hack/models-schema) \
    --output-dir "${SCRIPT_ROOT}/pkg/generated" \
    --output-pkg "${THIS_PKG}/pkg/generated" \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/apis"

# Protobuf: every package under apis/ whose doc.go says +k8s:protobuf-gen=package
# (today only apis/hcp/v1alpha1; the internal apis/hcp has no tag and is skipped)
# gets zz_generated.proto and zz_generated.pb.go, and go-to-protobuf (re)writes the
# protobuf:"..." struct tags in its types*.go. Field numbers come from those tags,
# so keep them when editing a type. Needs protoc 3.x (Debian: protobuf-compiler).
(
    command -v protoc >/dev/null || { echo "protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
    pb_dirs=()
    PB_TMP=$(mktemp -d)
    # On failure go-to-protobuf may leave generated.proto/generated.pb.go behind: drop them too.
    trap 'rm -rf "${PB_TMP}"; for d in ${pb_dirs[@]+"${pb_dirs[@]}"}; do rm -f "${d}/generated.proto" "${d}/generated.pb.go"; done' EXIT

    pb_pkgs=()
    while read -r dir; do
        pb_dirs+=("${dir}")
        pb_pkgs+=("$(cd "${dir}" && GO111MODULE=on go list -find .)")
    done < <(
        ( grep -l --null -r -e '^\s*//\s*+k8s:protobuf-gen=package' --include '*.go' "${SCRIPT_ROOT}/apis" || true ) \
            | while read -r -d $'\0' F; do dirname "${F}"; done \
            | LC_ALL=C sort -u
    )
    if [ "${#pb_pkgs[@]}" = 0 ]; then
        exit 0
    fi
    echo "Generating protobuf code for ${#pb_pkgs[@]} targets"

    # The generators, built like kube_codegen.sh builds its own: from the
    # code-generator module (its go.sum covers gogo/protobuf, ours does not).
    ( cd "${CODEGEN_PKG}" && GOBIN="${PB_TMP}/bin" GO111MODULE=on go install \
        ./cmd/go-to-protobuf ./cmd/go-to-protobuf/protoc-gen-gogo )
    GOBIN="${PB_TMP}/bin" GO111MODULE=on go install \
        "golang.org/x/tools/cmd/goimports@$(go list -m -f '{{.Version}}' golang.org/x/tools)"
    GOGO_DIR=$(cd "${CODEGEN_PKG}" && module_dir github.com/gogo/protobuf)
    APIMACHINERY_DIR=$(module_dir k8s.io/apimachinery)

    # go-to-protobuf wants a GOPATH-like tree: <output-dir>/<import path>/generated.proto.
    mkdir -p "${PB_TMP}/src/$(dirname "${THIS_PKG}")" "${PB_TMP}/src/k8s.io" "${PB_TMP}/src/github.com/gogo"
    ln -s "${SCRIPT_ROOT}" "${PB_TMP}/src/${THIS_PKG}"
    ln -s "${APIMACHINERY_DIR}" "${PB_TMP}/src/k8s.io/apimachinery"
    ln -s "${GOGO_DIR}" "${PB_TMP}/src/github.com/gogo/protobuf"

    # Packages our types may reference; '-' = read their generated.proto, do not generate them.
    pb_apimachinery_pkgs=(
        -k8s.io/apimachinery/pkg/util/intstr
        -k8s.io/apimachinery/pkg/api/resource
        -k8s.io/apimachinery/pkg/runtime/schema
        -k8s.io/apimachinery/pkg/runtime
        -k8s.io/apimachinery/pkg/apis/meta/v1
    )

    # Drop the previous outputs (renamed below) so they do not sit next to the new ones.
    for dir in "${pb_dirs[@]}"; do
        rm -f "${dir}/zz_generated.pb.go" "${dir}/zz_generated.proto"
    done

    PATH="${PB_TMP}/bin:$(go env GOROOT)/bin:${PATH}" "${PB_TMP}/bin/go-to-protobuf" \
        --go-header-file "${BOILERPLATE}" \
        --output-dir "${PB_TMP}/src" \
        --proto-import "${GOGO_DIR}/protobuf" \
        --apimachinery-packages "$(IFS=,; echo "${pb_apimachinery_pkgs[*]}")" \
        --packages "$(IFS=,; echo "${pb_pkgs[*]}")"

    # Project rule: generated files are zz_generated.*.
    for dir in "${pb_dirs[@]}"; do
        sed 's#^// source: \(.*\)/generated\.proto$#// source: \1/zz_generated.proto#' \
            "${dir}/generated.pb.go" > "${dir}/zz_generated.pb.go"
        mv "${dir}/generated.proto" "${dir}/zz_generated.proto"
        rm -f "${dir}/generated.pb.go"
    done
)
