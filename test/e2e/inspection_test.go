package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// inspectionAuditPolicy records every write of an inspection with its body, and nothing else.
const inspectionAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  resources:
  - group: hcp.aro.azure.com
    resources: ["clusterinspections"]
  verbs: ["create", "delete"]
- level: None
`

// TestSREInspectsAStuckCluster follows an SRE with kubectl hcp inspect on a cluster whose control plane
// never comes up: the HostedCluster's failing conditions, the control plane's pods and events are read
// from the management cluster through its agent, without a kubeconfig for it. An answer larger than
// what an agent may report is cut with a clear marker; an inspection expires and leaves nothing behind,
// on either side; and the audit log says who inspected what and why.
func TestSREInspectsAStuckCluster(t *testing.T) {
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	st := startDeliveryStack(t, hypershiftsim.Options{NeverAvailable: func(_, name string) bool { return name == "dev" }},
		"--audit-log-path="+auditLog, "--audit-policy-file="+writeFile(t, "audit-policy.yaml", inspectionAuditPolicy))
	s, mc := st.server, st.mc
	client := st.client(t)
	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "10-hcpcluster.yaml"))
	waitFor(t, "the cluster Provisioning with the HostedCluster's report", func() (bool, string) {
		c, err := client.HcpV1alpha1().HCPClusters("default").Get(t.Context(), "dev-cluster", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		// Provisioning comes with the agent's first report, which may precede the simulator's first
		// status; the HostedCluster's Available condition says the report has it.
		available := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionAvailable)
		return c.Status.ProvisioningState == v1alpha1.ProvisioningStateProvisioning && available != nil &&
				available.Reason == "HostedClusterAvailable" && available.Status == metav1.ConditionFalse,
			fmt.Sprintf("%s, Available %+v", c.Status.ProvisioningState, available)
	})
	clusterID := s.mustKubectl(t, "get", "hcpcluster/dev-cluster", "-o", "jsonpath={.status.clusterID}")
	hcpNamespace := hypershiftsim.ControlPlaneNamespace("ocm-dev-"+clusterID, "dev")
	// The simulator makes the control plane's pods and events a moment after the HostedCluster's status.
	waitFor(t, "kube-apiserver crash-looping and its BackOff event on the management cluster", func() (bool, string) {
		pods, err := mc.Kube.CoreV1().Pods(hcpNamespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		events, err := mc.Kube.CoreV1().Events(hcpNamespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		crashing := slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool {
			return slices.ContainsFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool {
				return c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff"
			})
		})
		backOff := slices.ContainsFunc(events.Items, func(e corev1.Event) bool { return e.Reason == "BackOff" })
		return crashing && backOff, fmt.Sprintf("%d pods, crash-looping %v; %d events, BackOff %v", len(pods.Items), crashing, len(events.Items), backOff)
	})

	const reason = "ICM-4711: dev-cluster has been Provisioning for an hour"
	out, _ := inspect(t, s, "dev-cluster", "--reason", reason)
	t.Logf("kubectl hcp inspect dev-cluster:\n%s", out)
	for _, want := range []string{"Available", "False", "TYPE", "STATUS", "REASON", "MESSAGE"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl hcp inspect (hostedcluster) does not show %q:\n%s", want, out)
		}
	}
	out, _ = inspect(t, s, "dev-cluster", "--view", "controlplane-pods", "--reason", reason)
	t.Logf("kubectl hcp inspect dev-cluster --view controlplane-pods:\n%s", out)
	if !containsLine(out, "kube-apiserver-", "CrashLoopBackOff") || !containsLine(out, "etcd-0", "Running") {
		t.Errorf("kubectl hcp inspect --view controlplane-pods does not show kube-apiserver in CrashLoopBackOff and etcd running:\n%s", out)
	}
	out, _ = inspect(t, s, "dev-cluster", "--view", "events", "--reason", reason)
	t.Logf("kubectl hcp inspect dev-cluster --view events:\n%s", out)
	if !containsLine(out, "Warning", "BackOff") {
		t.Errorf("kubectl hcp inspect --view events does not show the kube-apiserver's BackOff warning:\n%s", out)
	}

	// The test management cluster has no kubelet to serve a log: the inspection fails and says why.
	_, stderr, err := runInspect(t, s, "dev-cluster", "--view", "logs", "--container", "kube-apiserver", "--reason", reason)
	if err == nil || !strings.Contains(stderr, "could not read the logs view") || !strings.Contains(stderr, "kube-apiserver") {
		t.Errorf("kubectl hcp inspect --view logs with no kubelet: %v, want it to fail saying the log could not be read:\n%s", err, stderr)
	}
	if out := s.mustKubectl(t, "get", "clusterinspections", "-o", "wide"); !containsLine(out, "dev-cluster", "events", "Answered", reason) ||
		!containsLine(out, "dev-cluster", "logs", "Failed") {
		t.Errorf("kubectl get clusterinspections -o wide does not show the answered events view with its reason and the failed logs view:\n%s", out)
	}

	// More events than an agent may report: the newest are shown, and the answer says what was left out.
	message := strings.Repeat("the kube-apiserver could not reach etcd; ", 10)
	for i := range 300 {
		if _, err := mc.Kube.CoreV1().Events(hcpNamespace).Create(t.Context(), &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("filler-%03d", i), Namespace: hcpNamespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "kube-apiserver", Namespace: hcpNamespace},
			Reason:         "Unhealthy", Message: message, Type: corev1.EventTypeWarning, Count: 1,
			LastTimestamp: metav1.NewTime(time.Now().Add(time.Duration(i) * time.Millisecond)),
			Source:        corev1.EventSource{Component: "kubelet"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr = inspect(t, s, "dev-cluster", "--view", "events", "--reason", reason)
	if !containsLine(out, "Warning", "Unhealthy") || !strings.Contains(stderr, "truncated") {
		t.Errorf("an events answer over the feedback limit is not cut with a marker on stderr:\n%s\nstderr:\n%s", out, stderr)
	}
	truncated := newestInspection(t, st)
	if !truncated.Status.Truncated || truncated.Status.Omitted <= 0 || len(truncated.Status.Items) == 0 || len(truncated.Status.Items) >= 300 {
		t.Errorf("the truncated inspection says truncated %v, omitted %d, with %d items; want truncated with some left out",
			truncated.Status.Truncated, truncated.Status.Omitted, len(truncated.Status.Items))
	}

	// A short-lived inspection expires, and leaves nothing: not the object, not the agent's record.
	inspect(t, s, "dev-cluster", "--view", "hostedcluster", "--ttl", "10s", "--reason", reason)
	shortLived := newestInspection(t, st)
	if shortLived.Status.Phase != v1alpha1.ClusterInspectionPhaseAnswered || shortLived.Spec.Username == "" {
		t.Errorf("the inspection is %s, asked by %q; want Answered, by the server's admin", shortLived.Status.Phase, shortLived.Spec.Username)
	}
	waitFor(t, "the inspection deleted once its 10 seconds are over", func() (bool, string) {
		_, err := client.HcpV1alpha1().ClusterInspections("default").Get(t.Context(), shortLived.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if held := agentRecords(t, mc); slices.Contains(held, string(shortLived.UID)) {
		t.Errorf("the agent still holds the expired inspection's bundle %s: %v", shortLived.UID, held)
	}

	// The audit log names the inspector, the cluster, the view and the reason of every inspection.
	events := auditEvents(t, auditLog)
	var created int
	for _, e := range events {
		if e.Verb != "create" || e.ObjectRef.Resource != "clusterinspections" {
			continue
		}
		created++
		if e.User.Username != shortLived.Spec.Username || e.Annotations["inspection.hcp.aro.azure.com/reason"] != reason ||
			e.Annotations["inspection.hcp.aro.azure.com/cluster"] != "default/dev-cluster" || e.Annotations["inspection.hcp.aro.azure.com/view"] == "" ||
			!strings.Contains(string(e.RequestObject), reason) {
			t.Errorf("an audit event of an inspection misses who, what or why: user %q, annotations %v, request %s",
				e.User.Username, e.Annotations, e.RequestObject)
		}
	}
	if created != 6 {
		t.Errorf("the audit log has %d creates of inspections, want the 6 made", created)
	}
}

// inspect runs kubectl hcp inspect as the server's admin and returns its stdout and stderr; it fails the
// test when the command fails.
func inspect(t *testing.T, s *server, cluster string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runInspect(t, s, cluster, args...)
	if err != nil {
		t.Fatalf("kubectl hcp inspect %s %s: %v\n%s\n%s", cluster, strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, stderr
}

// runInspect runs kubectl hcp inspect as the server's admin.
func runInspect(t *testing.T, s *server, cluster string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"hcp", "--kubeconfig", s.Kubeconfig, "-n", "default", "inspect", cluster}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(framework.Command(t, "kubectl-hcp"))+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// containsLine says whether one line of out holds every one of parts.
func containsLine(out string, parts ...string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return true
		}
	}
	return false
}

// newestInspection is the inspection of the default namespace made last.
func newestInspection(t *testing.T, st *deliveryStack) *v1alpha1.ClusterInspection {
	t.Helper()
	list, err := st.client(t).HcpV1alpha1().ClusterInspections("default").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("listing inspections: %v, %d found", err, len(list.Items))
	}
	newest := &list.Items[0]
	for i := range list.Items {
		if c := &list.Items[i]; newest.CreationTimestamp.Before(&c.CreationTimestamp) ||
			newest.CreationTimestamp.Equal(&c.CreationTimestamp) && newest.ResourceVersion < c.ResourceVersion {
			newest = c
		}
	}
	return newest
}

// agentRecords lists the resource IDs of the bundles the management cluster's agents hold.
func agentRecords(t *testing.T, mc *framework.ManagementCluster) []string {
	t.Helper()
	secrets, err := mc.Kube.CoreV1().Secrets("").List(t.Context(), metav1.ListOptions{FieldSelector: "type=" + string(agent.RecordType)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range secrets.Items {
		for id := range s.Data {
			ids = append(ids, id)
		}
	}
	return ids
}

// auditEvent is the part of an audit.k8s.io/v1 Event the test reads.
type auditEvent struct {
	Verb      string `json:"verb"`
	ObjectRef struct {
		Resource string `json:"resource"`
	} `json:"objectRef"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	Annotations   map[string]string `json:"annotations"`
	RequestObject json.RawMessage   `json:"requestObject"`
}

// auditEvents reads a JSON-lines audit log.
func auditEvents(t *testing.T, path string) []auditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the server wrote no audit log: %v", err)
	}
	defer f.Close()
	var events []auditEvent
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatalf("an audit log line does not decode: %v\n%s", err, scanner.Text())
		}
		events = append(events, e)
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}
