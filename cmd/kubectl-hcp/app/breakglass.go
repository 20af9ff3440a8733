package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/aro-hcp/hcp-apiserver/pkg/breakglass"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	hcpclient "github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/typed/hcp/v1alpha1"
)

// The lifetimes the server issues (spec.expirationSeconds, 600 to 86400).
const (
	minTTL = 10 * time.Minute
	maxTTL = 24 * time.Hour
)

// breakglassOptions are the flags of kubectl hcp breakglass.
type breakglassOptions struct {
	TTL     time.Duration
	User    string
	Timeout time.Duration
}

func newBreakglassOptions() *breakglassOptions {
	return &breakglassOptions{TTL: time.Hour, User: "system-admin", Timeout: 10 * time.Minute}
}

func newBreakglassCommand(f *clientFlags) *cobra.Command {
	o := newBreakglassOptions()
	cmd := &cobra.Command{
		Use:   "breakglass CLUSTER",
		Short: "Write a short-lived cluster-admin kubeconfig for an HCPCluster to stdout",
		Long: `breakglass asks hcp-apiserver for a break-glass credential of the HCPCluster: a cluster-admin
client certificate valid for --ttl. It makes the key here and sends only a certificate request, waits
until the credential is issued, and writes a kubeconfig with the certificate and the key to stdout.
Progress goes to stderr.`,
		Example: `  # a kubeconfig for cluster dev, valid for one hour
  kubectl hcp breakglass dev --ttl 1h > dev.kubeconfig
  kubectl --kubeconfig dev.kubeconfig get nodes`,
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
	return cmd
}

// AddFlags adds the flags of breakglass to fs.
func (o *breakglassOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.TTL, "ttl", o.TTL, fmt.Sprintf("How long the credential is valid, %s to %s.", minTTL, maxTTL))
	fs.StringVar(&o.User, "user", o.User,
		"The user name in the certificate, after "+breakglass.UserPrefix+"; it shows in the cluster's audit log.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the credential to be issued; 0 waits without end.")
}

// Validate checks the flags before anything is sent.
func (o *breakglassOptions) Validate() error {
	if o.TTL < minTTL || o.TTL > maxTTL {
		return fmt.Errorf("--ttl must be between %s and %s, the lifetimes the server issues; got %s", minTTL, maxTTL, o.TTL)
	}
	if o.User == "" {
		return errors.New("--user must not be empty")
	}
	if o.Timeout < 0 {
		return fmt.Errorf("--timeout must not be negative; got %s", o.Timeout)
	}
	return nil
}

