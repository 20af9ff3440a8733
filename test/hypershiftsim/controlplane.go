package hypershiftsim

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// The stand-in control-plane pods and their events: what an inspection of a hosted control plane finds
// in its namespace. There is no kubelet or scheduler on the test management cluster, so the simulator
// writes the pods' status and the kubelet's events itself.

// NodeName is the made-up node the stand-in control-plane pods are bound to, so that nothing
// schedules them.
const NodeName = "hypershiftsim-node-0"

// CrashLoopPeriod is how often the kube-apiserver of a NeverAvailable HostedCluster crashes again: its
// restartCount and its BackOff event's count go up once per period.
const CrashLoopPeriod = time.Minute

// controlPlaneComponent is one stand-in pod of a hosted control plane, named and labelled as
// HyperShift's (etcd is a StatefulSet, the others Deployments).
type controlPlaneComponent struct {
	app         string
	containers  []string
	statefulSet bool
}

var controlPlaneComponents = []controlPlaneComponent{
	{app: "etcd", containers: []string{"etcd"}, statefulSet: true},
	{app: "kube-apiserver", containers: []string{"kube-apiserver", "audit-logs"}},
	{app: "kube-controller-manager", containers: []string{"kube-controller-manager"}},
}

// controlPlaneState is how the control plane's pods are doing.
type controlPlaneState int

const (
	// controlPlaneStarting: the install is under way; the containers are being created.
	controlPlaneStarting controlPlaneState = iota
	// controlPlaneRunning: every container runs and is ready.
	controlPlaneRunning
	// controlPlaneCrashLooping: kube-apiserver crashes over and over and etcd never becomes ready, as
	// in a control plane that never becomes available.
	controlPlaneCrashLooping
)

// ControlPlanePodName is the name of a stand-in control-plane pod of the HostedCluster with uid:
// etcd-0, or <app>-<pod-template-hash>-<suffix> as a Deployment's pod is named.
func ControlPlanePodName(uid, app string) string {
	if app == "etcd" {
		return "etcd-0"
	}
	h := fnv.New64a()
	h.Write([]byte(uid + "/" + app))
	sum := h.Sum64()
	templateHash := utilrand.SafeEncodeString(strconv.FormatUint(sum%10_000_000_000, 10))
	// The upper half's digits, at least five: a half below 10,000 has fewer.
	suffix := utilrand.SafeEncodeString(fmt.Sprintf("%05d", sum>>32))[:5]
	return fmt.Sprintf("%s-%s-%s", app, templateHash, suffix)
}

// syncControlPlane creates the stand-in pods in the control-plane namespace, writes their status and
// the events about them, and says when the next crash of a crash-looping pod is due.
func (s *Simulator) syncControlPlane(ctx context.Context, hc *unstructured.Unstructured, state controlPlaneState, conditions []metav1.Condition) (time.Duration, error) {
	namespace := ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())
	// Nothing can be created in a namespace being deleted; one not yet in the cache wakes the
	// HostedCluster when it is.
	if ns, err := s.namespaces.Get(namespace); err != nil || ns.DeletionTimestamp != nil {
		return 0, nil
	}
	image, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image")
	at := now()
	var requeue time.Duration
	pods := map[string]*corev1.Pod{}
	for _, c := range controlPlaneComponents {
		pod, err := s.ensureControlPlanePod(ctx, hc, namespace, c, image)
		if err != nil {
			return 0, err
		}
		desired, next := controlPlanePodStatus(pod, c, state, at)
		if !equality.Semantic.DeepEqual(pod.Status, desired) {
			pod = pod.DeepCopy()
			pod.Status = desired
			if pod, err = s.kube.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
				return 0, err
			}
		}
		if next > 0 && (requeue == 0 || next < requeue) {
			requeue = next
		}
		pods[c.app] = pod
	}
	for _, e := range controlPlaneEvents(hc, pods, state, conditions) {
		if err := s.ensureEvent(ctx, e); err != nil {
			return 0, err
		}
	}
	return requeue, nil
}

// ensureControlPlanePod returns the stand-in pod of c, created if it is not there.
func (s *Simulator) ensureControlPlanePod(ctx context.Context, hc *unstructured.Unstructured, namespace string, c controlPlaneComponent,
	image string) (*corev1.Pod, error) {
	name := ControlPlanePodName(string(hc.GetUID()), c.app)
	if pod, err := s.pods.Pods(namespace).Get(name); err == nil || !apierrors.IsNotFound(err) {
		return pod, err
	}
	// The ServiceAccount admission plugin refuses a pod whose service account is not there, even one
	// that mounts no token; no serviceaccount controller runs on the test management cluster to make it.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: namespace}}
	if _, err := s.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	labels := map[string]string{
		"app": c.app,
		"hypershift.openshift.io/control-plane-component": c.app,
		"hypershift.openshift.io/hosted-control-plane":    namespace,
		ManagedByLabel: managedByValue,
	}
	if c.statefulSet {
		labels["statefulset.kubernetes.io/pod-name"] = name
	} else {
		// The part of the name a Deployment's ReplicaSet adds.
		labels["pod-template-hash"] = name[len(c.app)+1 : len(name)-6]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:                     NodeName,
			AutomountServiceAccountToken: ptr.To(false),
			// No kubelet confirms a graceful delete: the namespace controller's delete takes the pod at once.
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	for _, container := range c.containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: container, Image: image})
	}
	created, err := s.kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return s.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Created a stand-in control-plane pod", "pod", klog.KObj(created))
	return created, nil
}

