package framework

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// AggregatorArgs are the kube-apiserver flags that make it the front proxy of aggregated API servers, as a
// cluster's own kube-apiserver is: it presents a client certificate of a front-proxy CA to the backends and
// names the user in X-Remote-* headers, which the backends trust because the CA is published in
// kube-system/extension-apiserver-authentication. With aggregator routing, it reaches an APIService's
// backends at the addresses of the Service's EndpointSlices, so no Service proxy is needed.
func AggregatorArgs(t testing.TB) []string {
	t.Helper()
	pki := standalone.NewPKI(t.TempDir())
	if err := pki.Ensure([]string{"localhost"}); err != nil {
		t.Fatal(err)
	}
	cert, key := writeClientCert(t, pki, "front-proxy-client")
	return []string{
		"--requestheader-client-ca-file=" + pki.CACert,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + cert,
		"--proxy-client-key-file=" + key,
		"--enable-aggregator-routing=true",
	}
}

// writeClientCert issues a client certificate for cn from pki's CA into <cn>.crt and <cn>.key beside it.
func writeClientCert(t testing.TB, pki *standalone.PKI, cn string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM, err := standalone.IssueClientCertificate(pki.CACert, pki.CAKey, cn, nil)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(pki.Dir, cn+".crt"), filepath.Join(pki.Dir, cn+".key")
	for file, pem := range map[string][]byte{certFile: certPEM, keyFile: keyPEM} {
		if err := os.WriteFile(file, pem, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

// MachineAddress is an IPv4 address of this machine that is not loopback: kube-apiserver refuses to proxy
// to a loopback endpoint. The test is skipped on a machine with none.
func MachineAddress(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() && !ip.IP.IsLinkLocalUnicast() {
			return ip.IP.String()
		}
	}
	t.Skip("this machine has no IPv4 address but loopback, and kube-apiserver proxies to no loopback endpoint")
	return ""
}
