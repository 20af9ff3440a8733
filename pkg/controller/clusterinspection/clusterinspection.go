// Package clusterinspection answers ClusterInspections: the inspection adapter of the bundle reconciler.
// An inspection of a placed cluster is delivered to the cluster's management cluster as a read-only
// bundle that asks the agent for one view of the hosted control plane; the agent's answer becomes the
// inspection's status. Once answered (or refused) the bundle is withdrawn, so nothing of the inspection
// stays on the management cluster, and the inspection itself is deleted when its time to live is over.
package clusterinspection

import (
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/conditions"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/placement"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// Name names the reconciler in logs and in the managed fields of what it writes.
const Name = "clusterinspection-delivery"

// Options are what the inspection of a cluster needs to know of the service.
type Options struct {
	// Environment names the service instance, as in render.Options.
	Environment string
}

// adapter delivers ClusterInspections.
type adapter struct {
	client   versioned.Interface
	clusters listers.HCPClusterLister
	mcs      listers.ManagementClusterLister
	opts     Options
	now      func() time.Time
}

// New returns the reconciler that answers ClusterInspections.
func New(client versioned.Interface, inspections informers.ClusterInspectionInformer, clusters informers.HCPClusterInformer,
	mcs informers.ManagementClusterInformer, publisher bundle.Publisher, opts Options) (*bundle.Reconciler[*v1alpha1.ClusterInspection], error) {
	if opts.Environment == "" {
		opts.Environment = render.DefaultEnvironment
	}
	a := &adapter{client: client, clusters: clusters.Lister(), mcs: mcs.Lister(), opts: opts, now: time.Now}
	r, err := bundle.New[*v1alpha1.ClusterInspection](Name, inspections.Informer(), a, publisher,
		clusters.Informer().HasSynced, mcs.Informer().HasSynced)
	if err != nil {
		return nil, err
	}
	// An inspection waits for its cluster to be placed.
	if err := r.FollowChanges(clusters.Informer(), func(ci *v1alpha1.ClusterInspection) string {
		return ci.Namespace + "/" + ci.Spec.ClusterName
	}); err != nil {
		return nil, err
	}
	return r, nil
}

func (a *adapter) Client(namespace string) bundle.Client[*v1alpha1.ClusterInspection] {
	return a.client.HcpV1alpha1().ClusterInspections(namespace)
}

// Consumer returns the consumer the inspected cluster is placed on; empty once the cluster is gone.
func (a *adapter) Consumer(ci *v1alpha1.ClusterInspection) (string, error) {
	return placement.ClusterConsumer(a.clusters, a.mcs, ci.Namespace, ci.Spec.ClusterName)
}

// Plan asks the management cluster once, keeps the answer until the inspection expires, and then
// deletes the inspection.
func (a *adapter) Plan(ci *v1alpha1.ClusterInspection, consumer string) (bundle.Plan[*v1alpha1.ClusterInspection], error) {
	now := a.now()
	expires := expiration(ci)
	if !now.Before(expires) {
		return bundle.Plan[*v1alpha1.ClusterInspection]{Delete: true}, nil
	}
	untilExpiry := func(*v1alpha1.ClusterInspection, source.BundleStatus, bool) time.Duration { return expires.Sub(now) }
	if ci.Status.Phase == v1alpha1.ClusterInspectionPhaseAnswered || ci.Status.Phase == v1alpha1.ClusterInspectionPhaseFailed {
		return bundle.Plan[*v1alpha1.ClusterInspection]{Withdraw: true, Report: untilExpiry}, nil
	}
	cluster, err := a.clusters.HCPClusters(ci.Namespace).Get(ci.Spec.ClusterName)
	if apierrors.IsNotFound(err) {
		// Gone with its cluster: there is nothing left to inspect.
		return bundle.Plan[*v1alpha1.ClusterInspection]{Delete: true}, nil
	}
	if err != nil {
		return bundle.Plan[*v1alpha1.ClusterInspection]{}, err
	}
	if why := clusterNotInspectable(ci, cluster, consumer); why != "" {
		return bundle.Plan[*v1alpha1.ClusterInspection]{
			Wait: func(ci *v1alpha1.ClusterInspection) { pending(ci, "WaitingForCluster", why) },
		}, nil
	}
	view := protocol.InspectionView{
		View:      protocol.InspectionViewName(ci.Spec.View),
		Container: ci.Spec.Container,
		Pod:       ci.Spec.Pod,
	}
	if ci.Spec.TailLines != nil {
		view.TailLines = *ci.Spec.TailLines
	}
	namespace := render.Namespace(a.opts.Environment, cluster.Status.ClusterID)
	name := render.HostedClusterName(cluster)
	hcpNamespace := render.ControlPlaneNamespace(a.opts.Environment, cluster)
	return bundle.Plan[*v1alpha1.ClusterInspection]{
		Render: func() (*protocol.ManifestBundle, error) {
			return render.Inspection(namespace, name, hcpNamespace, view)
		},
		RenderFailed: func(ci *v1alpha1.ClusterInspection, err error) { fail(ci, "RenderFailed", err.Error()) },
		Report: func(ci *v1alpha1.ClusterInspection, report source.BundleStatus, reported bool) time.Duration {
			answer(ci, report, reported, consumer)
			return expires.Sub(now)
		},
	}, nil
}

// expiration is when an inspection is deleted: as the registry wrote it, or its time to live after it
// was created.
func expiration(ci *v1alpha1.ClusterInspection) time.Time {
	if t := ci.Status.ExpirationTimestamp; t != nil {
		return t.Time
	}
	ttl := v1alpha1.DefaultInspectionTTLSeconds
	if ci.Spec.TTLSeconds != nil {
		ttl = *ci.Spec.TTLSeconds
	}
	return ci.CreationTimestamp.Add(time.Duration(ttl) * time.Second)
}

// clusterNotInspectable says why the cluster cannot be inspected yet; empty when it can.
func clusterNotInspectable(ci *v1alpha1.ClusterInspection, cluster *v1alpha1.HCPCluster, consumer string) string {
	switch {
	case consumer == "":
		return fmt.Sprintf("cluster %s is not placed on a management cluster yet", cluster.Name)
	case cluster.Status.ClusterID == "":
		return fmt.Sprintf("cluster %s has no cluster ID yet", cluster.Name)
	}
	return ""
}

// answer reads the agent's report of the inspection's bundle into the inspection.
func answer(ci *v1alpha1.ClusterInspection, report source.BundleStatus, reported bool, consumer string) {
	d := bundle.Outcome(report, reported, ci.Generation, consumer, "the inspection")
	switch {
	case d.Failed:
		fail(ci, "Refused", d.Message)
		return
	case !d.Feedback || report.Status == nil:
		pending(ci, "WaitingForAgent", d.Message)
		return
	}
	raw := ""
	for _, kind := range []string{"HostedCluster", "Namespace"} {
		if v, ok := bundle.Feedback(report.Status, kind)[protocol.InspectionFeedbackName]; ok {
			raw = v
		}
	}
	if raw == "" {
		pending(ci, "WaitingForAgent", fmt.Sprintf("the agent of %s applied the inspection and has not answered yet", consumer))
		return
	}
	var got protocol.InspectionAnswer
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		fail(ci, "AnswerUnreadable", "the agent's answer does not decode: "+err.Error())
		return
	}
	ci.Status.ReadAt = got.ReadAt.DeepCopy()
	ci.Status.Items = nil
	for _, item := range got.Items {
		ci.Status.Items = append(ci.Status.Items, runtime.RawExtension{Raw: item})
	}
	ci.Status.Log = got.Log
	ci.Status.Truncated = got.Truncated
	ci.Status.Omitted = int32(min(got.Omitted, 1<<31-1))
	if got.Error != "" {
		fail(ci, "ViewUnreadable", fmt.Sprintf("the agent of %s could not read the %s view: %s", consumer, ci.Spec.View, got.Error))
		return
	}
	message := fmt.Sprintf("the agent of %s read the %s view at %s", consumer, ci.Spec.View, got.ReadAt.UTC().Format(time.RFC3339))
	if got.Truncated {
		message += fmt.Sprintf("; the answer was truncated to the feedback limit, %d left out", got.Omitted)
	}
	ci.Status.Phase = v1alpha1.ClusterInspectionPhaseAnswered
	setAnswered(ci, metav1.ConditionTrue, "Answered", message)
}

func pending(ci *v1alpha1.ClusterInspection, reason, message string) {
	ci.Status.Phase = v1alpha1.ClusterInspectionPhasePending
	setAnswered(ci, metav1.ConditionFalse, reason, message)
}

func fail(ci *v1alpha1.ClusterInspection, reason, message string) {
	ci.Status.Phase = v1alpha1.ClusterInspectionPhaseFailed
	setAnswered(ci, metav1.ConditionFalse, reason, message)
}

func setAnswered(ci *v1alpha1.ClusterInspection, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&ci.Status.Conditions, ci.Generation, v1alpha1.ConditionAnswered, status, reason, message)
}
