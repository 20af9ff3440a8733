// Package app holds the command line of maestro-agent: its flags, how they turn into an agent's
// configuration, and how the agent runs until told to stop.
package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
)

// DefaultSource is the source ID of hcp-apiserver unless configured otherwise.
const DefaultSource = "hcp-apiserver"

// Options are the flags of maestro-agent.
type Options struct {
	// AgentBundle is the file hcp-apiserver issues: broker URL, CA, client certificate and key,
	// consumer and source. The Broker* flags give the same one file at a time.
	AgentBundle    string
	BrokerURL      string
	BrokerCAFile   string
	BrokerCertFile string
	BrokerKeyFile  string

	ConsumerName string
	Source       string

	// Kubeconfig reaches the management cluster; empty means the pod's service account.
	Kubeconfig     string
	StateNamespace string
	ResyncInterval time.Duration
	Workers        int
	// KubeAPIQPS and KubeAPIBurst limit the agent's requests to the management cluster.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// MetricsBindAddress serves /metrics, /healthz and /readyz; "0" serves nothing.
	MetricsBindAddress string
	// Profiling adds Go's profiles, /debug/pprof, to what MetricsBindAddress serves.
	Profiling bool
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		StateNamespace:     agent.DefaultStateNamespace,
		ResyncInterval:     agent.DefaultResyncInterval,
		Workers:            agent.DefaultWorkers,
		KubeAPIQPS:         500,
		KubeAPIBurst:       1000,
		MetricsBindAddress: ":8090",
	}
}

// AddFlags adds every flag to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.AgentBundle, "agent-bundle", o.AgentBundle,
		"The agent bundle file hcp-apiserver issued for this consumer (broker URL, CA, client certificate and key, consumer and source). "+
			"Instead of it, give --broker-url, --broker-ca-file, --broker-cert-file, --broker-key-file and --consumer-name.")
	fs.StringVar(&o.BrokerURL, "broker-url", o.BrokerURL, "The MQTT broker, mqtts://host[:port] (port 8883 by default).")
	fs.StringVar(&o.BrokerCAFile, "broker-ca-file", o.BrokerCAFile, "PEM CA certificates that verify the broker's serving certificate.")
	fs.StringVar(&o.BrokerCertFile, "broker-cert-file", o.BrokerCertFile,
		"PEM client certificate the agent authenticates to the broker with; its common name must be the consumer name.")
	fs.StringVar(&o.BrokerKeyFile, "broker-key-file", o.BrokerKeyFile, "PEM private key of --broker-cert-file.")
	fs.StringVar(&o.ConsumerName, "consumer-name", o.ConsumerName,
		"The consumer this agent serves: the management cluster's consumer name. Defaults to the agent bundle's.")
	fs.StringVar(&o.Source, "source", o.Source,
		"The source ID the agent exchanges events with. Defaults to the agent bundle's, else "+DefaultSource+".")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"kubeconfig of the management cluster; when empty, the agent uses its pod's service account.")
	fs.StringVar(&o.StateNamespace, "state-namespace", o.StateNamespace,
		"Namespace of the management cluster where the agent records the bundles it holds; created if missing.")
	fs.DurationVar(&o.ResyncInterval, "resync-interval", o.ResyncInterval,
		"How often the agent sends the source the bundle generations it holds, besides on every connect. It is also the agent's heartbeat.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "How many bundles are applied, and how many statuses built, at once.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS,
		"Requests per second the agent may make to the management cluster. A bundle costs about a write per manifest (its record is written together with other bundles'); the OCM work agent's 50 would hold delivery to 50 manifests/s.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Requests the agent may make at once above --kube-api-qps.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"host:port to serve /metrics, /healthz and /readyz (connected to the broker) on over HTTP; 0 serves none.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling,
		"Also serve Go's profiles at /debug/pprof on --metrics-bind-address. That address has no authentication: keep it off, or the address private.")
}

