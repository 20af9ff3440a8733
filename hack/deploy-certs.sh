#!/usr/bin/env bash
# Makes the certificates artifacts/deploy reads, one folder per Secret its kustomization generates:
#
#   OUTDIR/hcp-apiserver-serving/       ca.crt tls.crt tls.key  the API's serving certificate; ca.crt becomes
#                                                               the APIService's caBundle
#   OUTDIR/hcp-etcd-tls/                ca.crt tls.crt tls.key  each etcd member's certificate, for clients and peers
#   OUTDIR/hcp-apiserver-etcd-client/   ca.crt tls.crt tls.key  the API's client certificate for etcd
#   OUTDIR/hcp-mqtt-tls/                ca.crt tls.crt tls.key  the MQTT broker's serving certificate
#   OUTDIR/hcp-apiserver-mqtt-client/   ca.crt tls.crt tls.key  the API's client certificate for the broker
#                                                               (CN hcp-apiserver: the broker's ACL user)
#   OUTDIR/agents/<consumer>/           ca.crt tls.crt tls.key  one per name in HCP_AGENT_CONSUMERS: a
#                                                               maestro-agent's client certificate (CN = its
#                                                               consumer name), for artifacts/agent
#   OUTDIR/hcp-arm-shim-serving/        ca.crt tls.crt tls.key  arm-shim's serving certificate, for ARM's front door
#   OUTDIR/hcp-arm-shim-client-ca/      ca.crt                  the CA arm-shim trusts for client certificates:
#                                                               ARM's in production (put its CA here), else the
#                                                               one that signs OUTDIR/arm-client
#   OUTDIR/arm-client/                  ca.crt tls.crt tls.key  a client certificate of that CA, to call arm-shim
#                                                               as ARM would
#   OUTDIR/ca/                          the four CAs and their keys; keep them, nothing in the cluster needs them
#
# Usage: hack/deploy-certs.sh OUTDIR   (artifacts/deploy/certs for `kubectl apply -k artifacts/deploy`)
# Environment:
#   HCP_NAMESPACE        the namespace of the deployment (default hcp-system)
#   HCP_MQTT_HOSTNAMES   extra names of the broker as agents on management clusters reach it, comma separated
#   HCP_AGENT_CONSUMERS  consumer names to issue agent certificates for, comma separated
#   HCP_CERT_DAYS        validity of the leaf certificates in days (default 365; the CAs get ten times that)
#
# A file that exists is kept: run it again to add an agent without changing what the cluster trusts. Delete a
# folder to issue that certificate anew.
set -o errexit -o nounset -o pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
out=$1
ns=${HCP_NAMESPACE:-hcp-system}
days=${HCP_CERT_DAYS:-365}
umask 077
mkdir -p "${out}/ca"

# ca NAME CN: a self-signed CA at OUTDIR/ca/NAME.{crt,key}.
ca() {
    local name=$1 cn=$2
    [[ -f "${out}/ca/${name}.crt" ]] && return
    openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256 \
        -keyout "${out}/ca/${name}.key" -out "${out}/ca/${name}.crt" -days $((days * 10)) -subj "/CN=${cn}" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# leaf DIR CA CN USAGE [SAN]: a certificate signed by CA in DIR/tls.{crt,key}, with CA's certificate as DIR/ca.crt.
# USAGE is serverAuth, clientAuth or both, comma separated; SAN is an openssl subjectAltName value.
leaf() {
    local dir=$1 ca=$2 cn=$3 usage=$4 san=${5:-}
    mkdir -p "${dir}"
    cp "${out}/ca/${ca}.crt" "${dir}/ca.crt"
    [[ -f "${dir}/tls.crt" ]] && return
    local ext
    ext=$(mktemp)
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=${usage}"
        [[ -n "${san}" ]] && echo "subjectAltName=${san}"
    } > "${ext}"
    openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "${dir}/tls.key" \
        -out "${dir}/tls.csr" -subj "/CN=${cn}" 2>/dev/null
    openssl x509 -req -in "${dir}/tls.csr" -CA "${out}/ca/${ca}.crt" -CAkey "${out}/ca/${ca}.key" \
        -CAcreateserial -sha256 -days "${days}" -extfile "${ext}" -out "${dir}/tls.crt" 2>/dev/null
    rm -f "${dir}/tls.csr" "${ext}"
}

ca serving "hcp-apiserver serving CA"
ca etcd "hcp-etcd CA"
ca mqtt "hcp-mqtt CA"
ca arm "hcp-arm-shim client CA"

# kube-apiserver's aggregator verifies the API's certificate for <service>.<namespace>.svc.
svc="hcp-apiserver.${ns}.svc"
leaf "${out}/hcp-apiserver-serving" serving "${svc}" serverAuth \
    "DNS:hcp-apiserver,DNS:hcp-apiserver.${ns},DNS:${svc},DNS:${svc}.cluster.local"

# Members reach each other, and the API reaches them, by their StatefulSet names; 127.0.0.1 for a member's
# own tools (etcdctl in the pod). A member's certificate is also its client certificate towards its peers.
etcd_names="DNS:hcp-etcd,DNS:hcp-etcd.${ns}.svc,DNS:*.hcp-etcd.${ns}.svc,DNS:*.hcp-etcd.${ns}.svc.cluster.local"
leaf "${out}/hcp-etcd-tls" etcd hcp-etcd serverAuth,clientAuth "${etcd_names},DNS:localhost,IP:127.0.0.1"
leaf "${out}/hcp-apiserver-etcd-client" etcd hcp-apiserver clientAuth

mqtt_names="DNS:hcp-mqtt,DNS:hcp-mqtt.${ns}.svc,DNS:hcp-mqtt.${ns}.svc.cluster.local"
IFS=, read -r -a extra <<< "${HCP_MQTT_HOSTNAMES:-}"
for name in "${extra[@]}"; do
    [[ -n "${name}" ]] && mqtt_names+=",DNS:${name}"
done
leaf "${out}/hcp-mqtt-tls" mqtt hcp-mqtt serverAuth "${mqtt_names}"
leaf "${out}/hcp-apiserver-mqtt-client" mqtt hcp-apiserver clientAuth

# ARM's front door reaches arm-shim by a name of the operator's DNS; these are the cluster's own.
shim="arm-shim.${ns}.svc"
leaf "${out}/hcp-arm-shim-serving" serving "${shim}" serverAuth \
    "DNS:arm-shim,DNS:arm-shim.${ns},DNS:${shim},DNS:${shim}.cluster.local,DNS:localhost,IP:127.0.0.1"
mkdir -p "${out}/hcp-arm-shim-client-ca"
[[ -f "${out}/hcp-arm-shim-client-ca/ca.crt" ]] || cp "${out}/ca/arm.crt" "${out}/hcp-arm-shim-client-ca/ca.crt"
leaf "${out}/arm-client" arm arm-frontdoor clientAuth

IFS=, read -r -a consumers <<< "${HCP_AGENT_CONSUMERS:-}"
for consumer in "${consumers[@]}"; do
    [[ -n "${consumer}" ]] && leaf "${out}/agents/${consumer}" mqtt "${consumer}" clientAuth
done
rm -f "${out}/ca/"*.srl
echo "Certificates in ${out}"