// controlPlanePodStatus is the status a kubelet would report for the pod of c in state, and after how
// long it changes next (0: not by itself). What has already happened (when a container started) is
// kept from the pod's current status.
func controlPlanePodStatus(pod *corev1.Pod, c controlPlaneComponent, state controlPlaneState, t time.Time) (corev1.PodStatus, time.Duration) {
	created := pod.CreationTimestamp
	now := stamp(t)
	st := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &created, HostIP: "10.0.0.4", PodIP: podIP(pod.Name)}
	st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	if state == controlPlaneStarting {
		st.Phase, st.PodIP, st.PodIPs = corev1.PodPending, "", nil
	}
	var requeue time.Duration
	var unready []string
	for _, name := range c.containers {
		cs := corev1.ContainerStatus{Name: name, Started: ptr.To(true)}
		for _, spec := range pod.Spec.Containers {
			if spec.Name == name {
				cs.Image = spec.Image
			}
		}
		running := &corev1.ContainerStateRunning{StartedAt: now}
		if previous := findContainerStatus(pod.Status.ContainerStatuses, name); previous != nil && previous.State.Running != nil {
			running.StartedAt = previous.State.Running.StartedAt
		}
		switch {
		case state == controlPlaneStarting:
			cs.Started = ptr.To(false)
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		case state == controlPlaneCrashLooping && name == "kube-apiserver":
			// Crashed once at creation and once every period since; each time the kubelet backs off.
			crashes := 1 + int32(now.Sub(created.Time)/CrashLoopPeriod)
			lastStart := created.Add(time.Duration(crashes-1) * CrashLoopPeriod)
			lastCrash := lastStart.Add(5 * time.Second)
			if lastCrash.After(now.Time) {
				lastCrash = now.Time
			}
			cs.Started = ptr.To(false)
			cs.RestartCount = crashes
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOff(crashes), name, pod.Name, pod.Namespace, pod.UID)}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				StartedAt: stamp(lastStart), FinishedAt: stamp(lastCrash),
				Message: `E0101 00:00:00.000000       1 run.go:72] "command failed" err="context deadline exceeded: dial tcp: connect etcd-client:2379: connection refused"`}
			requeue = max(created.Add(time.Duration(crashes)*CrashLoopPeriod).Sub(t), time.Second)
		case state == controlPlaneCrashLooping && name == "etcd":
			// Running, but without quorum its readiness probe fails.
			cs.State.Running = running
		default:
			cs.Ready = true
			cs.State.Running = running
		}
		if !cs.Ready {
			unready = append(unready, name)
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}

	condition := func(conditionType corev1.PodConditionType, ok bool, reason, message string) {
		c := corev1.PodCondition{Type: conditionType, Status: corev1.ConditionTrue, LastTransitionTime: now}
		if !ok {
			c.Status, c.Reason, c.Message = corev1.ConditionFalse, reason, message
		}
		if previous := findPodCondition(pod.Status.Conditions, conditionType); previous != nil && previous.Status == c.Status {
			c.LastTransitionTime = previous.LastTransitionTime
		}
		st.Conditions = append(st.Conditions, c)
	}
	notReady := fmt.Sprintf("containers with unready status: %v", unready)
	condition(corev1.PodReadyToStartContainers, state != controlPlaneStarting, "", "")
	condition(corev1.PodInitialized, true, "", "")
	condition(corev1.PodReady, len(unready) == 0, "ContainersNotReady", notReady)
	condition(corev1.ContainersReady, len(unready) == 0, "ContainersNotReady", notReady)
	condition(corev1.PodScheduled, true, "", "")
	return st, requeue
}

