package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The views of inspection bundles: what each reads of the management cluster, and the few fields of
// each object it keeps. The fields are chosen for an SRE looking at a hosted control plane; what could
// carry a secret (a pod's env and volumes, annotations, a HostedCluster's spec) is left out.

var nodePools = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}

// inspectionLogLimitBytes bounds the bytes a log read takes from the kubelet, which keeps the start of
// the tail it cuts: a read that reaches it is asked again for fewer lines, so that the answer ends
// where the log does.
const inspectionLogLimitBytes = 4 << 20

// inspector reads the views of inspection bundles from the management cluster.
type inspector struct {
	kube    kubernetes.Interface
	dynamic dynamic.Interface
}

// inspect reads the object a manifest of an inspection bundle names and the view around it, and returns
// the object (nil when it is not there) and the answer as the manifest's feedback value.
func (a *Applier) inspect(ctx context.Context, m manifest, view protocol.InspectionView) (*unstructured.Unstructured, *protocol.FeedbackValue) {
	answer := protocol.InspectionAnswer{View: view.View, ReadAt: metav1.Now().Rfc3339Copy()}
	obj, err := a.get(ctx, m)
	switch {
	case err != nil:
		answer.Error = fmt.Sprintf("reading %s: %v", describeMeta(m.meta), err)
	case obj == nil:
		answer.Error = fmt.Sprintf("%s is not on the management cluster", describeMeta(m.meta))
	default:
		answer.Items, answer.Log, err = a.inspector.read(ctx, view, obj)
		if err != nil {
			answer.Error = err.Error()
		}
	}
	if answer.Error != "" {
		klog.FromContext(ctx).V(2).Info("Answering an inspection with an error", "manifest", describeMeta(m.meta), "view", view.View, "err", answer.Error)
	}
	value := inspectionValue(answer)
	return obj, &value
}

// read reads a view around obj, the object its manifest names: the items of the view, or the log.
func (i *inspector) read(ctx context.Context, view protocol.InspectionView, obj *unstructured.Unstructured) ([]json.RawMessage, string, error) {
	var items []any
	var err error
	switch view.View {
	case protocol.ViewHostedCluster:
		items = []any{trimHyperShiftObject(obj)}
	case protocol.ViewNodePools:
		items, err = i.nodePools(ctx, obj.GetNamespace(), obj.GetName())
	case protocol.ViewControlPlanePods:
		items, err = i.pods(ctx, obj.GetName())
	case protocol.ViewEvents:
		items, err = i.events(ctx, obj.GetName())
	case protocol.ViewLogs:
		log, err := i.log(ctx, obj.GetName(), view)
		return nil, log, err
	default:
		// checkInspection lets no other view through.
		return nil, "", fmt.Errorf("unknown view %q", view.View)
	}
	if err != nil {
		return nil, "", err
	}
	raw := make([]json.RawMessage, 0, len(items))
	for _, item := range items {
		b, err := json.Marshal(item)
		if err != nil {
			return nil, "", fmt.Errorf("encoding the %s view: %w", view.View, err)
		}
		raw = append(raw, b)
	}
	return raw, "", nil
}

// nodePools reads the NodePools of the HostedCluster namespace/name, by name.
func (i *inspector) nodePools(ctx context.Context, namespace, cluster string) ([]any, error) {
	list, err := i.dynamic.Resource(nodePools).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the NodePools in namespace %s: %w", namespace, err)
	}
	slices.SortFunc(list.Items, func(x, y unstructured.Unstructured) int { return strings.Compare(x.GetName(), y.GetName()) })
	var items []any
	for j := range list.Items {
		if clusterName, _, _ := unstructured.NestedString(list.Items[j].Object, "spec", "clusterName"); clusterName == cluster {
			items = append(items, trimHyperShiftObject(&list.Items[j]))
		}
	}
	return items, nil
}