// Run creates a credential for cluster with a key made here, waits for it to be issued, and writes
// its kubeconfig, with the key, to out. Progress goes to errOut.
func (o *breakglassOptions) Run(ctx context.Context, client versioned.Interface, namespace, cluster string, out, errOut io.Writer) (err error) {
	keyPEM, csrPEM, err := breakglass.NewKeyAndCSR(o.User)
	if err != nil {
		return err
	}
	credentials := client.HcpV1alpha1().BreakglassCredentials(namespace)
	bgc, err := credentials.Create(ctx, &v1alpha1.BreakglassCredential{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-"},
		Spec: v1alpha1.BreakglassCredentialSpec{
			ClusterName:               cluster,
			CertificateSigningRequest: string(csrPEM),
			ExpirationSeconds:         ptr.To(int64(o.TTL / time.Second)),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	what := fmt.Sprintf("breakglasscredential %s/%s", namespace, bgc.Name)
	fmt.Fprintf(errOut, "%s created, waiting for it to be issued\n", what)

	var failed bool
	defer func() {
		// The key lives only in this process: once the command gives up, nobody can use the credential,
		// and while Pending or Issued it counts toward the cluster's limit. One that ended Failed,
		// Expired or Revoked stays, to say why.
		if err != nil && !failed {
			deleteCredential(ctx, credentials, bgc, what, errOut)
		}
	}()
	if failed, err = o.waitForIssued(ctx, credentials, bgc, what, errOut); err != nil {
		return err
	}

	raw, err := client.HcpV1alpha1().RESTClient().Get().
		Namespace(namespace).Resource("breakglasscredentials").Name(bgc.Name).SubResource("kubeconfig").
		DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("getting the kubeconfig of %s: %w", what, err)
	}
	kubeconfig, cert, err := addClientKey(raw, keyPEM)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := out.Write(kubeconfig); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "%s issued to %s, valid until %s (in %s)\n", what, cert.Subject.CommonName,
		cert.NotAfter.UTC().Format(time.RFC3339), duration.HumanDuration(time.Until(cert.NotAfter)))
	return nil
}

// waitForIssued watches bgc until it is Issued, printing each new state to errOut. failed is true when
// the credential ended in a phase other than Issued.
func (o *breakglassOptions) waitForIssued(ctx context.Context, credentials hcpclient.BreakglassCredentialInterface,
	bgc *v1alpha1.BreakglassCredential, what string, errOut io.Writer) (failed bool, err error) {
	waitCtx, cancel := watchtools.ContextWithOptionalTimeout(ctx, o.Timeout)
	defer cancel()
	var last string
	err = watchUntil(waitCtx, namedObject{
		what:  what,
		name:  bgc.Name,
		watch: credentials.Watch,
		get: func(ctx context.Context) (runtime.Object, error) {
			return credentials.Get(ctx, bgc.Name, metav1.GetOptions{})
		},
	}, bgc.ResourceVersion, func(obj runtime.Object) (bool, error) {
		bgc, ok := obj.(*v1alpha1.BreakglassCredential)
		if !ok {
			return false, fmt.Errorf("watching %s: got a %T", what, obj)
		}
		if state := describeCredential(bgc); state != last && state != "" {
			fmt.Fprintf(errOut, "%s: %s\n", what, state)
			last = state
		}
		switch bgc.Status.Phase {
		case v1alpha1.BreakglassCredentialPhaseIssued:
			return true, nil
		case v1alpha1.BreakglassCredentialPhaseFailed, v1alpha1.BreakglassCredentialPhaseExpired, v1alpha1.BreakglassCredentialPhaseRevoked:
			failed = true
			return false, fmt.Errorf("%s was not issued: %s", what, describeCredential(bgc))
		}
		return false, nil
	})
	switch {
	case err == nil || failed:
		return failed, err
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		state := last
		if state == "" {
			state = "the server has not reported on it"
		}
		return false, fmt.Errorf("%s was not issued within %s (%s); try again with a longer --timeout", what, o.Timeout, state)
	case ctx.Err() != nil:
		return false, fmt.Errorf("interrupted while waiting for %s to be issued", what)
	}
	return false, err
}

// deleteCredential deletes a credential this command gave up on, even when ctx has ended.
func deleteCredential(ctx context.Context, credentials hcpclient.BreakglassCredentialInterface, bgc *v1alpha1.BreakglassCredential,
	what string, errOut io.Writer) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := credentials.Delete(ctx, bgc.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(bgc.UID))})
	switch {
	case err == nil || apierrors.IsNotFound(err):
		fmt.Fprintf(errOut, "%s deleted: nobody holds its key\n", what)
	default:
		fmt.Fprintf(errOut, "could not delete %s, which nobody can use: %v\n", what, err)
	}
}

// describeCredential is a credential's phase and what its latest condition says, as in
// "Pending (WaitingForCluster: ...)"; empty before the server has reported anything.
func describeCredential(bgc *v1alpha1.BreakglassCredential) string {
	phase := string(bgc.Status.Phase)
	c := latestCondition(bgc.Status.Conditions)
	switch {
	case c == nil:
		return phase
	case phase == "":
		return describeReason(c)
	}
	return fmt.Sprintf("%s (%s)", phase, describeReason(c))
}

// latestCondition is the condition that changed last; of those that changed in the same second,
// the last one listed.
func latestCondition(conditions []metav1.Condition) *metav1.Condition {
	var latest *metav1.Condition
	for i := range conditions {
		if latest == nil || !conditions[i].LastTransitionTime.Before(&latest.LastTransitionTime) {
			latest = &conditions[i]
		}
	}
	return latest
}

func describeReason(c *metav1.Condition) string {
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}
