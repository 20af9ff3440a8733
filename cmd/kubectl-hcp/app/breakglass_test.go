package app

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

const credentialsPath = "/apis/hcp.aro.azure.com/v1alpha1/namespaces/team-a/breakglasscredentials"

// fakeAPIServer stands in for hcp-apiserver over HTTP: it takes one BreakglassCredential, reports the
// statuses it is given on a watch of it, and signs its request into a kubeconfig for cluster.
type fakeAPIServer struct {
	t        *testing.T
	statuses []v1alpha1.BreakglassCredentialStatus
	// cluster is the hosted cluster's API server the kubeconfig points at; ca signs the certificate.
	cluster *httptest.Server
	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
	// signOther signs a key other than the request's, as a broken signer would.
	signOther bool

	mu      sync.Mutex
	created *v1alpha1.BreakglassCredential
	watches []url.Values
	deletes []metav1.DeleteOptions
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, credentialsPath), "/"); {
	case r.Method == http.MethodPost && name == "":
		bgc := &v1alpha1.BreakglassCredential{}
		decode(s.t, r.Body, bgc)
		bgc.Name, bgc.Namespace, bgc.UID, bgc.ResourceVersion = bgc.GenerateName+"x7k2p", "team-a", "uid-1", "5"
		s.created = bgc
		writeJSON(w, http.StatusCreated, bgc)
	case r.Method == http.MethodGet && name == "" && r.URL.Query().Get("watch") == "true":
		s.watches = append(s.watches, r.URL.Query())
		w.Header().Set("Content-Type", "application/json")
		for i, status := range s.statuses {
			bgc := s.created.DeepCopy()
			bgc.Status, bgc.ResourceVersion = status, strconv.Itoa(6+i)
			raw, _ := json.Marshal(bgc)
			_ = json.NewEncoder(w).Encode(metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: raw}})
		}
		w.(http.Flusher).Flush()
		s.mu.Unlock()
		<-r.Context().Done()
		s.mu.Lock()
	case r.Method == http.MethodGet && name == s.created.Name+"/kubeconfig":
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(s.kubeconfig())
	case r.Method == http.MethodDelete && name == s.created.Name:
		opts := metav1.DeleteOptions{}
		decode(s.t, r.Body, &opts)
		s.deletes = append(s.deletes, opts)
		writeJSON(w, http.StatusOK, &metav1.Status{Status: metav1.StatusSuccess})
	default:
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

// kubeconfig signs the created credential's request as the server would, and writes no key.
func (s *fakeAPIServer) kubeconfig() []byte {
	block, _ := pem.Decode([]byte(s.created.Spec.CertificateSigningRequest))
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		s.t.Fatal(err)
	}
	publicKey := csr.PublicKey
	if s.signOther {
		publicKey = &newTestKey(s.t).PublicKey
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      csr.Subject,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Duration(*s.created.Spec.ExpirationSeconds) * time.Second),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, s.ca, publicKey, s.caKey)
	if err != nil {
		s.t.Fatal(err)
	}
	servingCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cluster.Certificate().Raw})
	return serverKubeconfig(s.t, s.cluster.URL, servingCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func decode(t *testing.T, r io.Reader, into any) {
	if err := json.NewDecoder(r).Decode(into); err != nil {
		t.Errorf("decoding a request: %v", err)
	}
}

func writeJSON(w http.ResponseWriter, code int, obj any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(obj)
}

// newHostedCluster is an API server that answers with the common name of a client certificate ca signed.
func newHostedCluster(t *testing.T) (*httptest.Server, *x509.Certificate, *ecdsa.PrivateKey) {
	caKey := newTestKey(t)
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "customer-break-glass-signer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(ca)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, ca, caKey
}

func condition(reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: "Issued", Status: metav1.ConditionFalse, Reason: reason, Message: message,
		LastTransitionTime: metav1.Now()}}
}

