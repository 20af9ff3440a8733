// Package app holds the command line of arm-shim: its flags, the TLS they configure, and the server
// that runs until told to stop.
package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/frontend"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/standalone"
)

// Options are the flags of arm-shim.
type Options struct {
	// Kubeconfig reaches hcp-apiserver; empty means the pod's service account.
	Kubeconfig string
	// Location is the one Azure region served.
	Location    string
	BindAddress string
	// SecurePort is the HTTPS port; 0 picks a free one.
	SecurePort  int
	TLSCertFile string
	TLSKeyFile  string
	// ClientCAFile verifies ARM's client certificates; without it the shim runs for local
	// development with a CA of its own in PKIDir.
	ClientCAFile string
	PKIDir       string
	// KubeAPIQPS and KubeAPIBurst limit the requests to hcp-apiserver, as kube's components do.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// Timeouts bound what one connection can hold, as http.Server's fields of the same names do.
	Timeouts Timeouts
	// ProfilingAddress serves Go's profiles at /debug/pprof when not empty.
	ProfilingAddress string
}

// Timeouts are the limits of the shim's HTTP server.
type Timeouts struct {
	ReadHeader time.Duration
	Read       time.Duration
	Write      time.Duration
	Idle       time.Duration
}

// DefaultTimeouts fit the longest handler, a preflight of 800 resources (a few seconds), with room
// for a slow API, and a 2 MiB body sent at 35 KB/s.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 60 * time.Second, Write: 90 * time.Second, Idle: 120 * time.Second}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{BindAddress: "127.0.0.1", SecurePort: 8443, PKIDir: "arm-shim-pki", KubeAPIQPS: 1000, KubeAPIBurst: 2000,
		Timeouts: DefaultTimeouts}
}

// AddFlags adds every flag to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"kubeconfig of hcp-apiserver (or of the kube-apiserver that aggregates it); when empty, the pod's service account.")
	fs.StringVar(&o.Location, "location", o.Location, "The Azure region this shim serves, e.g. eastus. Required.")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address to serve HTTPS on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The HTTPS port; 0 picks a free port, which the log line \"Serving ARM\" names.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "PEM serving certificate (with its chain). Required with --client-ca-file.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "PEM private key of --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile,
		"PEM CA certificates that verify the client certificate ARM calls with; every request must present one. "+
			"Without it the shim runs for local development: it makes a CA, a serving and a client certificate in --pki-dir and requires that client certificate.")
	fs.StringVar(&o.PKIDir, "pki-dir", o.PKIDir,
		"Without --client-ca-file: where the shim keeps its own ca.crt, serving.crt/.key and client.crt/.key (kept across restarts).")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS,
		"Requests per second to hcp-apiserver. An ARM write is two or three API requests; the API's own priority and fairness protects it.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Requests to hcp-apiserver allowed in a burst above --kube-api-qps.")
	fs.DurationVar(&o.Timeouts.ReadHeader, "read-header-timeout", o.Timeouts.ReadHeader,
		"How long a client may take to send a request's headers before its connection is closed.")
	fs.DurationVar(&o.Timeouts.Read, "read-timeout", o.Timeouts.Read,
		"How long a client may take to send a whole request, headers and body; a body still arriving then is answered 408 and the connection closed.")
	fs.DurationVar(&o.Timeouts.Write, "write-timeout", o.Timeouts.Write,
		"How long a request may take from the end of its headers to the end of its response. A request still waiting on hcp-apiserver at nine tenths of it "+
			"is answered 503, so that the caller hears before the connection is cut. Keep it above --read-timeout.")
	fs.DurationVar(&o.Timeouts.Idle, "idle-timeout", o.Timeouts.Idle,
		"How long a keep-alive connection may stay idle between requests before it is closed.")
	fs.StringVar(&o.ProfilingAddress, "profiling-address", o.ProfilingAddress,
		"host:port to serve Go's profiles on, at /debug/pprof, over plain HTTP and without authentication: keep it empty (the default, no profiles) or private.")
}

