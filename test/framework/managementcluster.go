package framework

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// apiServerReadyTimeout is generous because the tests share a loaded 2-core machine.
const apiServerReadyTimeout = 2 * time.Minute

// ManagementCluster is the API of a management cluster as HyperShift sees it: a real
// kube-apiserver on its own etcd, with the HyperShift CRDs installed. Nothing else runs:
// no controllers, so nothing acts on what is created (namespaces, for one, are never
// finalized once deleted).
type ManagementCluster struct {
	// Etcd is its single-member etcd.
	Etcd *EtcdCluster
	// APIServer is the kube-apiserver process.
	APIServer *Process
	// URL is the kube-apiserver's address, https://127.0.0.1:<port>.
	URL string
	// Kubeconfig is a kubeconfig file for the admin (a token user in system:masters),
	// for kubectl --kubeconfig.
	Kubeconfig string
	// Config is the admin's client configuration, read from Kubeconfig.
	Config *rest.Config
	// Kube is the typed clientset for the built-in resources.
	Kube kubernetes.Interface
	// Dynamic reaches any resource, including the HyperShift custom resources.
	Dynamic dynamic.Interface

	// mapper finds a kind's resource through discovery, as kubectl does.
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// StartManagementCluster starts etcd and kube-apiserver (with extra flags, if any), installs
// every CRD from the shared folder's hypershift/crds, and returns once they are all established.
// Everything is stopped when the test ends. The test is skipped if kube-apiserver or etcd is not
// built or the shared folder is missing.
func StartManagementCluster(t testing.TB, extraArgs ...string) *ManagementCluster {
	t.Helper()
	crdDir := filepath.Join(SharedDir(t), "hypershift", "crds")
	mc := StartKubeAPIServer(t, extraArgs...)
	mc.installCRDs(t, crdDir)
	return mc
}

// StartKubeAPIServer starts etcd and kube-apiserver with no CRDs, as StartManagementCluster does
// otherwise: a bare kube-apiserver, as a peer to measure against. extraArgs come after the
// framework's own flags, so they may override them.
func StartKubeAPIServer(t testing.TB, extraArgs ...string) *ManagementCluster {
	t.Helper()
	binary := Tool(t, "kube-apiserver")
	mc := &ManagementCluster{Etcd: StartEtcd(t)}
	dir := ComponentDir(t, "kube-apiserver")
	port := FreePort(t)
	mc.URL = "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	token := writeTokenFile(t, filepath.Join(dir, "tokens.csv"))
	writeServiceAccountKeys(t, filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub"))
	certDir := filepath.Join(dir, "certs")

	mc.APIServer = StartProcess(t, dir, binary, append([]string{
		"--etcd-servers=" + strings.Join(mc.Etcd.ClientURLs, ","),
		"--bind-address=127.0.0.1",
		// Without it, kube-apiserver advertises the address of the host's default route, and
		// fails to start on a machine that has none. The endpoint reconciler refuses a
		// loopback address, and nothing here needs the "kubernetes" Service's endpoints.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(port),
		// With no certificate given, kube-apiserver writes a self-signed one here.
		"--cert-dir=" + certDir,
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
	}, extraArgs...)...)

	// The self-signed certificate file holds the serving certificate and the CA that signed
	// it; it exists once the server is about to listen.
	caFile := filepath.Join(certDir, "apiserver.crt")
	mc.APIServer.WaitUntilReady(t, apiServerReadyTimeout, "ready kube-apiserver (/readyz)", func(ctx context.Context) error {
		ca, err := os.ReadFile(caFile)
		if err != nil {
			return err
		}
		cfg := &rest.Config{Host: mc.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		_, err = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})

	mc.Kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	writeKubeconfig(t, mc.Kubeconfig, mc.URL, ca, "admin", token)
	mc.connect(t)
	return mc
}

// Stop stops kube-apiserver, then etcd; see Process.Stop.
func (mc *ManagementCluster) Stop() error {
	return errors.Join(mc.APIServer.Stop(), mc.Etcd.Stop())
}

// connect builds the clients from the kubeconfig, so that they see what kubectl sees.
func (mc *ManagementCluster) connect(t testing.TB) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", mc.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// A server of the test's own: no reason to throttle on the client side.
	cfg.QPS, cfg.Burst = -1, 0
	mc.Config = cfg
	if mc.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if mc.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	mc.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(mc.Kube.Discovery()))
}

// writeTokenFile writes a --token-auth-file with one user, admin in system:masters, and
// returns the admin's token.
func writeTokenFile(t testing.TB, path string) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	token := hex.EncodeToString(b)
	// token,user,uid,"group1,group2"
	line := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", token)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return token
}

// writeServiceAccountKeys writes a new RSA key pair with which kube-apiserver signs
// service account tokens (keyFile) and checks them (pubFile).
func writeServiceAccountKeys(t testing.TB, keyFile, pubFile string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pubPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeKubeconfig writes a kubeconfig for a token user, named user, with one context of the same name.
func writeKubeconfig(t testing.TB, path, server string, ca []byte, user, token string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["management"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: "management", AuthInfo: user}
	cfg.CurrentContext = user
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// TokenKubeconfig writes a kubeconfig of the management cluster for the token's user, e.g. a service
// account's token, as a pod of it gets one, and returns its path.
func (mc *ManagementCluster) TokenKubeconfig(t testing.TB, user, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	writeKubeconfig(t, path, mc.URL, mc.Config.CAData, user, token)
	return path
}

// StartControllerManager runs kube-controller-manager against the management cluster with the
// controllers that finish deletes, as on a real cluster: the garbage collector (foreground and
// orphan propagation) and the namespace controller (a deleted namespace is emptied, then gone).
// It returns once the controller manager is healthy and stops it when the test ends. The test
// is skipped if kube-controller-manager is not built.
func (mc *ManagementCluster) StartControllerManager(t testing.TB) *Process {
	t.Helper()
	return mc.StartControllerManagerWith(t, "garbagecollector", "namespace")
}

// StartControllerManagerWith runs kube-controller-manager with the controllers named, as
// StartControllerManager does.
func (mc *ManagementCluster) StartControllerManagerWith(t testing.TB, controllers ...string) *Process {
	t.Helper()
	binary := Tool(t, "kube-controller-manager")
	dir := ComponentDir(t, "kube-controller-manager")
	port := FreePort(t)
	p := StartProcess(t, dir, binary,
		"--kubeconfig="+mc.Kubeconfig,
		"--authentication-kubeconfig="+mc.Kubeconfig,
		"--authorization-kubeconfig="+mc.Kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		// Discovery of new resources (the CRDs) every few seconds instead of every 30.
		"--concurrent-gc-syncs=5",
	)
	p.WaitUntilReady(t, apiServerReadyTimeout, "healthy kube-controller-manager (/healthz)", func(ctx context.Context) error {
		cfg := rest.CopyConfig(mc.Config)
		cfg.Host, cfg.TLSClientConfig = "https://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), rest.TLSClientConfig{Insecure: true}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		_, err = client.Discovery().RESTClient().Get().AbsPath("/healthz").DoRaw(ctx)
		return err
	})
	return p
}
