package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// TestBreakglassCredentials follows an SRE with kubectl hcp: three break-glass kubeconfigs for a running
// cluster, each signed by the hosted control plane's own signer for the key made on this machine; one
// revocation, after which all three are Revoked and their kubeconfigs gone; and a new credential that
// works again, signed by the new signer. No CSR is left on the management cluster.
func TestBreakglassCredentials(t *testing.T) {
	st := startDeliveryStack(t, hypershiftsim.Options{})
	s, mc := st.server, st.mc
	clusterNamespace := st.exampleClusterUp(t)
	waitForKubectl(t, s, "hcpcluster/dev-cluster", "jsonpath={.status.provisioningState}=Succeeded")
	hcpNamespace := hypershiftsim.ControlPlaneNamespace(clusterNamespace, "dev")
	client := st.client(t)

	var issued []string
	for range 3 {
		kubeconfig, name := breakglass(t, s, "dev-cluster", "--ttl", "1h")
		cert := checkBreakglassKubeconfig(t, kubeconfig, signerCA(t, mc, hcpNamespace))
		credential, err := client.HcpV1alpha1().BreakglassCredentials("default").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if credential.Status.Phase != v1alpha1.BreakglassCredentialPhaseIssued || credential.Status.ExpirationTimestamp == nil ||
			!credential.Status.ExpirationTimestamp.Time.Equal(cert.NotAfter) {
			t.Errorf("credential %s: phase %s, expires %v; want Issued, expiring at the certificate's NotAfter %v",
				name, credential.Status.Phase, credential.Status.ExpirationTimestamp, cert.NotAfter)
		}
		if left := time.Until(cert.NotAfter); left < 55*time.Minute || left > time.Hour+time.Minute {
			t.Errorf("credential %s asked for 1h and is valid for %v more", name, left)
		}
		issued = append(issued, name)
	}
	out := s.mustKubectl(t, "get", "bgc")
	if strings.Count(out, "Issued") != 3 || !strings.Contains(out, "in 59m") && !strings.Contains(out, "in 60m") {
		t.Errorf("kubectl get bgc does not show three credentials Issued, expiring in an hour:\n%s", out)
	}
	waitForNoCSRs(t, mc)

	// Revoke: the signer is replaced, and every credential made before is Revoked.
	plugin(t, s, "revoke", "dev-cluster", "--wait", "--timeout", "3m")
	for _, name := range issued {
		waitForKubectl(t, s, "bgc/"+name, "jsonpath={.status.phase}=Revoked")
		err := client.HcpV1alpha1().RESTClient().Get().Namespace("default").Resource("breakglasscredentials").
			Name(name).SubResource("kubeconfig").Do(t.Context()).Error()
		if !apierrors.IsGone(err) {
			t.Errorf("the kubeconfig of revoked credential %s: %v, want 410 Gone", name, err)
		}
	}
	kubeconfig, _ := breakglass(t, s, "dev-cluster", "--ttl", "10m")
	checkBreakglassKubeconfig(t, kubeconfig, signerCA(t, mc, hcpNamespace))
	waitFor(t, "the revocation request withdrawn from the management cluster", func() (bool, string) {
		list, err := mc.Dynamic.Resource(hypershiftsim.CertificateRevocationRequestResource).Namespace(hcpNamespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d left", len(list.Items))
	})
}

// TestBreakglassCredentialExpires: a signer that issues 20-second certificates, whatever a CSR asks
// for, makes a credential that is Expired at its certificate's NotAfter without any request, whose
// kubeconfig is gone then, and which is deleted after --breakglass-retention.
func TestBreakglassCredentialExpires(t *testing.T) {
	st := startDeliveryStack(t, hypershiftsim.Options{MaxCertificateTTL: 20 * time.Second}, "--breakglass-retention=15s")
	s := st.server
	st.exampleClusterUp(t)
	waitForKubectl(t, s, "hcpcluster/dev-cluster", "jsonpath={.status.provisioningState}=Succeeded")

	_, name := breakglass(t, s, "dev-cluster", "--ttl", "10m")
	client := st.client(t)
	credential, err := client.HcpV1alpha1().BreakglassCredentials("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expires := credential.Status.ExpirationTimestamp.Time
	waitForKubectl(t, s, "bgc/"+name, "jsonpath={.status.phase}=Expired")
	if time.Now().Before(expires) {
		t.Errorf("credential %s Expired before its certificate's NotAfter %v", name, expires)
	}
	if out := s.mustKubectl(t, "get", "bgc", name); !strings.Contains(out, "Expired") || !strings.Contains(out, " ago") {
		t.Errorf("kubectl get bgc does not show the credential Expired some time ago:\n%s", out)
	}
	err = client.HcpV1alpha1().RESTClient().Get().Namespace("default").Resource("breakglasscredentials").
		Name(name).SubResource("kubeconfig").Do(t.Context()).Error()
	if !apierrors.IsGone(err) {
		t.Errorf("the kubeconfig of an expired credential: %v, want 410 Gone", err)
	}
	waitFor(t, "the expired credential deleted after its retention", func() (bool, string) {
		_, err := client.HcpV1alpha1().BreakglassCredentials("default").Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// client is a typed client of the stack's server, as its admin.
func (st *deliveryStack) client(t *testing.T) versioned.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", st.server.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return versioned.NewForConfigOrDie(cfg)
}

// plugin runs kubectl hcp as the server's admin, kubectl finding the plugin on PATH, and returns its
// stdout; it fails the test with stderr when the command fails.
func plugin(t *testing.T, s *server, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"hcp", "--kubeconfig", s.Kubeconfig, "-n", "default"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(framework.Command(t, "kubectl-hcp"))+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl hcp %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// breakglass runs kubectl hcp breakglass and returns the kubeconfig it wrote and the credential's name.
func breakglass(t *testing.T, s *server, cluster string, args ...string) ([]byte, string) {
	t.Helper()
	before := strings.Fields(s.mustKubectl(t, "get", "bgc", "-o", "jsonpath={.items[*].metadata.name}"))
	kubeconfig := plugin(t, s, append([]string{"breakglass", cluster}, args...)...)
	after := strings.Fields(s.mustKubectl(t, "get", "bgc", "-o", "jsonpath={.items[*].metadata.name}"))
	var made []string
	for _, name := range after {
		if !slices.Contains(before, name) {
			made = append(made, name)
		}
	}
	if len(made) != 1 {
		t.Fatalf("kubectl hcp breakglass made credentials %v, want one", made)
	}
	return []byte(kubeconfig), made[0]
}

// checkBreakglassKubeconfig checks that a kubeconfig names the cluster's API, trusts the control plane's
// CA, and holds a key and a client certificate for it, signed by ca for the customer break-glass user in
// system:masters; it returns the certificate.
func checkBreakglassKubeconfig(t *testing.T, raw []byte, ca *x509.Certificate) *x509.Certificate {
	t.Helper()
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatalf("the kubeconfig does not load: %v\n%s", err, raw)
	}
	current := cfg.Contexts[cfg.CurrentContext]
	if current == nil || cfg.Clusters[current.Cluster] == nil || cfg.AuthInfos[current.AuthInfo] == nil {
		t.Fatalf("the kubeconfig has no usable current context:\n%s", raw)
	}
	cluster, user := cfg.Clusters[current.Cluster], cfg.AuthInfos[current.AuthInfo]
	if !strings.HasPrefix(cluster.Server, "https://") {
		t.Errorf("the kubeconfig's server is %q, want the cluster's API URL", cluster.Server)
	}
	if block, _ := pem.Decode(cluster.CertificateAuthorityData); block == nil || block.Type != "CERTIFICATE" {
		t.Errorf("the kubeconfig trusts no CA:\n%s", cluster.CertificateAuthorityData)
	}
	pair, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData)
	if err != nil {
		t.Fatalf("the kubeconfig's certificate and key do not go together: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the certificate does not chain to the control plane's customer break-glass signer: %v", err)
	}
	if cert.Subject.CommonName != "system:customer-break-glass:system-admin" || !slices.Equal(cert.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("the certificate is for %s, want CN=system:customer-break-glass:system-admin, O=system:masters", cert.Subject)
	}
	return cert
}

// signerCA is the current CA of the customer break-glass signer of a hosted control plane.
func signerCA(t *testing.T, mc *framework.ManagementCluster, hcpNamespace string) *x509.Certificate {
	t.Helper()
	secret, err := mc.Kube.CoreV1().Secrets(hcpNamespace).Get(t.Context(), hypershiftsim.SignerSecretName(hypershiftsim.CustomerBreakGlass), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the signer's Secret: %v", err)
	}
	block, _ := pem.Decode(secret.Data["tls.crt"])
	if block == nil {
		t.Fatal("the signer's Secret has no tls.crt")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// waitForNoCSRs waits until the management cluster has no break-glass CSR left: each bundle was withdrawn
// once its credential was issued.
func waitForNoCSRs(t *testing.T, mc *framework.ManagementCluster) {
	t.Helper()
	waitFor(t, "no CSR left on the management cluster", func() (bool, string) {
		csrs, err := mc.Kube.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, csr := range csrs.Items {
			if strings.HasPrefix(csr.Name, "break-glass-") && csr.DeletionTimestamp == nil {
				names = append(names, csr.Name)
			}
		}
		return len(names) == 0, strings.Join(names, ", ")
	})
}

// waitForKubectl waits with kubectl wait for a condition of an object of the server.
func waitForKubectl(t *testing.T, s *server, object, condition string) {
	t.Helper()
	if out, err := s.kubectl(t, "wait", "--for="+condition, object, "--timeout=90s"); err != nil {
		desc, _ := s.kubectl(t, "get", object, "-o", "yaml")
		t.Fatalf("kubectl wait --for=%s %s: %v\n%s\n%s", condition, object, err, out, desc)
	}
}

// waitFor polls cond for up to two minutes.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		ok, said := cond()
		last = said
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: never; last %s", what, last)
	}
}
