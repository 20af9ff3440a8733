#!/usr/bin/env bash
# Fails when the generated code is stale: regenerates it in a scratch copy of the
# repository and compares that copy with the working tree.
set -o errexit -o nounset -o pipefail

SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRATCH=$(mktemp -d)
trap 'rm -rf "${SCRATCH}"' EXIT

cd "${SCRIPT_ROOT}"
# Copy what git knows about (tracked or not ignored), so build output and data dirs stay out.
git ls-files --cached --others --exclude-standard -z | xargs -0 cp --parents -t "${SCRATCH}" 2>/dev/null || true
(cd "${SCRATCH}" && bash hack/update-codegen.sh >/dev/null)

stale=0
for dir in apis pkg/generated hack; do
    if ! diff -r -q "${SCRIPT_ROOT}/${dir}" "${SCRATCH}/${dir}" >/dev/null 2>&1; then
        diff -r "${SCRIPT_ROOT}/${dir}" "${SCRATCH}/${dir}" | head -50 || true
        stale=1
    fi
done
if [[ ${stale} -ne 0 ]]; then
    echo "Generated code is out of date: run hack/update-codegen.sh and commit the result." >&2
    exit 1
fi
echo "Generated code is up to date."
