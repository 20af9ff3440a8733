package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

// The bounds the server accepts for spec.ttlSeconds and spec.tailLines.
const (
	minInspectionTTL       = 10 * time.Second
	maxInspectionTTL       = time.Hour
	maxInspectionTailLines = 10000
)

// inspectionViews are the views in the order the help lists them.
var inspectionViews = []v1alpha1.InspectionView{
	v1alpha1.InspectionViewHostedCluster, v1alpha1.InspectionViewNodePools, v1alpha1.InspectionViewControlPlanePods,
	v1alpha1.InspectionViewEvents, v1alpha1.InspectionViewLogs,
}

// inspectOptions are the flags of kubectl hcp inspect.
type inspectOptions struct {
	View      string
	Container string
	Pod       string
	Tail      int64
	Reason    string
	TTL       time.Duration
	Timeout   time.Duration
	Output    string
}

func newInspectOptions() *inspectOptions {
	return &inspectOptions{
		View:    string(v1alpha1.InspectionViewHostedCluster),
		TTL:     time.Duration(v1alpha1.DefaultInspectionTTLSeconds) * time.Second,
		Timeout: 2 * time.Minute,
	}
}

func newInspectCommand(f *clientFlags) *cobra.Command {
	o := newInspectOptions()
	cmd := &cobra.Command{
		Use:   "inspect CLUSTER --reason REASON [--view VIEW]",
		Short: "Read a view of an HCPCluster's hosted control plane on its management cluster (SREs)",
		Long: `inspect creates a ClusterInspection of the HCPCluster: the agent of the cluster's management
cluster reads one fixed view of the hosted control plane there, and the answer is printed as kubectl
would print it. No credential for the management cluster is needed, only the right to create
clusterinspections (the hcp-sre role). --reason is required and kept in the audit log.

Views:
  hostedcluster       the HostedCluster's version and conditions
  nodepools           the NodePools, and each condition that is not as it should be
  controlplane-pods   the pods of the control-plane namespace, as kubectl get pods shows them
  events              the events of the control-plane namespace, newest first
  logs                the last --tail lines of the log of --container (in --pod, or the first pod with it)

Progress goes to stderr, the answer to stdout. An answer cut to the agent's 64 KiB limit says so on
stderr. The inspection is not deleted: it stays readable with
"kubectl get clusterinspection NAME -o yaml" until it expires after --ttl.`,
		Example: `  # why cluster dev has been Provisioning for an hour: the HostedCluster's conditions
  kubectl hcp inspect dev --reason "ICM-4711: Provisioning for an hour"

  # its node pools, and what is wrong with them
  kubectl hcp inspect dev --view nodepools --reason "ICM-4711: node pool not ready"

  # the control-plane pods, as kubectl get pods shows them
  kubectl hcp inspect dev --view controlplane-pods --reason "ICM-4711"

  # the control plane's events, newest first
  kubectl hcp inspect dev --view events --reason "ICM-4711"

  # the last 200 lines of kube-apiserver's log
  kubectl hcp inspect dev --view logs --container kube-apiserver --tail 200 --reason "ICM-4711"

  # the whole ClusterInspection, answer included
  kubectl hcp inspect dev --view events --reason "ICM-4711" -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			client, namespace, err := f.Client()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), client, namespace, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("view", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		views := make([]string, 0, len(inspectionViews))
		for _, v := range inspectionViews {
			views = append(views, string(v))
		}
		return views, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// AddFlags adds the flags of inspect to fs.
func (o *inspectOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.View, "view", o.View, "What to read: "+joinViews(", ")+".")
	fs.StringVar(&o.Container, "container", o.Container, "The control-plane container whose log the logs view reads (kube-apiserver, etcd, ...).")
	fs.StringVar(&o.Pod, "pod", o.Pod, "The pod whose log the logs view reads; the first pod with --container if not given.")
	fs.Int64Var(&o.Tail, "tail", o.Tail, fmt.Sprintf("How many of the log's last lines the logs view reads, 1 to %d; the server's default (%d) if not given.",
		maxInspectionTailLines, v1alpha1.DefaultInspectionTailLines))
	fs.StringVar(&o.Reason, "reason", o.Reason, "Why the control plane is inspected (an incident or ticket); required, and kept in the audit log.")
	fs.DurationVar(&o.TTL, "ttl", o.TTL, fmt.Sprintf("How long the inspection and its answer stay readable, %s to %s.", minInspectionTTL, maxInspectionTTL))
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the answer; 0 waits without end.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Print the whole ClusterInspection instead of the answer: yaml or json.")
}

// Validate checks the flags before anything is sent.
func (o *inspectOptions) Validate() error {
	if strings.TrimSpace(o.Reason) == "" {
		return errors.New(`--reason is required: say why you inspect the control plane (an incident or ticket, say), as in --reason "ICM-4711: Provisioning for an hour"; it is kept in the audit log`)
	}
	view := v1alpha1.InspectionView(o.View)
	if !slices.Contains(inspectionViews, view) {
		return fmt.Errorf("--view must be one of %s; got %q", joinViews(", "), o.View)
	}
	logs := view == v1alpha1.InspectionViewLogs
	switch {
	case logs && o.Container == "":
		return errors.New("--view logs reads one container's log: name it with --container (kube-apiserver, etcd, ...)")
	case !logs && o.Container != "":
		return fmt.Errorf("--container is only for --view logs; --view %s reads no log", o.View)
	case !logs && o.Pod != "":
		return fmt.Errorf("--pod is only for --view logs; --view %s reads no log", o.View)
	case !logs && o.Tail != 0:
		return fmt.Errorf("--tail is only for --view logs; --view %s reads no log", o.View)
	case o.Tail < 0 || o.Tail > maxInspectionTailLines:
		return fmt.Errorf("--tail must be between 1 and %d; got %d", maxInspectionTailLines, o.Tail)
	}
	if o.TTL < minInspectionTTL || o.TTL > maxInspectionTTL || o.TTL%time.Second != 0 {
		return fmt.Errorf("--ttl must be whole seconds between %s and %s; got %s", minInspectionTTL, maxInspectionTTL, o.TTL)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("--timeout must not be negative; got %s", o.Timeout)
	}
	if o.Output != "" && o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("--output must be yaml or json; got %q", o.Output)
	}
	return nil
}

func joinViews(sep string) string {
	views := make([]string, 0, len(inspectionViews))
	for _, v := range inspectionViews {
		views = append(views, string(v))
	}
	return strings.Join(views, sep)
}

// Run creates an inspection of cluster, waits for its answer and prints it to out. Progress goes to
// errOut. The inspection is left to expire, so that the answer can be read again.
func (o *inspectOptions) Run(ctx context.Context, client versioned.Interface, namespace, cluster string, out, errOut io.Writer) error {
	spec := v1alpha1.ClusterInspectionSpec{
		ClusterName: cluster,
		View:        v1alpha1.InspectionView(o.View),
		Reason:      o.Reason,
		TTLSeconds:  ptr.To(int64(o.TTL / time.Second)),
	}
	if spec.View == v1alpha1.InspectionViewLogs {
		spec.Container, spec.Pod = o.Container, o.Pod
		if o.Tail != 0 {
			spec.TailLines = ptr.To(o.Tail)
		}
	}
	inspections := client.HcpV1alpha1().ClusterInspections(namespace)
	ci, err := inspections.Create(ctx, &v1alpha1.ClusterInspection{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-"},
		Spec:       spec,
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	what := fmt.Sprintf("clusterinspection %s/%s", namespace, ci.Name)
	fmt.Fprintf(errOut, "%s created. Waiting for the agent of %s to read %s of %s...\n",
		what, managementClusterOf(ctx, client, namespace, cluster), o.View, cluster)

	ci, err = o.waitForAnswer(ctx, client, ci, what, errOut)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printInspection(out, ci, o.Output)
	}
	if err := printAnswer(out, ci, time.Now()); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if ci.Status.Truncated {
		fmt.Fprintln(errOut, truncationNote(ci))
	}
	return nil
}

// managementClusterOf names the management cluster cluster is placed on, for the progress line only:
// the inspection's own condition says what it waits for when the cluster cannot be read or is not placed.
func managementClusterOf(ctx context.Context, client versioned.Interface, namespace, cluster string) string {
	hc, err := client.HcpV1alpha1().HCPClusters(namespace).Get(ctx, cluster, metav1.GetOptions{})
	if err != nil || hc.Status.ManagementCluster == "" {
		return "the management cluster of " + cluster
	}
	return hc.Status.ManagementCluster
}

// waitForAnswer watches ci until it is Answered, printing each new message of its Answered condition
// to errOut. An inspection that Failed is an error that gives the condition's message.
func (o *inspectOptions) waitForAnswer(ctx context.Context, client versioned.Interface, ci *v1alpha1.ClusterInspection,
	what string, errOut io.Writer) (*v1alpha1.ClusterInspection, error) {
	inspections := client.HcpV1alpha1().ClusterInspections(ci.Namespace)
	waitCtx, cancel := watchtools.ContextWithOptionalTimeout(ctx, o.Timeout)
	defer cancel()
	var last string
	answered := ci
	err := watchUntil(waitCtx, namedObject{
		what:  what,
		name:  ci.Name,
		watch: inspections.Watch,
		get: func(ctx context.Context) (runtime.Object, error) {
			return inspections.Get(ctx, ci.Name, metav1.GetOptions{})
		},
	}, ci.ResourceVersion, func(obj runtime.Object) (bool, error) {
		ci, ok := obj.(*v1alpha1.ClusterInspection)
		if !ok {
			return false, fmt.Errorf("watching %s: got a %T", what, obj)
		}
		message := answeredMessage(ci)
		if message != last && message != "" {
			fmt.Fprintf(errOut, "%s: %s\n", what, message)
			last = message
		}
		switch ci.Status.Phase {
		case v1alpha1.ClusterInspectionPhaseAnswered:
			answered = ci
			return true, nil
		case v1alpha1.ClusterInspectionPhaseFailed:
			if message == "" {
				message = "the server gave no reason"
			}
			return false, fmt.Errorf("%s failed: %s", what, message)
		}
		return false, nil
	})
	switch {
	case err == nil:
		return answered, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		waiting := last
		if waiting == "" {
			waiting = "the server has not reported on it"
		}
		return nil, fmt.Errorf("%s was not answered within %s (%s); it stays until it expires, so "+
			"\"kubectl get clusterinspection %s -o yaml\" shows a later answer, or try again with a longer --timeout",
			what, o.Timeout, waiting, ci.Name)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("interrupted while waiting for %s to be answered", what)
	}
	return nil, err
}

// answeredMessage is what the inspection's Answered condition says, as "reason: message"; empty
// before the server has reported anything.
func answeredMessage(ci *v1alpha1.ClusterInspection) string {
	c := meta.FindStatusCondition(ci.Status.Conditions, v1alpha1.ConditionAnswered)
	if c == nil {
		return ""
	}
	return describeReason(c)
}

// printInspection prints the whole inspection as kubectl get -o yaml|json would.
func printInspection(out io.Writer, ci *v1alpha1.ClusterInspection, format string) error {
	ci = ci.DeepCopy()
	// A typed client's objects lose their kind; -o output names it.
	ci.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("ClusterInspection"))
	var b []byte
	var err error
	if format == "json" {
		b, err = json.MarshalIndent(ci, "", "    ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(ci)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}
