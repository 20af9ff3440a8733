package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/embeddedetcd"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/version"
)

// NewCommand returns the hcp-apiserver command.
func NewCommand(ctx context.Context) *cobra.Command {
	return NewCommandWithOptions(ctx, NewOptions())
}

// NewCommandWithOptions returns the command with o as defaults for its flags; tests use it
// to hand over a listener they opened.
func NewCommandWithOptions(ctx context.Context, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hcp-apiserver",
		Short: "Serves ARO HCP hosted clusters, node pools, break-glass credentials and management clusters as Kubernetes resources",
		Long: `hcp-apiserver serves the hcp.aro.azure.com API group from etcd.

With no --etcd-servers it runs an embedded etcd in --data-dir. With no
--authentication-kubeconfig / --authorization-kubeconfig and outside a pod it
runs standalone: it makes its own CA and writes <data-dir>/admin.kubeconfig
once it is ready to serve. Otherwise it runs aggregated behind kube-apiserver.`,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.ComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, args []string) error {
			return Run(c.Context(), o)
		},
		SilenceUsage: true,
	}
	cmd.SetContext(ctx)
	fss := o.Flags()
	globalflag.AddGlobalFlags(fss.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	version.AddFlag(cmd)
	fss.FlagSet("global").AddFlag(cmd.Flags().Lookup("version"))
	// --help lists the flags by section, as kube-apiserver does; agent-bundle keeps cobra's plain help.
	plainHelp, plainUsage := cmd.HelpFunc(), cmd.UsageFunc()
	cliflag.SetUsageAndHelpFunc(cmd, fss, 0)
	sectionedHelp, sectionedUsage := cmd.HelpFunc(), cmd.UsageFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == cmd {
			sectionedHelp(c, args)
			return
		}
		plainHelp(c, args)
	})
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		if c == cmd {
			return sectionedUsage(c)
		}
		return plainUsage(c)
	})
	cmd.AddCommand(newAgentBundleCommand(), newDecodeStoredCommand())
	return cmd
}

