package agentbundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

func TestLoad(t *testing.T) {
	pki := standalone.NewPKI(filepath.Join(t.TempDir(), "pki"))
	if err := pki.Ensure([]string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := standalone.IssueClientCertificate(pki.CACert, pki.CAKey, "mc-1", []string{"hcp:maestro-agent"})
	if err != nil {
		t.Fatal(err)
	}
	valid := func() *agentbundle.Bundle {
		return &agentbundle.Bundle{
			APIVersion: agentbundle.APIVersion, Kind: agentbundle.Kind,
			BrokerURL: "mqtts://mqtt.example.com", Source: "hcp", Consumer: "mc-1",
			CertificateAuthorityData: caPEM, ClientCertificateData: certPEM, ClientKeyData: keyPEM,
		}
	}

	t.Run("valid", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mc-1.yaml")
		if err := valid().Write(path); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if mode := info.Mode().Perm(); mode != 0o600 {
			t.Errorf("the bundle holds a private key but has mode %v, want 0600", mode)
		}
		b, err := agentbundle.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if addr, _ := b.Address(); addr != "mqtt.example.com:8883" {
			t.Errorf("Address() = %q, want the default MQTT over TLS port 8883", addr)
		}
		if b.Source != "hcp" || b.Consumer != "mc-1" {
			t.Errorf("source %q, consumer %q, want hcp, mc-1", b.Source, b.Consumer)
		}
	})

	tests := []struct {
		name   string
		modify func(*agentbundle.Bundle)
		want   string
	}{
		{"another format", func(b *agentbundle.Bundle) { b.Kind = "Config" }, `kind "Config"`},
		{"plain MQTT", func(b *agentbundle.Bundle) { b.BrokerURL = "mqtt://mqtt.example.com:1883" }, "want mqtts://host[:port]"},
		{"no host", func(b *agentbundle.Bundle) { b.BrokerURL = "mqtts://:8883" }, "want mqtts://host[:port]"},
		{"bad consumer", func(b *agentbundle.Bundle) { b.Consumer = "MC_1" }, `consumer ID "MC_1"`},
		{"no source", func(b *agentbundle.Bundle) { b.Source = "" }, "source ID is empty"},
		{"no CA", func(b *agentbundle.Bundle) { b.CertificateAuthorityData = nil }, "certificateAuthorityData holds no PEM certificate"},
		{"key of another certificate", func(b *agentbundle.Bundle) { b.ClientKeyData = mustKey(t, pki) }, "clientCertificateData and clientKeyData"},
		{"certificate of another consumer", func(b *agentbundle.Bundle) { b.Consumer = "mc-2" }, `issued to "mc-1", not to consumer "mc-2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := valid()
			tt.modify(b)
			// Written by hand: Write refuses an invalid bundle.
			data, err := yaml.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "bundle.yaml")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = agentbundle.Load(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func mustKey(t *testing.T, pki *standalone.PKI) []byte {
	t.Helper()
	_, key, err := standalone.IssueClientCertificate(pki.CACert, pki.CAKey, "mc-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
