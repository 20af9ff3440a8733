package agentbundle_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// FuzzLoad reads agent bundle files, as maestro-agent reads --agent-bundle. A bundle that loads has an
// address to dial and a TLS configuration, and Write and Load give it back unchanged.
func FuzzLoad(f *testing.F) {
	pki := standalone.NewPKI(filepath.Join(f.TempDir(), "pki"))
	if err := pki.Ensure([]string{"127.0.0.1"}); err != nil {
		f.Fatal(err)
	}
	caPEM, err := os.ReadFile(pki.CACert)
	if err != nil {
		f.Fatal(err)
	}
	certPEM, keyPEM, err := standalone.IssueClientCertificate(pki.CACert, pki.CAKey, "mc-1", []string{"hcp:maestro-agent"})
	if err != nil {
		f.Fatal(err)
	}
	// The fuzzer's input names the PEM data of a valid bundle by placeholders, so that short inputs reach
	// the TLS checks; it may still write any base64 of its own.
	placeholders := strings.NewReplacer(
		"$ca", base64.StdEncoding.EncodeToString(caPEM),
		"$cert", base64.StdEncoding.EncodeToString(certPEM),
		"$key", base64.StdEncoding.EncodeToString(keyPEM),
	)
	const pemData = "\ncertificateAuthorityData: $ca\nclientCertificateData: $cert\nclientKeyData: $key\n"
	for _, url := range []string{"mqtts://mqtt.example.com", "mqtts://[::1]:8883/", "mqtts://10.0.0.1:0", "mqtts://u:p@h:x", "mqtts://h/p?q#f"} {
		f.Add([]byte("apiVersion: v1alpha1\nkind: MaestroAgentBundle\nbrokerURL: " + url + "\nsource: hcp\nconsumer: mc-1" + pemData))
	}
	f.Add([]byte(`{"apiVersion":"v1alpha1","kind":"MaestroAgentBundle","brokerURL":"mqtts://h","source":"hcp","consumer":"mc-1",` +
		`"certificateAuthorityData":"$ca","clientCertificateData":"$cert","clientKeyData":"$key"}`))
	// The PEM as it is, not base64-encoded; another consumer; a field Load does not know; a YAML alias.
	f.Add([]byte("apiVersion: v1alpha1\nkind: MaestroAgentBundle\nbrokerURL: mqtts://h\nsource: hcp\nconsumer: mc-1\n" +
		"certificateAuthorityData: -----BEGIN CERTIFICATE-----\nclientCertificateData: $cert\nclientKeyData: null\n"))
	f.Add([]byte("apiVersion: v1alpha1\nkind: MaestroAgentBundle\nbrokerURL: mqtts://h\nsource: hcp\nconsumer: mc-2" + pemData))
	f.Add([]byte("apiVersion: v1alpha1\nkind: MaestroAgentBundle\ninsecure: true" + pemData))
	f.Add([]byte("a: &a [*a]\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "bundle.yaml")
		if err := os.WriteFile(path, []byte(placeholders.Replace(string(data))), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := agentbundle.Load(path)
		if err != nil {
			return
		}
		if _, err := b.Address(); err != nil {
			t.Fatalf("a bundle that loads has no address: %v", err)
		}
		if _, err := b.TLSConfig(); err != nil {
			t.Fatalf("a bundle that loads has no TLS configuration: %v", err)
		}
		again := filepath.Join(dir, "again.yaml")
		if err := b.Write(again); err != nil {
			t.Fatalf("a bundle that loads cannot be written: %v", err)
		}
		read, err := agentbundle.Load(again)
		if err != nil {
			t.Fatalf("a bundle written from a loaded one does not load: %v", err)
		}
		if !reflect.DeepEqual(b, read) {
			t.Fatalf("the bundle changed when written and read:\n%+v\n%+v", b, read)
		}
	})
}