// trimHyperShiftObject keeps of a HostedCluster or NodePool its kind, metadata as inspectedMeta has it,
// the replicas and release of a NodePool's spec, and its whole status.
func trimHyperShiftObject(obj *unstructured.Unstructured) map[string]any {
	trimmed := map[string]any{"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind()}
	if metadata, ok := obj.Object["metadata"].(map[string]any); ok {
		trimmed["metadata"] = pick(metadata, "name", "namespace", "generation", "creationTimestamp", "deletionTimestamp", "labels")
	}
	if spec, ok := obj.Object["spec"].(map[string]any); ok && obj.GetKind() == "NodePool" {
		trimmed["spec"] = pick(spec, "replicas", "release")
	}
	if status, ok := obj.Object["status"]; ok {
		trimmed["status"] = status
	}
	return trimmed
}

func pick(from map[string]any, keys ...string) map[string]any {
	picked := map[string]any{}
	for _, k := range keys {
		if v, ok := from[k]; ok {
			picked[k] = v
		}
	}
	return picked
}

// inspectedMeta is the metadata a view keeps of a Pod.
type inspectedMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp"`
	DeletionTimestamp *metav1.Time      `json:"deletionTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
}

// inspectedPod is what the controlplane-pods view keeps of a Pod: where it runs, what runs in it and
// how that goes; no env, volumes nor annotations.
type inspectedPod struct {
	Metadata inspectedMeta `json:"metadata"`
	Spec     struct {
		NodeName   string               `json:"nodeName,omitempty"`
		Containers []inspectedContainer `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase             corev1.PodPhase            `json:"phase,omitempty"`
		Reason            string                     `json:"reason,omitempty"`
		Message           string                     `json:"message,omitempty"`
		StartTime         *metav1.Time               `json:"startTime,omitempty"`
		Conditions        []corev1.PodCondition      `json:"conditions,omitempty"`
		ContainerStatuses []inspectedContainerStatus `json:"containerStatuses,omitempty"`
	} `json:"status"`
}

type inspectedContainer struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type inspectedContainerStatus struct {
	Name         string                `json:"name"`
	Ready        bool                  `json:"ready"`
	RestartCount int32                 `json:"restartCount"`
	State        corev1.ContainerState `json:"state"`
	LastState    corev1.ContainerState `json:"lastState"`
	Image        string                `json:"image"`
}

// pods reads the Pods of a namespace, by name.
func (i *inspector) pods(ctx context.Context, namespace string) ([]any, error) {
	list, err := i.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the Pods in namespace %s: %w", namespace, err)
	}
	slices.SortFunc(list.Items, func(x, y corev1.Pod) int { return strings.Compare(x.Name, y.Name) })
	items := make([]any, 0, len(list.Items))
	for _, p := range list.Items {
		pod := inspectedPod{Metadata: inspectedMeta{Name: p.Name, Namespace: p.Namespace, CreationTimestamp: p.CreationTimestamp,
			DeletionTimestamp: p.DeletionTimestamp, Labels: p.Labels}}
		pod.Spec.NodeName = p.Spec.NodeName
		for _, c := range p.Spec.Containers {
			pod.Spec.Containers = append(pod.Spec.Containers, inspectedContainer{Name: c.Name, Image: c.Image})
		}
		s := &pod.Status
		s.Phase, s.Reason, s.Message, s.StartTime, s.Conditions = p.Status.Phase, p.Status.Reason, p.Status.Message, p.Status.StartTime, p.Status.Conditions
		for _, c := range p.Status.ContainerStatuses {
			s.ContainerStatuses = append(s.ContainerStatuses, inspectedContainerStatus{Name: c.Name, Ready: c.Ready,
				RestartCount: c.RestartCount, State: c.State, LastState: c.LastTerminationState, Image: c.Image})
		}
		items = append(items, pod)
	}
	return items, nil
}

