package integration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// TestServerMadeKeyIsEncryptedAndOnlyInTheKubeconfig creates a credential without a CSR on a server that
// encrypts break-glass credentials at rest (aescbc): the server makes the key, no read of the resource shows
// it, etcd holds it only encrypted, and the credential's kubeconfig, once a certificate is issued for it,
// carries the key that goes with the certificate.
func TestServerMadeKeyIsEncryptedAndOnlyInTheKubeconfig(t *testing.T) {
	ctx := context.Background()
	etcd := framework.StartEtcd(t)
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["breakglasscredentials.hcp.aro.azure.com"]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: `+base64.StdEncoding.EncodeToString(secret)+`
  - identity: {}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := framework.StartInProcessServer(ctx, t.TempDir(), framework.InProcessOptions{Args: []string{
		"--etcd-servers=" + strings.Join(etcd.ClientURLs, ","), "--encryption-provider-config=" + config,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	hc := s.Client.HcpV1alpha1()

	if _, err := hc.HCPClusters("default").Create(ctx, fixtures.HCPCluster("default", "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const apiURL = "https://api.dev.example.com:6443"
	// The cluster controllers write the new cluster's status too.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster, err := hc.HCPClusters("default").Get(ctx, "dev", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
		cluster.Status.API.URL = apiURL
		_, err = hc.HCPClusters("default").UpdateStatus(ctx, cluster, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	credential := fixtures.BreakglassCredential("default", "dev", "legacy")
	credential.Spec.CertificateSigningRequest = ""
	created, err := hc.BreakglassCredentials("default").Create(ctx, credential, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(created.Spec.CertificateSigningRequest))
	if block == nil {
		t.Fatalf("the server made no certificate signing request: %q", created.Spec.CertificateSigningRequest)
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if csr.Subject.CommonName != "system:customer-break-glass:system-admin" {
		t.Errorf("the server's CSR is for %s, want CN=system:customer-break-glass:system-admin", csr.Subject)
	}
	for what, read := range map[string]func() (any, error){
		"get": func() (any, error) {
			return hc.BreakglassCredentials("default").Get(ctx, "legacy", metav1.GetOptions{})
		},
		"list": func() (any, error) { return hc.BreakglassCredentials("default").List(ctx, metav1.ListOptions{}) },
	} {
		obj, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := json.Marshal(obj); bytes.Contains(raw, []byte("PRIVATE KEY")) {
			t.Errorf("a %s of the credential shows its key:\n%s", what, raw)
		}
	}

	raw, err := clientv3.New(clientv3.Config{Endpoints: etcd.ClientURLs})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	stored, err := raw.Get(ctx, "/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var kept, credentials int
	for _, kv := range stored.Kvs {
		key := string(kv.Key)
		if !strings.Contains(key, "breakglasscredential") {
			continue
		}
		if strings.Contains(key, "-keys/") {
			kept++
		} else {
			credentials++
		}
		if !bytes.HasPrefix(kv.Value, []byte("k8s:enc:aescbc:v1:key1:")) || bytes.Contains(kv.Value, []byte("PRIVATE KEY")) {
			t.Errorf("etcd holds %s unencrypted: %.60q", key, kv.Value)
		}
	}
	if kept != 1 || credentials != 1 {
		t.Errorf("etcd holds %d credentials and %d kept keys, want one of each", credentials, kept)
	}

	// A signer issues the certificate, as the management cluster's would.
	cert := signCSR(t, csr)
	// The credential controller writes the credential's status too (it waits for a placement).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		issued, err := hc.BreakglassCredentials("default").Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return err
		}
		issued.Status.Phase = v1alpha1.BreakglassCredentialPhaseIssued
		issued.Status.Certificate = string(cert)
		issued.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(time.Hour).Truncate(time.Second)}
		_, err = hc.BreakglassCredentials("default").UpdateStatus(ctx, issued, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := hc.RESTClient().Get().Namespace("default").Resource("breakglasscredentials").Name("legacy").SubResource("kubeconfig").DoRaw(ctx)
	if err != nil {
		t.Fatalf("the kubeconfig of an issued credential: %v", err)
	}
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("the kubeconfig does not load: %v\n%s", err, kubeconfig)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	if _, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData); err != nil {
		t.Errorf("the kubeconfig's certificate and the key the server made do not go together: %v", err)
	}
	if server := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; server != apiURL {
		t.Errorf("the kubeconfig's server is %q, want the cluster's API URL %q", server, apiURL)
	}

	// The kept key goes with its credential.
	if err := hc.BreakglassCredentials("default").Delete(ctx, "legacy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left, err := raw.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, kv := range left.Kvs {
			if strings.Contains(string(kv.Key), "breakglasscredential") {
				n++
			}
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d break-glass keys left in etcd after the credential was deleted", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// signCSR signs a CSR with a throwaway CA, for a client certificate valid for an hour.
func signCSR(t *testing.T, csr *x509.CertificateRequest) []byte {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "signer"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(2 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: csr.Subject, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, csr.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestBreakglassRequestsRefusedWithTheReason: revoking the credentials of a cluster that is not Succeeded,
// or with a body for another cluster, and reading the kubeconfig of a credential not issued yet, are
// refused with a status that says why; a revocation that is taken answers 202 and shows in the cluster's
// RevokingCredentials condition.
func TestBreakglassRequestsRefusedWithTheReason(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	hc := client().HcpV1alpha1()
	createCluster(t, ns, "dev")
	revoke := func(body *v1alpha1.CredentialRevocation) error {
		_, err := hc.HCPClusters(ns).RevokeCredentials(ctx, "dev", body, metav1.CreateOptions{})
		return err
	}

	err := revoke(&v1alpha1.CredentialRevocation{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "only while it is Succeeded") {
		t.Errorf("revoking the credentials of an Accepted cluster: %v, want 409 saying it must be Succeeded", err)
	}
	succeeded(t, ns, "dev")
	err = revoke(&v1alpha1.CredentialRevocation{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.name") {
		t.Errorf("a revocation whose body names another cluster: %v, want 422 at metadata.name", err)
	}

	credential, err := hc.BreakglassCredentials(ns).Create(ctx, fixtures.BreakglassCredential(ns, "dev", "oncall"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = hc.RESTClient().Get().Namespace(ns).Resource("breakglasscredentials").Name(credential.Name).SubResource("kubeconfig").Do(ctx).Error()
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "not yet Issued") {
		t.Errorf("the kubeconfig of a Pending credential: %v, want 409 saying it is not yet Issued", err)
	}

	var status int
	result := hc.RESTClient().Post().Namespace(ns).Resource("hcpclusters").Name("dev").SubResource("revokecredentials").
		Body(&v1alpha1.CredentialRevocation{TypeMeta: metav1.TypeMeta{APIVersion: "hcp.aro.azure.com/v1alpha1", Kind: "CredentialRevocation"}}).
		Do(ctx).StatusCode(&status)
	if err := result.Error(); err != nil || status != http.StatusAccepted {
		t.Fatalf("revoking the credentials of a Succeeded cluster: %d %v, want 202", status, err)
	}
	cluster, err := hc.HCPClusters(ns).Get(ctx, "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster is not placed, so the controller may already have ended the revocation: it has nothing to
	// revoke on any management cluster.
	if cond := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionRevokingCredentials); cond == nil ||
		!(cond.Status == metav1.ConditionTrue && cond.Reason == v1alpha1.RevocationRequested || cond.Status == metav1.ConditionFalse && cond.Reason == "NotPlaced") {
		t.Errorf("RevokingCredentials after the request: %+v, want True Requested (or False NotPlaced once the controller saw it)", cond)
	}
}
