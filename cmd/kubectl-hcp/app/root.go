// Package app is the kubectl hcp plugin: it gets break-glass kubeconfigs for hosted clusters from
// hcp-apiserver, making the key on the user's machine, revokes them, and reads views of a hosted
// control plane on its management cluster through ClusterInspections.
package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/pkg/version"
)

// NewCommand returns the kubectl-hcp command; what it waits for ends with ctx.
func NewCommand(ctx context.Context) *cobra.Command {
	f := newClientFlags()
	cmd := &cobra.Command{
		Use:   "hcp",
		Short: "Get and revoke break-glass credentials of ARO HCP clusters, and inspect their control planes",
		Long: `kubectl hcp gets a short-lived cluster-admin kubeconfig for an HCPCluster (a break-glass
credential), with a key made on this machine that never leaves it, and revokes a cluster's
break-glass credentials. For SREs, it reads a view of a cluster's hosted control plane on its
management cluster (a ClusterInspection), with no credential for the management cluster.`,
		Example: `  # a kubeconfig for cluster dev of the current namespace, valid for one hour
  kubectl hcp breakglass dev --ttl 1h > dev.kubeconfig

  # make every break-glass credential of dev issued so far stop working
  kubectl hcp revoke dev --wait

  # the control-plane pods of dev, read on its management cluster
  kubectl hcp inspect dev --view controlplane-pods --reason "ICM-4711: Provisioning for an hour"`,
		Args: cobra.NoArgs,
		// kubectl runs the plugin as "kubectl hcp"; help and usage say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl hcp"},
	}
	// kubectl completes a plugin's arguments through kubectl_complete-hcp, not through a script of its own.
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetContext(ctx)
	f.AddFlags(cmd)
	version.AddFlag(cmd)
	cmd.AddCommand(newBreakglassCommand(f), newRevokeCommand(f), newInspectCommand(f))
	return cmd
}

// clientFlags are kubectl's flags that choose the server and the namespace. Only these: kubectl's
// --user would clash with breakglass --user, and the others are rarely worth a plugin's help text.
type clientFlags struct {
	loadingRules *clientcmd.ClientConfigLoadingRules
	overrides    *clientcmd.ConfigOverrides
}

func newClientFlags() *clientFlags {
	return &clientFlags{
		// KUBECONFIG and ~/.kube/config, unless --kubeconfig names a file.
		loadingRules: clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides:    &clientcmd.ConfigOverrides{},
	}
}

// AddFlags adds the flags to cmd and its subcommands.
func (f *clientFlags) AddFlags(cmd *cobra.Command) {
	fs := cmd.PersistentFlags()
	fs.StringVar(&f.loadingRules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "",
		"Path to the kubeconfig file of hcp-apiserver, or of the kube-apiserver that aggregates it.")
	fs.StringVar(&f.overrides.CurrentContext, clientcmd.FlagContext, "", "The kubeconfig context to use.")
	fs.StringVarP(&f.overrides.Context.Namespace, clientcmd.FlagNamespace, "n", "",
		"The namespace of the HCPCluster; the kubeconfig context's namespace if not given.")
}

// Client returns a client of the hcp.aro.azure.com API and the namespace to work in.
func (f *clientFlags) Client() (versioned.Interface, string, error) {
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.loadingRules, f.overrides)
	namespace, _, err := config.Namespace()
	if err != nil {
		return nil, "", err
	}
	restConfig, err := config.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	client, err := versioned.NewForConfig(restConfig)
	if err != nil {
		return nil, "", fmt.Errorf("making a client for %s: %w", restConfig.Host, err)
	}
	return client, namespace, nil
}
