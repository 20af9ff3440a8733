package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/version"
)

// NewCommand returns the arm-shim command; it runs until ctx ends.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "arm-shim",
		Short: "Serves the ARO HCP ARM REST contract of one region on top of hcp-apiserver",
		Long: `arm-shim serves Microsoft.RedHatOpenShift hcpOpenShiftClusters, their nodePools, break-glass
credential actions, asynchronous operations, versions, subscription lifecycle and deployment
preflight, as Azure Resource Manager calls a resource provider, for the region --location.

It keeps no state: it reads and writes HCPClusters, NodePools, BreakglassCredentials,
ARMOperations and ARMSubscriptions in hcp-apiserver through --kubeconfig, and lists the
OpenShiftVersions hcp-apiserver writes from its version catalog as hcpOpenShiftVersions.

ARM authenticates with a client certificate that --client-ca-file verifies. Without it the
shim makes its own CA, serving and client certificates in --pki-dir, for local development.`,
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

// Run serves until ctx ends, then lets requests in flight finish.
func Run(ctx context.Context, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	cfg, err := o.Config(ctx)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return err
	}
	return Serve(ctx, cfg, listener)
}

// Serve serves cfg on listener until ctx ends.
func Serve(ctx context.Context, cfg *Config, listener net.Listener) error {
	logger := klog.FromContext(ctx)
	t := cfg.Timeouts.withDefaults()
	server := &http.Server{
		Handler:           withDeadline(cfg.Frontend, t.Write*9/10),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		// Requests keep the logger but not the cancellation: shutting down lets them finish.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if cfg.Informers != nil {
		// The cache only saves requests: a request it cannot answer yet asks the API, so serving need
		// not wait for it to fill.
		cfg.Informers.Start(ctx.Done())
		defer cfg.Informers.Shutdown()
	}
	if cfg.ProfilingAddress != "" {
		stop, err := serveProfiles(ctx, cfg.ProfilingAddress)
		if err != nil {
			return err
		}
		defer stop()
	}
	url := "https://" + listener.Addr().String()
	logger.Info("Serving ARM", "url", url, "location", cfg.Frontend.Location())

	done := make(chan error, 1)
	go func() { done <- server.Serve(tls.NewListener(listener, cfg.TLS)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	logger.Info("Shutting down: finishing the requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveProfiles serves Go's profiles on address until stop is called.
func serveProfiles(ctx context.Context, address string) (stop func(), err error) {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("--profiling-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go server.Serve(listener)
	klog.FromContext(ctx).Info("Serving Go's profiles", "url", "http://"+listener.Addr().String()+"/debug/pprof/")
	return func() { server.Close() }, nil
}

// withDefaults fills the timeouts left zero from DefaultTimeouts.
func (t Timeouts) withDefaults() Timeouts {
	for _, d := range []struct {
		field *time.Duration
		def   time.Duration
	}{
		{&t.ReadHeader, DefaultTimeouts.ReadHeader}, {&t.Read, DefaultTimeouts.Read},
		{&t.Write, DefaultTimeouts.Write}, {&t.Idle, DefaultTimeouts.Idle},
	} {
		if *d.field <= 0 {
			*d.field = d.def
		}
	}
	return t
}

// withDeadline ends each request's context after d: the API calls of a request that runs too long
// fail, and the caller hears 503 before the server's write timeout cuts the connection without an
// answer.
func withDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
