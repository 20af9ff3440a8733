package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

// revokeOptions are the flags of kubectl hcp revoke.
type revokeOptions struct {
	Wait    bool
	Timeout time.Duration
}

func newRevokeCommand(f *clientFlags) *cobra.Command {
	o := &revokeOptions{Timeout: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:   "revoke CLUSTER",
		Short: "Make every break-glass credential of an HCPCluster issued so far stop working",
		Long: `revoke asks hcp-apiserver to revoke every break-glass credential of the HCPCluster issued so
far. While it runs, the cluster's RevokingCredentials condition is True and no new credential is
issued; with --wait the command returns once it is over.`,
		Example: `  # revoke the credentials of cluster dev and wait until they no longer work
  kubectl hcp revoke dev --wait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Timeout < 0 {
				return fmt.Errorf("--timeout must not be negative; got %s", o.Timeout)
			}
			client, namespace, err := f.Client()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), client, namespace, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// AddFlags adds the flags of revoke to fs.
func (o *revokeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Wait, "wait", o.Wait, "Wait until the revocation is over.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long --wait waits; 0 waits without end.")
}

// Run asks for the revocation and, with --wait, waits for the cluster to report it over.
func (o *revokeOptions) Run(ctx context.Context, client versioned.Interface, namespace, cluster string, out, errOut io.Writer) error {
	clusters := client.HcpV1alpha1().HCPClusters(namespace)
	what := fmt.Sprintf("hcpcluster %s/%s", namespace, cluster)
	// LastTransitionTime has whole seconds.
	requested := metav1.NewTime(time.Now().Truncate(time.Second))
	_, err := clusters.RevokeCredentials(ctx, cluster, &v1alpha1.CredentialRevocation{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if !o.Wait {
		fmt.Fprintf(out, "%s: revocation of its break-glass credentials requested\n", what)
		return nil
	}

	waitCtx, cancel := watchtools.ContextWithOptionalTimeout(ctx, o.Timeout)
	defer cancel()
	r := revocation{requested: requested}
	var last string
	done := func(obj runtime.Object) (bool, error) {
		hc, ok := obj.(*v1alpha1.HCPCluster)
		if !ok {
			return false, fmt.Errorf("watching %s: got a %T", what, obj)
		}
		c := meta.FindStatusCondition(hc.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
		if c == nil {
			return false, nil
		}
		if state := fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, describeReason(c)); state != last {
			fmt.Fprintf(errOut, "%s: %s\n", what, state)
			last = state
		}
		return r.over(c), nil
	}
	// Watch from the cluster as it is now, after the request: a revocation that ran before the
	// request must not count.
	hc, err := clusters.Get(waitCtx, cluster, metav1.GetOptions{})
	if err == nil {
		var over bool
		if over, err = done(hc); err == nil && !over {
			err = watchUntil(waitCtx, namedObject{
				what:  what,
				name:  cluster,
				watch: clusters.Watch,
				get: func(ctx context.Context) (runtime.Object, error) {
					return clusters.Get(ctx, cluster, metav1.GetOptions{})
				},
			}, hc.ResourceVersion, done)
		}
	}
	switch {
	case err == nil:
		fmt.Fprintf(out, "%s: its break-glass credentials are revoked\n", what)
		return nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return fmt.Errorf("the revocation of the credentials of %s was not over within %s; it goes on on the server", what, o.Timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted while waiting for the revocation of the credentials of %s; it goes on on the server", what)
	}
	return err
}

// revocation tells from a cluster's RevokingCredentials condition when the revocation asked for at
// requested is over.
type revocation struct {
	requested metav1.Time
	started   bool
}

// over looks at the condition as it is now; it remembers having seen it True.
func (r *revocation) over(c *metav1.Condition) bool {
	switch c.Status {
	case metav1.ConditionTrue:
		r.started = true
	case metav1.ConditionFalse:
		// Seen running, or it ran and finished before this command looked.
		return r.started || !c.LastTransitionTime.Before(&r.requested)
	}
	return false
}