// inspectedEvent is what the events view keeps of an Event.
type inspectedEvent struct {
	Metadata struct {
		Name              string      `json:"name"`
		Namespace         string      `json:"namespace"`
		CreationTimestamp metav1.Time `json:"creationTimestamp"`
	} `json:"metadata"`
	InvolvedObject struct {
		Kind      string `json:"kind,omitempty"`
		Name      string `json:"name,omitempty"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"involvedObject"`
	Reason         string             `json:"reason,omitempty"`
	Message        string             `json:"message,omitempty"`
	Type           string             `json:"type,omitempty"`
	Count          int32              `json:"count,omitempty"`
	FirstTimestamp *metav1.Time       `json:"firstTimestamp,omitempty"`
	LastTimestamp  *metav1.Time       `json:"lastTimestamp,omitempty"`
	EventTime      *metav1.MicroTime  `json:"eventTime,omitempty"`
	Source         corev1.EventSource `json:"source,omitzero"`
}

// events reads the Events of a namespace, newest first, so that the oldest are the ones a truncated
// answer leaves out.
func (i *inspector) events(ctx context.Context, namespace string) ([]any, error) {
	list, err := i.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the Events in namespace %s: %w", namespace, err)
	}
	slices.SortFunc(list.Items, func(x, y corev1.Event) int {
		return cmp.Or(eventTime(y).Compare(eventTime(x)), strings.Compare(x.Name, y.Name))
	})
	items := make([]any, 0, len(list.Items))
	for _, e := range list.Items {
		var ev inspectedEvent
		ev.Metadata.Name, ev.Metadata.Namespace, ev.Metadata.CreationTimestamp = e.Name, e.Namespace, e.CreationTimestamp
		ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.InvolvedObject.Namespace = e.InvolvedObject.Kind, e.InvolvedObject.Name, e.InvolvedObject.Namespace
		ev.Reason, ev.Message, ev.Type, ev.Count, ev.Source = e.Reason, e.Message, e.Type, e.Count, e.Source
		if !e.FirstTimestamp.IsZero() {
			ev.FirstTimestamp = &e.FirstTimestamp
		}
		if !e.LastTimestamp.IsZero() {
			ev.LastTimestamp = &e.LastTimestamp
		}
		if !e.EventTime.IsZero() {
			ev.EventTime = &e.EventTime
		}
		items = append(items, ev)
	}
	return items, nil
}

// eventTime is when an event last happened: its lastTimestamp, else its eventTime (events.k8s.io
// writers set only that), else its creation.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// log reads the tail of the log of view's container, in view's pod or else the first pod of the
// namespace, by name, that has the container.
func (i *inspector) log(ctx context.Context, namespace string, view protocol.InspectionView) (string, error) {
	p, err := i.podWithContainer(ctx, namespace, view.Pod, view.Container)
	if err != nil {
		return "", err
	}
	pod := p.Name
	if p.Spec.NodeName == "" {
		// kube-apiserver answers an empty log for it, which would read as a silent container.
		return "", fmt.Errorf("pod %s/%s is not scheduled to a node yet: it has no log", namespace, pod)
	}
	tail, limit := view.TailLines, int64(inspectionLogLimitBytes)
	if tail <= 0 {
		tail = protocol.DefaultInspectionTailLines
	}
	for {
		raw, err := i.kube.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: view.Container, TailLines: &tail, LimitBytes: &limit}).DoRaw(ctx)
		if err != nil {
			return "", fmt.Errorf("reading the log of container %s of pod %s/%s on node %s: %w", view.Container, namespace, pod, p.Spec.NodeName, err)
		}
		if int64(len(raw)) < limit {
			return string(raw), nil
		}
		if tail == 1 {
			return "", fmt.Errorf("the last line of the log of container %s of pod %s/%s is longer than %d bytes", view.Container, namespace, pod, limit)
		}
		// The kubelet cut the end of the tail: fewer lines may end where the log does.
		tail /= 2
	}
}

// podWithContainer returns pod if it has the container, or else the first pod of the namespace, by
// name, that has it.
func (i *inspector) podWithContainer(ctx context.Context, namespace, pod, container string) (*corev1.Pod, error) {
	var candidates []corev1.Pod
	if pod != "" {
		p, err := i.kube.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("there is no pod %s/%s", namespace, pod)
		}
		if err != nil {
			return nil, fmt.Errorf("reading pod %s/%s: %w", namespace, pod, err)
		}
		candidates = []corev1.Pod{*p}
	} else {
		list, err := i.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the Pods in namespace %s: %w", namespace, err)
		}
		candidates = list.Items
		slices.SortFunc(candidates, func(x, y corev1.Pod) int { return strings.Compare(x.Name, y.Name) })
	}
	for i := range candidates {
		for _, c := range slices.Concat(candidates[i].Spec.InitContainers, candidates[i].Spec.Containers) {
			if c.Name == container {
				return &candidates[i], nil
			}
		}
	}
	if pod != "" {
		return nil, fmt.Errorf("pod %s/%s has no container %s", namespace, pod, container)
	}
	return nil, fmt.Errorf("no pod in namespace %s has a container %s", namespace, container)
}
