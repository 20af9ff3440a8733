package app

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// The answer of each view is printed as kubectl prints the objects it holds: the items are the
// management cluster's objects trimmed by the agent, so they decode into the types kubectl prints.

// printAnswer prints the answer of an Answered inspection; now is what ages are counted from.
func printAnswer(out io.Writer, ci *v1alpha1.ClusterInspection, now time.Time) error {
	if ci.Spec.View == v1alpha1.InspectionViewLogs {
		_, err := io.WriteString(out, ci.Status.Log)
		return err
	}
	w := newTabWriter(out)
	var err error
	switch ci.Spec.View {
	case v1alpha1.InspectionViewHostedCluster:
		err = printHostedClusters(w, ci.Status.Items, now)
	case v1alpha1.InspectionViewNodePools:
		err = printNodePools(w, ci.Status.Items, now)
	case v1alpha1.InspectionViewControlPlanePods:
		err = printPods(w, ci.Status.Items, now)
	case v1alpha1.InspectionViewEvents:
		err = printEvents(w, ci.Status.Items, now)
	default:
		return fmt.Errorf("this kubectl hcp does not know how to print the %s view; try -o yaml", ci.Spec.View)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

// newTabWriter aligns columns as kubectl get does.
func newTabWriter(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
}

// truncationNote says what a truncated answer left out.
func truncationNote(ci *v1alpha1.ClusterInspection) string {
	n := int(ci.Status.Omitted)
	switch ci.Spec.View {
	case v1alpha1.InspectionViewLogs:
		return fmt.Sprintf("(log truncated to the agent's limit: the first %s left out)", plural(n, "byte", "bytes"))
	case v1alpha1.InspectionViewEvents:
		return fmt.Sprintf("(answer truncated to the agent's limit: %s left out)", plural(n, "older event", "older events"))
	case v1alpha1.InspectionViewControlPlanePods:
		return fmt.Sprintf("(answer truncated to the agent's limit: %s left out)", plural(n, "pod", "pods"))
	case v1alpha1.InspectionViewNodePools:
		return fmt.Sprintf("(answer truncated to the agent's limit: %s left out)", plural(n, "node pool", "node pools"))
	}
	return fmt.Sprintf("(answer truncated to the agent's limit: %d left out)", n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// decodeItems decodes each item of an answer into a T.
func decodeItems[T any](items []runtime.RawExtension) ([]T, error) {
	decoded := make([]T, 0, len(items))
	for i, item := range items {
		var obj T
		if err := json.Unmarshal(item.Raw, &obj); err != nil {
			return nil, fmt.Errorf("item %d of the answer does not decode: %w", i, err)
		}
		decoded = append(decoded, obj)
	}
	return decoded, nil
}

// age is how long before now t was, as kubectl prints ages.
func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// hyperShiftObject is what the hostedcluster and nodepools views keep of a HostedCluster or NodePool
// that kubectl hcp prints.
type hyperShiftObject struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Replicas *int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions"`
		// Version is a HostedCluster's; a NodePool's is a string.
		Version json.RawMessage `json:"version"`
		// Replicas is a NodePool's available nodes.
		Replicas int32 `json:"replicas"`
	} `json:"status"`
}

// clusterVersion is the part of a HostedCluster's status.version printed.
type clusterVersion struct {
	Desired struct {
		Version string `json:"version"`
	} `json:"desired"`
	History []struct {
		State          string       `json:"state"`
		Version        string       `json:"version"`
		StartedTime    metav1.Time  `json:"startedTime"`
		CompletionTime *metav1.Time `json:"completionTime"`
	} `json:"history"`
}

// printHostedClusters prints the HostedCluster as kubectl describe would: who it is, its version, then
// its conditions.
func printHostedClusters(w io.Writer, items []runtime.RawExtension, now time.Time) error {
	clusters, err := decodeItems[hyperShiftObject](items)
	if err != nil {
		return err
	}
	for i, hc := range clusters {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Name:\t%s\n", hc.Metadata.Name)
		fmt.Fprintf(w, "Namespace:\t%s\n", hc.Metadata.Namespace)
		fmt.Fprintf(w, "Created:\t%s ago\n", age(now, hc.Metadata.CreationTimestamp))
		fmt.Fprintf(w, "Version:\t%s\n", describeClusterVersion(hc.Status.Version, now))
		fmt.Fprintln(w, "Conditions:")
		if len(hc.Status.Conditions) == 0 {
			fmt.Fprintln(w, "  <none>")
			continue
		}
		fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tAGE\tMESSAGE")
		for _, c := range hc.Status.Conditions {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(now, c.LastTransitionTime), oneLine(c.Message))
		}
	}
	return nil
}

// describeClusterVersion is the desired version and how far its rollout got: "4.20.8 (Partial,
// started 42m ago)" or "4.20.8 (Completed 3h ago)".
func describeClusterVersion(raw json.RawMessage, now time.Time) string {
	var v clusterVersion
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || (v.Desired.Version == "" && len(v.History) == 0) {
		return "<unknown>: no status.version yet"
	}
	version := v.Desired.Version
	if len(v.History) == 0 {
		return version
	}
	latest := v.History[0]
	if version == "" {
		version = latest.Version
	}
	if latest.CompletionTime != nil && latest.State == "Completed" {
		return fmt.Sprintf("%s (Completed %s ago)", version, age(now, *latest.CompletionTime))
	}
	return fmt.Sprintf("%s (%s, started %s ago)", version, latest.State, age(now, latest.StartedTime))
}

// printNodePools prints a row per NodePool and then, below, each of their conditions that is not in
// its good state.
func printNodePools(w io.Writer, items []runtime.RawExtension, now time.Time) error {
	pools, err := decodeItems[hyperShiftObject](items)
	if err != nil {
		return err
	}
	if len(pools) == 0 {
		fmt.Fprintln(w, "No node pools found.")
		return nil
	}
	fmt.Fprintln(w, "NAME\tREPLICAS\tREADY\tVERSION\tAGE")
	type badCondition struct {
		pool string
		metav1.Condition
	}
	var bad []badCondition
	for _, np := range pools {
		replicas := "<autoscaled>"
		if np.Spec.Replicas != nil {
			replicas = strconv.Itoa(int(*np.Spec.Replicas))
		}
		version := "<none>"
		if v := ""; json.Unmarshal(np.Status.Version, &v) == nil && v != "" {
			version = v
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", np.Metadata.Name, replicas, np.Status.Replicas, version, age(now, np.Metadata.CreationTimestamp))
		for _, c := range np.Status.Conditions {
			if !nodePoolConditionGood(c) {
				bad = append(bad, badCondition{np.Metadata.Name, c})
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "NODEPOOL\tCONDITION\tSTATUS\tREASON\tAGE\tMESSAGE")
	for _, c := range bad {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.pool, c.Type, c.Status, c.Reason, age(now, c.LastTransitionTime), oneLine(c.Message))
	}
	return nil
}

// nodePoolConditionGood says whether a NodePool condition is as it is on a pool with nothing to do:
// the Updating* conditions False, the ones that only report a setting (AutoscalingEnabled,
// AutorepairEnabled) either way, every other one True.
func nodePoolConditionGood(c metav1.Condition) bool {
	switch {
	case c.Type == "AutoscalingEnabled" || c.Type == "AutorepairEnabled":
		return c.Status != metav1.ConditionUnknown
	case strings.HasPrefix(c.Type, "Updating"):
		return c.Status == metav1.ConditionFalse
	}
	return c.Status == metav1.ConditionTrue
}

// printPods prints the pods as kubectl get pods does.
func printPods(w io.Writer, items []runtime.RawExtension, now time.Time) error {
	pods, err := decodeItems[corev1.Pod](items)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		fmt.Fprintln(w, "No pods found in the control-plane namespace.")
		return nil
	}
	fmt.Fprintln(w, "NAME\tREADY\tSTATUS\tRESTARTS\tAGE")
	for i := range pods {
		ready, status, restarts := podColumns(&pods[i], now)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", pods[i].Name, ready, status, restarts, age(now, pods[i].CreationTimestamp))
	}
	return nil
}

// podColumns are the READY, STATUS and RESTARTS of a pod, computed as kubectl get pods computes them
// (k8s.io/kubernetes/pkg/printers/internalversion printPod). The answer has no init containers, so
// theirs are left out.
func podColumns(pod *corev1.Pod, now time.Time) (ready, status, restarts string) {
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}
	readyContainers, restartCount := 0, 0
	var lastRestart metav1.Time
	hasRunning := false
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		restartCount += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			reason = c.State.Waiting.Reason
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			reason = c.State.Terminated.Reason
		case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
			reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
		case c.State.Terminated != nil:
			reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			readyContainers++
		}
	}
	if reason == "Completed" && hasRunning {
		reason = "NotReady"
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				reason = "Running"
			}
		}
	}
	if pod.DeletionTimestamp != nil {
		switch {
		case pod.Status.Reason == "NodeLost":
			reason = "Unknown"
		case pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
			reason = "Terminating"
		}
	}
	restarts = strconv.Itoa(restartCount)
	if restartCount != 0 && !lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", restartCount, age(now, lastRestart))
	}
	return fmt.Sprintf("%d/%d", readyContainers, len(pod.Spec.Containers)), reason, restarts
}

// printEvents prints the events as kubectl events does, in the answer's order: newest first.
func printEvents(w io.Writer, items []runtime.RawExtension, now time.Time) error {
	events, err := decodeItems[corev1.Event](items)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		fmt.Fprintln(w, "No events found in the control-plane namespace.")
		return nil
	}
	fmt.Fprintln(w, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for i := range events {
		e := &events[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s/%s\t%s\n", eventInterval(e, now), e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, oneLine(e.Message))
	}
	return nil
}

// eventInterval is kubectl events' LAST SEEN: when the event was last seen, and for a repeated one
// how often since when, as in "2m (x12 over 40m)".
func eventInterval(e *corev1.Event, now time.Time) string {
	first := age(now, e.FirstTimestamp)
	if !e.EventTime.IsZero() {
		first = age(now, metav1.NewTime(e.EventTime.Time))
	}
	switch {
	case e.Series != nil:
		return fmt.Sprintf("%s (x%d over %s)", age(now, metav1.NewTime(e.Series.LastObservedTime.Time)), e.Series.Count, first)
	case e.Count > 1:
		return fmt.Sprintf("%s (x%d over %s)", age(now, e.LastTimestamp), e.Count, first)
	}
	return first
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
