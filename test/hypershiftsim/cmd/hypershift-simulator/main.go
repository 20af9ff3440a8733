// Command hypershift-simulator runs the HyperShift operator's test double against a cluster that has
// the HyperShift CRDs but no HyperShift: it makes HostedClusters Available and NodePools Ready, as the
// README's quick start needs to show a cluster come up without Azure. It is a test double, not HyperShift.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the management cluster")
	provision := flag.Duration("provision-delay", 5*time.Second, "how long a HostedCluster takes to become Available")
	upgrade := flag.Duration("upgrade-delay", 5*time.Second, "how long a release upgrade takes")
	deletion := flag.Duration("deletion-delay", 2*time.Second, "how long the simulator keeps its finalizer on a deleted HostedCluster or NodePool")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, hypershiftsim.Options{ProvisionDelay: *provision, UpgradeDelay: *upgrade, DeletionDelay: *deletion}); err != nil {
		fmt.Fprintln(os.Stderr, "hypershift-simulator:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, opts hypershiftsim.Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	sim, err := hypershiftsim.New(cfg, opts)
	if err != nil {
		return err
	}
	klog.InfoS("Simulating the HyperShift operator (a test double)", "server", cfg.Host)
	return sim.Run(ctx)
}