// Validate checks the flags on their own, before any file is read.
func (o *Options) Validate() error {
	var errs []error
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be above 0 and --kube-api-burst at least 1 (got %v and %d)", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	brokerFlags := o.BrokerURL != "" || o.BrokerCAFile != "" || o.BrokerCertFile != "" || o.BrokerKeyFile != ""
	switch {
	case o.AgentBundle != "" && brokerFlags:
		errs = append(errs, errors.New("--agent-bundle and --broker-url, --broker-ca-file, --broker-cert-file, --broker-key-file "+
			"say the same thing: give the bundle, or the four broker flags"))
	case o.AgentBundle == "":
		var missing []string
		for _, f := range []struct{ flag, value string }{{"--broker-url", o.BrokerURL}, {"--broker-ca-file", o.BrokerCAFile},
			{"--broker-cert-file", o.BrokerCertFile}, {"--broker-key-file", o.BrokerKeyFile}, {"--consumer-name", o.ConsumerName}} {
			if f.value == "" {
				missing = append(missing, f.flag)
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("give --agent-bundle, or all of --broker-url, --broker-ca-file, --broker-cert-file, "+
				"--broker-key-file and --consumer-name; missing: %s", strings.Join(missing, ", ")))
		}
	}
	if o.ResyncInterval < time.Second {
		errs = append(errs, fmt.Errorf("--resync-interval %v is too short: give at least 1s", o.ResyncInterval))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers %d: give at least 1", o.Workers))
	}
	if o.MetricsBindAddress != "0" {
		if _, port, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-bind-address %q: want host:port, :port or 0: %w", o.MetricsBindAddress, err))
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-bind-address %q: port %q is not a number from 0 to 65535", o.MetricsBindAddress, port))
		}
	}
	return errors.Join(errs...)
}

// AgentOptions reads the files the flags name and returns the agent's configuration.
func (o *Options) AgentOptions() (agent.Options, error) {
	bundle, err := o.brokerBundle()
	if err != nil {
		return agent.Options{}, err
	}
	brokerTLS, err := bundle.TLSConfig()
	if err != nil {
		return agent.Options{}, err
	}
	address, err := bundle.Address()
	if err != nil {
		return agent.Options{}, err
	}
	kube, err := o.kubeConfig()
	if err != nil {
		return agent.Options{}, err
	}
	opts := agent.Options{
		Consumer:       bundle.Consumer,
		Source:         bundle.Source,
		BrokerURL:      (&url.URL{Scheme: "mqtts", Host: address}).String(),
		BrokerTLS:      brokerTLS,
		Kube:           kube,
		StateNamespace: o.StateNamespace,
		ResyncInterval: o.ResyncInterval,
		Workers:        o.Workers,
	}
	opts.Complete()
	return opts, opts.Validate()
}

// brokerBundle returns the agent bundle, from its file or from the broker flags, validated the same way.
func (o *Options) brokerBundle() (*agentbundle.Bundle, error) {
	if o.AgentBundle != "" {
		b, err := agentbundle.Load(o.AgentBundle)
		if err != nil {
			return nil, err
		}
		// The broker grants topics by the certificate's name: another consumer name cannot work.
		if o.ConsumerName != "" && o.ConsumerName != b.Consumer {
			return nil, fmt.Errorf("--consumer-name %q: the agent bundle %s is issued to consumer %q; leave the flag out or use that consumer's bundle",
				o.ConsumerName, o.AgentBundle, b.Consumer)
		}
		if o.Source != "" {
			b.Source = o.Source
		}
		return b, b.Validate()
	}
	b := &agentbundle.Bundle{
		APIVersion: agentbundle.APIVersion,
		Kind:       agentbundle.Kind,
		BrokerURL:  o.BrokerURL,
		Source:     o.Source,
		Consumer:   o.ConsumerName,
	}
	if b.Source == "" {
		b.Source = DefaultSource
	}
	for _, f := range []struct {
		flag, path string
		data       *[]byte
	}{
		{"--broker-ca-file", o.BrokerCAFile, &b.CertificateAuthorityData},
		{"--broker-cert-file", o.BrokerCertFile, &b.ClientCertificateData},
		{"--broker-key-file", o.BrokerKeyFile, &b.ClientKeyData},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.flag, err)
		}
		*f.data = data
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("--broker-url, --broker-ca-file, --broker-cert-file, --broker-key-file, --consumer-name, --source: %w", err)
	}
	return b, nil
}

// kubeConfig returns the management cluster's client configuration.
func (o *Options) kubeConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
		}
	} else if cfg, err = rest.InClusterConfig(); err != nil {
		return nil, fmt.Errorf("no --kubeconfig given and not in a pod: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "maestro-agent"
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	// One budget for every client made from cfg (applies, reads, records, inspections), as the flag says:
	// each client would otherwise make a limiter of its own.
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(o.KubeAPIQPS, o.KubeAPIBurst)
	return cfg, nil
}