func TestBreakglass(t *testing.T) {
	pending := v1alpha1.BreakglassCredentialStatus{Phase: v1alpha1.BreakglassCredentialPhasePending,
		Conditions: condition("WaitingForCluster", "the control plane has not signed it yet")}
	issued := v1alpha1.BreakglassCredentialStatus{Phase: v1alpha1.BreakglassCredentialPhaseIssued}
	failed := v1alpha1.BreakglassCredentialStatus{Phase: v1alpha1.BreakglassCredentialPhaseFailed,
		Conditions: condition("SignerUnavailable", "the signer refused the request")}

	for _, tc := range []struct {
		name      string
		statuses  []v1alpha1.BreakglassCredentialStatus
		signOther bool
		// wantErr is part of the error; empty when a kubeconfig is written.
		wantErr string
		// wantDeleted: the command deletes the credential it gave up on.
		wantDeleted bool
	}{
		{name: "issued", statuses: []v1alpha1.BreakglassCredentialStatus{{}, pending, issued}},
		{name: "failed", statuses: []v1alpha1.BreakglassCredentialStatus{pending, failed},
			wantErr: "breakglasscredential team-a/dev-x7k2p was not issued: Failed (SignerUnavailable: the signer refused the request)"},
		{name: "not issued in time", statuses: []v1alpha1.BreakglassCredentialStatus{pending},
			wantErr: "was not issued within 1s (Pending (WaitingForCluster: the control plane has not signed it yet))", wantDeleted: true},
		{name: "certificate for another key", statuses: []v1alpha1.BreakglassCredentialStatus{issued}, signOther: true,
			wantErr: "not for the key made here", wantDeleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, ca, caKey := newHostedCluster(t)
			api := &fakeAPIServer{t: t, statuses: tc.statuses, cluster: cluster, ca: ca, caKey: caKey, signOther: tc.signOther}
			apiServer := httptest.NewServer(api)
			defer apiServer.Close()
			client, err := versioned.NewForConfig(&rest.Config{Host: apiServer.URL})
			if err != nil {
				t.Fatal(err)
			}

			o := newBreakglassOptions()
			o.Timeout = time.Second
			var stdout, stderr bytes.Buffer
			err = o.Run(context.Background(), client, "team-a", "dev", &stdout, &stderr)
			t.Logf("stderr:\n%s", stderr.String())

			api.mu.Lock()
			defer api.mu.Unlock()
			if got := api.created; got.GenerateName != "dev-" || got.Spec.ClusterName != "dev" || *got.Spec.ExpirationSeconds != 3600 {
				t.Errorf("created generateName %q, clusterName %q, expirationSeconds %d; want dev-, dev, 3600",
					got.GenerateName, got.Spec.ClusterName, *got.Spec.ExpirationSeconds)
			}
			if len(api.watches) == 0 || api.watches[0].Get("fieldSelector") != "metadata.name=dev-x7k2p" || api.watches[0].Get("resourceVersion") != "5" {
				t.Errorf("watches %v, want one of metadata.name=dev-x7k2p from resourceVersion 5", api.watches)
			}
			if deleted := len(api.deletes) > 0; deleted != tc.wantDeleted {
				t.Errorf("deleted %v, want %v", deleted, tc.wantDeleted)
			} else if deleted && *api.deletes[0].Preconditions.UID != types.UID("uid-1") {
				t.Errorf("deleted without the credential's UID as precondition: %+v", api.deletes[0])
			}

			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one that says %q", err, tc.wantErr)
				}
				if stdout.Len() > 0 {
					t.Errorf("wrote to stdout after an error:\n%s", stdout.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"breakglasscredential team-a/dev-x7k2p: Pending (WaitingForCluster: the control plane has not signed it yet)\n",
				"breakglasscredential team-a/dev-x7k2p: Issued\n",
				"breakglasscredential team-a/dev-x7k2p issued to system:customer-break-glass:system-admin, valid until ",
			} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q", want)
				}
			}

			// The kubeconfig works: the hosted cluster takes its certificate.
			restConfig, err := clientcmd.RESTConfigFromKubeConfig(stdout.Bytes())
			if err != nil {
				t.Fatalf("stdout is not a kubeconfig: %v\n%s", err, stdout.String())
			}
			httpClient, err := rest.HTTPClientFor(restConfig)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := httpClient.Get(restConfig.Host)
			if err != nil {
				t.Fatalf("the hosted cluster refuses the kubeconfig: %v", err)
			}
			defer resp.Body.Close()
			if body, _ := io.ReadAll(resp.Body); string(body) != "system:customer-break-glass:system-admin" {
				t.Errorf("the hosted cluster sees %q", body)
			}
		})
	}
}