// Validate checks the flags on their own.
func (o *Options) Validate() error {
	var errs []error
	if o.Location == "" {
		errs = append(errs, errors.New("--location is required: the Azure region this shim serves"))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d is not a port from 0 to 65535", o.SecurePort))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if o.ClientCAFile != "" && o.TLSCertFile == "" {
		errs = append(errs, errors.New("--client-ca-file needs --tls-cert-file and --tls-private-key-file: the local CA serves development only"))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps %v and --kube-api-burst %d must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	for _, t := range []struct {
		flag  string
		value time.Duration
	}{{"--read-header-timeout", o.Timeouts.ReadHeader}, {"--read-timeout", o.Timeouts.Read}, {"--write-timeout", o.Timeouts.Write}, {"--idle-timeout", o.Timeouts.Idle}} {
		if t.value <= 0 {
			errs = append(errs, fmt.Errorf("%s %v must be positive: without it one client can hold a connection forever", t.flag, t.value))
		}
	}
	if o.ProfilingAddress != "" {
		if _, _, err := net.SplitHostPort(o.ProfilingAddress); err != nil {
			errs = append(errs, fmt.Errorf("--profiling-address %q is not host:port: %v", o.ProfilingAddress, err))
		}
	}
	if o.ClientCAFile == "" && o.PKIDir == "" {
		errs = append(errs, errors.New("without --client-ca-file, --pki-dir is required"))
	}
	return errors.Join(errs...)
}

// Config is what Run needs, made from the options.
type Config struct {
	Frontend *frontend.Frontend
	// Informers feed the frontend's caches; Serve starts them.
	Informers externalversions.SharedInformerFactory
	// Address is host:port to listen on.
	Address string
	TLS     *tls.Config
	// Timeouts are the server's; zero ones are DefaultTimeouts'.
	Timeouts Timeouts
	// ProfilingAddress serves /debug/pprof when not empty.
	ProfilingAddress string
}

// Config reads the files the flags name (making the local PKI when asked for) and returns the
// shim's configuration.
func (o *Options) Config(ctx context.Context) (*Config, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading --kubeconfig: %w", err)
	}
	restConfig.UserAgent = "arm-shim"
	restConfig.QPS, restConfig.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	// Protobuf, as kube's own components talk to kube-apiserver: cheaper to encode and decode on both sides.
	restConfig.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := versioned.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	// hcpOpenShiftVersions are listed from the API's OpenShiftVersions, which hcp-apiserver writes from
	// its catalog: the shim keeps no catalog of its own.
	factory := externalversions.NewSharedInformerFactory(client, 0)
	fe, err := frontend.New(frontend.Config{Client: client, Location: o.Location, Versions: factory.Hcp().V1alpha1().OpenShiftVersions(),
		Subscriptions: factory.Hcp().V1alpha1().ARMSubscriptions().Lister(), Namespaces: kube.CoreV1().Namespaces()})
	if err != nil {
		return nil, err
	}
	tlsConfig, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	return &Config{Frontend: fe, Informers: factory, Address: net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)), TLS: tlsConfig,
		Timeouts: o.Timeouts, ProfilingAddress: o.ProfilingAddress}, nil
}

// LocalPKI names the files of the development PKI in dir. The client certificate is the PKI's admin
// certificate under another name: the shim only asks that the CA signed it.
func LocalPKI(dir string) *standalone.PKI {
	pki := standalone.NewPKI(dir)
	pki.AdminCert, pki.AdminKey = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	return pki
}

// tlsConfig serves with the given certificate, or the local PKI's, and requires a client certificate
// the client CA verifies.
func (o *Options) tlsConfig() (*tls.Config, error) {
	certFile, keyFile, caFile := o.TLSCertFile, o.TLSKeyFile, o.ClientCAFile
	if caFile == "" {
		pki := LocalPKI(o.PKIDir)
		hosts := []string{"localhost", "127.0.0.1", "::1"}
		if ip := net.ParseIP(o.BindAddress); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
			hosts = append(hosts, o.BindAddress)
		}
		if err := pki.Ensure(hosts); err != nil {
			return nil, fmt.Errorf("making the local PKI in %s: %w", o.PKIDir, err)
		}
		caFile = pki.CACert
		if certFile == "" {
			certFile, keyFile = pki.ServingCert, pki.ServingKey
		}
	}
	serving, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{serving},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clientCAs,
	}, nil
}