// newAgentBundleCommand returns "hcp-apiserver agent-bundle": the documented way to give a maestro-agent
// its credentials for the embedded broker.
func newAgentBundleCommand() *cobra.Command {
	a := &agentBundleOptions{dataDir: "hcp-data", source: DefaultSource}
	cmd := &cobra.Command{
		Use:   "agent-bundle --consumer NAME --output FILE",
		Short: "Writes the credentials a maestro-agent needs to reach this server's embedded MQTT broker",
		Long: `agent-bundle issues a client certificate for the maestro-agent of one management
cluster (its consumer name is the ManagementCluster's name) from the CA in
<data-dir>/pki, and writes it with the broker URL and the CA that verifies the
broker into one file, which maestro-agent reads with --agent-bundle. The agent
may publish and subscribe only on its own consumer's topics.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.writeAgentBundle() },
	}
	fs := cmd.Flags()
	fs.StringVar(&a.dataDir, "data-dir", a.dataDir, "The --data-dir of the hcp-apiserver whose CA issues the certificate.")
	fs.StringVar(&a.consumer, "consumer", a.consumer, "The consumer name: the name of the ManagementCluster the agent serves.")
	fs.StringVar(&a.brokerURL, "broker-url", a.brokerURL, "The broker URL the agent dials (default: the one the server recorded in its data directory).")
	fs.StringVar(&a.source, "maestro-source", a.source, "The server's --maestro-source.")
	fs.StringVarP(&a.output, "output", "o", a.output, "Where to write the bundle (mode 0600).")
	return cmd
}

// Run starts the server and blocks until ctx is done, then stops the API before etcd.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	// Before anything in the data directory is touched: it may be another server's.
	unlock, err := lockDataDir(ctx, o.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	if o.Standalone() {
		// The kubeconfig appears only once the server is ready, so its presence means "ready".
		if err := os.Remove(o.AdminKubeconfig()); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	var etcd *embeddedetcd.Etcd
	var etcdURL string
	if len(o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList) == 0 {
		if etcd, err = embeddedetcd.Start(ctx, filepath.Join(o.DataDir, "etcd")); err != nil {
			if ctx.Err() != nil {
				// Asked to stop while etcd was starting.
				return nil
			}
			return err
		}
		// Deferred calls run after the API server has drained, so etcd outlives every request.
		defer etcd.Close()
		etcdURL = etcd.ClientURL
	}
	completed, err := o.Complete(ctx, etcdURL)
	if err != nil {
		return err
	}
	if err := completed.Validate(); err != nil {
		return err
	}
	config, err := completed.Config()
	if err != nil {
		return err
	}
	// Runs before the embedded etcd stops: deferred calls run last in, first out.
	defer config.Rules.Claims.Close()
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	// With an update service, every replica serves the graph etcd keeps, and the leader polls for it.
	var versionsClient *clientv3.Client
	if o.Versions.UpdateServiceURL != "" {
		if versionsClient, err = o.newEtcdClient(); err != nil {
			return fmt.Errorf("the update service's graph: %w", err)
		}
		defer versionsClient.Close()
		// A cluster created right after a restart resolves its version against the stored graph, not the
		// built-in one: serving waits for the first read, unless etcd does not answer it soon.
		read := make(chan struct{})
		go o.Versions.followStoredGraph(ctx, versionsClient, completed.Catalog, completed.Lifecycle, read)
		select {
		case <-read:
		case <-ctx.Done():
			return nil // stopped before serving, as a stop while etcd starts
		case <-time.After(storedGraphWait):
			logger.Info("The stored graph of the update service was not read in time; serving the built-in catalog until it is", "waited", storedGraphWait)
		}
	}
	var newSource func() (*source.Source, error)
	if o.Maestro.enabled() {
		if newSource, err = completed.startMaestro(ctx); err != nil {
			return err
		}
	}
	loopback, serverDone := config.GenericConfig.LoopbackClientConfig, ctx.Done()
	// The controllers and the Maestro source run on one replica only: with an embedded etcd there is
	// one; replicas sharing --etcd-servers elect a leader.
	lead := func(ctx context.Context) {
		var src *source.Source
		if newSource != nil {
			var err error
			if src, err = newSource(); err != nil {
				logger.Error(err, "Cannot make the Maestro source")
				return
			}
			go func() {
				if err := src.Run(ctx); err != nil {
					logger.Error(err, "The Maestro source stopped")
				}
			}()
		}
		if err := o.Controllers.start(ctx, loopback, config.InformerFactory, serverDone, completed.Catalog, src); err != nil {
			logger.Error(err, "Cannot start the cluster controllers")
			return
		}
		if versionsClient != nil {
			if err := o.Versions.pollUpdateService(ctx, versionsClient, completed.Lifecycle); err != nil {
				logger.Error(err, "Cannot poll the update service")
			}
		}
		<-ctx.Done()
	}
	server.GenericAPIServer.AddPostStartHookOrDie("start-cluster-controllers", func(hookCtx genericapiserver.PostStartHookContext) error {
		if etcd != nil {
			go lead(hookCtx)
			return nil
		}
		return o.whileLeader(hookCtx, lead)
	})
	if o.Standalone() {
		server.GenericAPIServer.AddPostStartHookOrDie("write-admin-kubeconfig", func(hookCtx genericapiserver.PostStartHookContext) error {
			go writeAdminKubeconfigWhenReady(hookCtx, o, loopback, config.GenericConfig.SecureServing.Listener.Addr().String())
			return nil
		})
	}
	if etcd != nil {
		go func() {
			select {
			case err := <-etcd.Err():
				logger.Error(err, "Embedded etcd failed")
			case <-ctx.Done():
			}
		}()
	}
	logger.Info("Starting hcp-apiserver", "standalone", o.Standalone(), "dataDir", o.DataDir)
	err = server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Asked to stop, and stopped cleanly.
		return nil
	}
	return err
}

// writeAdminKubeconfigWhenReady waits for /readyz to pass, then writes admin.kubeconfig.
func writeAdminKubeconfigWhenReady(ctx context.Context, o *Options, loopback *rest.Config, addr string) {
	logger := klog.FromContext(ctx)
	client, err := discovery.NewDiscoveryClientForConfig(loopback)
	if err != nil {
		logger.Error(err, "Cannot check readiness")
		return
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return client.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error() == nil, nil
	})
	if err != nil {
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		logger.Error(err, "Cannot tell the serving port", "address", addr)
		return
	}
	url := "https://" + net.JoinHostPort("127.0.0.1", port)
	if err := o.PKI().WriteAdminKubeconfig(o.AdminKubeconfig(), url); err != nil {
		logger.Error(err, "Cannot write the admin kubeconfig")
		return
	}
	logger.Info("Ready; wrote the admin kubeconfig", "path", o.AdminKubeconfig(), "server", url)
}
