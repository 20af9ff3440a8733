#!/usr/bin/env bash
# Installs what the test suite needs beyond Go and the module proxy, on a fresh
# Debian machine: protoc (the protobuf code generator that verify-codegen runs)
# and Mosquitto (the external MQTT broker the Maestro tests use). kubectl is
# expected on PATH (the machine image has it); tests that need it say so.
set -o errexit -o nounset -o pipefail

missing=()
command -v protoc >/dev/null || missing+=(protobuf-compiler)
command -v mosquitto >/dev/null && [[ -x /usr/sbin/mosquitto || -x /usr/bin/mosquitto ]] || missing+=(mosquitto)
if [[ ${#missing[@]} -gt 0 ]]; then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO=sudo
    echo "Installing ${missing[*]} from Debian's packages"
    ${SUDO} apt-get update -qq
    DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq "${missing[@]}" >/dev/null
fi