// backOff is the kubelet's back-off after crashes: 10s doubling up to 5m.
func backOff(crashes int32) time.Duration {
	d := 10 * time.Second
	for i := int32(1); i < crashes && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

func podIP(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	sum := h.Sum32()
	return fmt.Sprintf("10.128.%d.%d", sum>>8&0xff, 2+sum&0xfb)
}

func findContainerStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

func findPodCondition(conditions []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// controlPlaneEvents are the events of the control-plane namespace in state: the kubelet's on the
// pods, and for a control plane that does not come up, the HyperShift operator's on the HostedCluster.
// Each has a name of its own that stays the same, so a repeat updates its count instead of adding one.
func controlPlaneEvents(hc *unstructured.Unstructured, pods map[string]*corev1.Pod, state controlPlaneState, conditions []metav1.Condition) []*corev1.Event {
	if state == controlPlaneStarting {
		return nil
	}
	kubelet := corev1.EventSource{Component: "kubelet", Host: NodeName}
	var events []*corev1.Event
	started := func(app, container string) {
		pod := pods[app]
		cs := findContainerStatus(pod.Status.ContainerStatuses, container)
		if cs == nil || cs.State.Running == nil {
			return
		}
		events = append(events, podEvent(pod, container, corev1.EventTypeNormal, "Started", "Started container "+container,
			kubelet, 1, cs.State.Running.StartedAt, cs.State.Running.StartedAt))
	}
	started("etcd", "etcd")
	started("kube-apiserver", "kube-apiserver")
	if state != controlPlaneCrashLooping {
		return events
	}

	kas := pods["kube-apiserver"]
	if cs := findContainerStatus(kas.Status.ContainerStatuses, "kube-apiserver"); cs != nil && cs.LastTerminationState.Terminated != nil {
		message := fmt.Sprintf("Back-off restarting failed container kube-apiserver in pod %s_%s(%s)", kas.Name, kas.Namespace, kas.UID)
		events = append(events, podEvent(kas, "kube-apiserver", corev1.EventTypeWarning, "BackOff", message, kubelet,
			cs.RestartCount, kas.CreationTimestamp, cs.LastTerminationState.Terminated.FinishedAt))
	}
	for _, t := range []string{"KubeAPIServerAvailable", "Available"} {
		c := findCondition(conditions, t)
		if c == nil || c.Status != metav1.ConditionFalse {
			continue
		}
		// Reported on the HostedCluster, which lives outside this namespace: an events.k8s.io-style
		// event (with eventTime and its reporting controller) may name an object of another namespace.
		e := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: eventName(hc.GetName(), string(hc.GetUID()), t), Namespace: ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())},
			InvolvedObject: corev1.ObjectReference{APIVersion: HostedClusterResource.GroupVersion().String(), Kind: "HostedCluster",
				Namespace: hc.GetNamespace(), Name: hc.GetName(), UID: hc.GetUID()},
			Type:                corev1.EventTypeWarning,
			Reason:              c.Reason,
			Message:             fmt.Sprintf("%s=False: %s", t, c.Message),
			Source:              corev1.EventSource{Component: "hypershift-operator"},
			Count:               1,
			FirstTimestamp:      c.LastTransitionTime,
			LastTimestamp:       c.LastTransitionTime,
			EventTime:           metav1.NewMicroTime(c.LastTransitionTime.Time),
			ReportingController: "hypershift-operator",
			ReportingInstance:   "hypershift-operator",
			Action:              "Reconcile",
		}
		events = append(events, e)
		break
	}
	return events
}

func findCondition(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// podEvent is an event about a container of pod, as the kubelet records it.
func podEvent(pod *corev1.Pod, container, eventType, reason, message string, source corev1.EventSource, count int32, first, last metav1.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: eventName(pod.Name, string(pod.UID), container+"/"+reason), Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			FieldPath: fmt.Sprintf("spec.containers{%s}", container)},
		Type: eventType, Reason: reason, Message: message, Source: source,
		Count: count, FirstTimestamp: first, LastTimestamp: last,
	}
}

// eventName is <object>.<hex>, as a recorder names events, the same each time for the same object and what happened.
func eventName(object, uid, what string) string {
	h := fnv.New64a()
	h.Write([]byte(uid + "/" + what))
	return fmt.Sprintf("%s.%016x", object, h.Sum64())
}

// ensureEvent creates e, or updates the event of its name when its count, times or message moved on.
func (s *Simulator) ensureEvent(ctx context.Context, e *corev1.Event) error {
	if e.Labels == nil {
		e.Labels = map[string]string{}
	}
	e.Labels[ManagedByLabel] = managedByValue
	events := s.kube.CoreV1().Events(e.Namespace)
	current, err := s.events.Events(e.Namespace).Get(e.Name)
	if apierrors.IsNotFound(err) {
		if _, err := events.Create(ctx, e, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	if current.Count == e.Count && current.LastTimestamp.Equal(&e.LastTimestamp) && current.Message == e.Message {
		return nil
	}
	updated := current.DeepCopy()
	updated.Count, updated.LastTimestamp, updated.Message = e.Count, e.LastTimestamp, e.Message
	_, err = events.Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

// enqueueClusterForPod wakes the HostedCluster whose stand-in control-plane pod was deleted, to make it again.
func (s *Simulator) enqueueClusterForPod(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if ns, err := s.namespaces.Get(pod.Namespace); err == nil {
		s.enqueueClusterForNamespace(ns)
	}
}
