package agent

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The options of an Agent are completed and validated before New, so that the command reports every bad
// value at once (Validate joins them) and nothing connects with half-valid options.

// Defaults of Options.
const (
	DefaultStateNamespace = "maestro-agent"
	DefaultResyncInterval = time.Minute
	// DefaultWorkers is high because a bundle's apply waits mostly on the management cluster's API, a
	// write per manifest: many at once keep the API server busy.
	DefaultWorkers = 16
)

// Options configure an Agent.
type Options struct {
	// Consumer is the agent's consumer name, the management cluster it serves; Source the source ID it
	// exchanges events with.
	Consumer, Source string
	// BrokerURL (mqtts://host:port) and BrokerTLS, which presents the agent's client certificate, reach
	// the MQTT broker.
	BrokerURL string
	BrokerTLS *tls.Config
	// ClientID is the MQTT client ID; <consumer>-work-agent when empty.
	ClientID string
	// Kube reaches the management cluster.
	Kube *rest.Config
	// StateNamespace holds the agent's bundle records; it is created if missing.
	StateNamespace string
	// ResyncInterval is how often the agent sends the versions it holds besides on every connect; the
	// source also takes it as the agent's heartbeat.
	ResyncInterval time.Duration
	// Workers is how many bundles are applied or deleted, and how many statuses built, at once; more
	// bundles wait for their records meanwhile.
	Workers int
}

// Complete fills in the defaults.
func (o *Options) Complete() {
	if o.ClientID == "" && o.Consumer != "" {
		o.ClientID = o.Consumer + "-work-agent"
	}
	if o.StateNamespace == "" {
		o.StateNamespace = DefaultStateNamespace
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
}

// Validate checks completed options.
func (o *Options) Validate() error {
	var errs []error
	if err := protocol.ValidateID("consumer", o.Consumer); err != nil {
		errs = append(errs, err)
	}
	if err := protocol.ValidateID("source", o.Source); err != nil {
		errs = append(errs, err)
	}
	if o.BrokerURL == "" {
		errs = append(errs, errors.New("the MQTT broker URL is empty"))
	}
	if o.BrokerTLS == nil {
		errs = append(errs, errors.New("the MQTT broker needs TLS: the agent authenticates with its client certificate"))
	}
	if o.Kube == nil {
		errs = append(errs, errors.New("no client configuration for the management cluster"))
	}
	if msgs := validation.IsDNS1123Label(o.StateNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("state namespace %q: %v", o.StateNamespace, msgs))
	}
	if o.ResyncInterval <= 0 {
		errs = append(errs, fmt.Errorf("resync interval %v: must be positive", o.ResyncInterval))
	}
	if o.Workers <= 0 {
		errs = append(errs, fmt.Errorf("workers %d: must be at least 1", o.Workers))
	}
	return errors.Join(errs...)
}
