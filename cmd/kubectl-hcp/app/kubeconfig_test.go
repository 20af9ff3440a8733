package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func newTestKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// selfSigned returns a PEM certificate for key.
func selfSigned(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now(),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// serverKubeconfig is a kubeconfig as the server writes it for a credential made with a request:
// a client certificate and no key.
func serverKubeconfig(t *testing.T, server string, caPEM, certPEM []byte) []byte {
	t.Helper()
	out, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"dev": {Server: server, CertificateAuthorityData: caPEM}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"system-admin": {ClientCertificateData: certPEM}},
		Contexts:       map[string]*clientcmdapi.Context{"dev": {Cluster: "dev", AuthInfo: "system-admin"}},
		CurrentContext: "dev",
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAddClientKey(t *testing.T) {
	key := newTestKey(t)
	certPEM := selfSigned(t, key)
	caPEM := selfSigned(t, newTestKey(t))
	sec1, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := x509.MarshalECPrivateKey(newTestKey(t))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := serverKubeconfig(t, "https://api.dev.example.com:443", caPEM, certPEM)
	noCert := serverKubeconfig(t, "https://api.dev.example.com:443", caPEM, nil)

	for _, tc := range []struct {
		name       string
		kubeconfig []byte
		keyPEM     []byte
		wantErr    string
	}{
		{name: "EC PRIVATE KEY", kubeconfig: kubeconfig, keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})},
		{name: "PKCS#8 PRIVATE KEY", kubeconfig: kubeconfig, keyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})},
		{name: "another key", kubeconfig: kubeconfig, keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: otherKey}),
			wantErr: "not for the key made here"},
		{name: "no certificate", kubeconfig: noCert, keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}),
			wantErr: "no client certificate"},
		{name: "not a kubeconfig", kubeconfig: []byte("<html>"), keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}),
			wantErr: "reading the kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, cert, err := addClientKey(tc.kubeconfig, tc.keyPEM)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one that says %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject.CommonName != "system:customer-break-glass:system-admin" {
				t.Errorf("returned certificate CN = %q", cert.Subject.CommonName)
			}
			config, err := clientcmd.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			user := config.AuthInfos[config.Contexts[config.CurrentContext].AuthInfo]
			if _, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData); err != nil {
				t.Errorf("the kubeconfig's certificate and key do not load: %v", err)
			}
			cluster := config.Clusters[config.Contexts[config.CurrentContext].Cluster]
			if cluster.Server != "https://api.dev.example.com:443" || string(cluster.CertificateAuthorityData) != string(caPEM) {
				t.Errorf("the cluster changed: %+v", cluster)
			}
			// What kubectl does with it.
			restConfig, err := clientcmd.RESTConfigFromKubeConfig(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(restConfig.KeyData) != string(tc.keyPEM) {
				t.Error("kubectl would not use the key")
			}
		})
	}
}
