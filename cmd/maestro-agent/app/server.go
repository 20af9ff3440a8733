package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	// The agent's workqueues and client report to the same /metrics.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/version"
)

// NewCommand returns the maestro-agent command; it runs until ctx ends.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "maestro-agent",
		Short: "Applies the manifest bundles a Maestro source sends to this management cluster and reports their status",
		Long: `maestro-agent connects to the MQTT broker of a Maestro source (hcp-apiserver) as one
consumer, applies the manifest bundles the source sends to the management cluster it runs on,
and sends back their status. It records the bundles it holds in --state-namespace, so that
after a restart it repairs them and finishes the deletions it had started.

Give it the agent bundle hcp-apiserver issued for the consumer (--agent-bundle), or the broker
URL, CA, client certificate and key and the consumer name one by one.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return Run(c.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	version.AddFlag(cmd)
	return cmd
}

// Run runs the agent, and the metrics server if one is asked for, until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	opts, err := o.AgentOptions()
	if err != nil {
		return err
	}
	a, err := agent.New(opts)
	if err != nil {
		return err
	}
	if o.MetricsBindAddress != "0" {
		stop, err := serveMetrics(ctx, o.MetricsBindAddress, a.Ready, o.Profiling)
		if err != nil {
			return err
		}
		defer stop()
	}
	return a.Run(ctx)
}

// serveMetrics serves /metrics, /healthz (the process answers) and /readyz (ready says the agent works) on
// address until stop is called; with profiling, /debug/pprof too.
func serveMetrics(ctx context.Context, address string, ready func() error, profiling bool) (stop func(), err error) {
	logger := klog.FromContext(ctx)
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(err.Error()))
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "Serving metrics failed")
		}
	}()
	logger.Info("Serving metrics", "address", l.Addr().String())
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdownCtx)
		<-done
	}, nil
}
