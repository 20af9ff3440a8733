#!/usr/bin/env bash
# Regenerates everything under pkg/generated/ and every zz_generated.* file from
# the API types in apis/. Run it after changing a type; CI runs verify-codegen.sh.
set -o errexit -o nounset -o pipefail

SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${SCRIPT_ROOT}"
CODEGEN_PKG=${CODEGEN_PKG:-$(go list -m -f '{{.Dir}}' k8s.io/code-generator)}
THIS_PKG=github.com/aro-hcp/hcp-apiserver
BOILERPLATE="${SCRIPT_ROOT}/hack/boilerplate.go.txt"

source "${CODEGEN_PKG}/kube_codegen.sh"

kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" "${SCRIPT_ROOT}/apis"

kube::codegen::gen_openapi \
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
