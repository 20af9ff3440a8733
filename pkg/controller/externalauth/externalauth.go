// Package externalauth writes the status of ExternalAuths and lets deleted ones go. An ExternalAuth has
// no bundle of its own: it is delivered in its cluster's HostedCluster (pkg/controller/hcpcluster renders
// it there), so this controller reads the agent's reports of the cluster's bundle. The HostedCluster
// carries the UID and generation of the external auth it was rendered from (render.ExternalAuthAnnotation)
// and the agent reports that annotation back as applied, with HyperShift's status of the OIDC clients:
// the external auth is Succeeded once its generation is applied and every confidential client's secret
// is in the hosted cluster, AwaitingSecret while one is not.
package externalauth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/bundle"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/conditions"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/placement"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "externalauth-status"

// byCluster indexes external auths by the namespace/name key of their cluster.
const byCluster = Name + "/cluster"

// Reasons of an ExternalAuth's conditions.
const (
	ReasonPending        = "Pending"
	ReasonApplied        = "Applied"
	ReasonApplyFailed    = "ApplyFailed"
	ReasonAwaitingSecret = "AwaitingSecret"
	ReasonClientsReady   = "ClientsReady"
)

// Controller writes ExternalAuth status from the reports of their clusters' bundles.
type Controller struct {
	client   versioned.Interface
	auths    listers.ExternalAuthLister
	byKey    cache.Indexer
	clusters cache.Indexer
	mcs      listers.ManagementClusterLister
	queue    *queue.Queue
	synced   []cache.InformerSynced

	mu sync.Mutex
	// reports holds the newest report of each cluster's bundle, by the cluster's UID.
	reports map[string]source.BundleStatus
}

// New returns the controller; publisher is the Maestro source (or what stands for it) whose reports of
// cluster bundles it reads.
func New(client versioned.Interface, auths informers.ExternalAuthInformer, clusters informers.HCPClusterInformer,
	mcs informers.ManagementClusterInformer, publisher bundle.Publisher) (*Controller, error) {
	c := &Controller{
		client: client, auths: auths.Lister(), byKey: auths.Informer().GetIndexer(),
		clusters: clusters.Informer().GetIndexer(), mcs: mcs.Lister(),
		synced:  []cache.InformerSynced{auths.Informer().HasSynced, clusters.Informer().HasSynced, mcs.Informer().HasSynced},
		reports: map[string]source.BundleStatus{},
	}
	c.queue = queue.New(Name, c.sync)
	if err := auths.Informer().AddIndexers(cache.Indexers{byCluster: func(obj any) ([]string, error) {
		if ea, ok := obj.(*v1alpha1.ExternalAuth); ok {
			return []string{ea.Namespace + "/" + ea.Spec.ClusterName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	if _, ok := c.clusters.GetIndexers()[bundle.ByUID]; !ok {
		if err := clusters.Informer().AddIndexers(cache.Indexers{bundle.ByUID: bundle.IndexByUID}); err != nil {
			return nil, err
		}
	}
	if _, err := auths.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	enqueueAuths := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.enqueueAuthsOf(key)
		}
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueAuths,
		UpdateFunc: func(_, obj any) { enqueueAuths(obj) },
		DeleteFunc: enqueueAuths,
	}); err != nil {
		return nil, err
	}
	publisher.AddStatusHandler(c.onReport)
	return c, nil
}

// Run writes status until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	c.queue.Run(ctx, workers)
}

func (c *Controller) enqueueAuthsOf(clusterKey string) {
	auths, _ := c.byKey.ByIndex(byCluster, clusterKey)
	for _, ea := range auths {
		c.queue.Enqueue(ea)
	}
}

// onReport notes a report of a cluster's bundle and queues the cluster's external auths. It runs on the
// source's reader, so it does no more.
func (c *Controller) onReport(report source.BundleStatus) {
	found, err := c.clusters.ByIndex(bundle.ByUID, report.ResourceID)
	if err != nil || len(found) == 0 {
		return
	}
	cluster, ok := found[0].(*v1alpha1.HCPCluster)
	if !ok {
		return
	}
	c.mu.Lock()
	switch held, ok := c.reports[report.ResourceID]; {
	case report.Deleted:
		delete(c.reports, report.ResourceID)
	case ok && (report.Generation < held.Generation || report.Generation == held.Generation && report.SequenceID < held.SequenceID):
		c.mu.Unlock()
		return
	default:
		c.reports[report.ResourceID] = report
	}
	c.mu.Unlock()
	c.enqueueAuthsOf(cluster.Namespace + "/" + cluster.Name)
}

func (c *Controller) report(clusterUID string) (source.BundleStatus, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	report, ok := c.reports[clusterUID]
	return report, ok
}

// sync writes the status of the external auth of key, or lets it go once it is deleted and its
// cluster's applied HostedCluster no longer carries it.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	ea, err := c.auths.ExternalAuths(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var cluster *v1alpha1.HCPCluster
	if obj, exists, err := c.clusters.GetByKey(namespace + "/" + ea.Spec.ClusterName); err != nil {
		return 0, err
	} else if exists {
		cluster = obj.(*v1alpha1.HCPCluster)
	}
	var report source.BundleStatus
	reported := false
	if cluster != nil {
		report, reported = c.report(string(cluster.UID))
	}
	// What the agent reported of the applied HostedCluster: the external auth it carries, HyperShift's view.
	var hostedCluster map[string]string
	if reported && report.Status != nil {
		hostedCluster = bundle.Feedback(report.Status, "HostedCluster")
	}
	applied := hostedCluster[render.FeedbackExternalAuth]
	if ea.DeletionTimestamp != nil {
		// The provider is gone with the HostedCluster, or from it.
		if cluster == nil || cluster.DeletionTimestamp != nil || !strings.HasPrefix(applied, string(ea.UID)+"/") {
			return 0, c.removeFinalizer(ctx, ea)
		}
		return 0, nil
	}
	if cluster == nil {
		return 0, nil
	}
	status := ea.Status.DeepCopy()
	recheck := c.describe(ea, cluster, status, report, reported, hostedCluster)
	if apiequality.Semantic.DeepEqual(status, &ea.Status) {
		return recheck, nil
	}
	updated := ea.DeepCopy()
	updated.Status = *status
	_, err = c.client.HcpV1alpha1().ExternalAuths(namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: Name})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return recheck, err
}

// describe writes into status where the external auth stands: Delivered says whether the applied
// HostedCluster carries its generation, Available whether its clients can sign in. It returns when to look
// again without a new report: while the agent retries, when its time is up.
func (c *Controller) describe(ea *v1alpha1.ExternalAuth, cluster *v1alpha1.HCPCluster, status *v1alpha1.ExternalAuthStatus,
	report source.BundleStatus, reported bool, hostedCluster map[string]string) time.Duration {
	gen := ea.Generation
	applied := hostedCluster[render.FeedbackExternalAuth]
	status.ObservedGeneration = gen
	consumer, _ := placement.Consumer(c.mcs, cluster)
	want := fmt.Sprintf("%s/%d", ea.UID, gen)
	outcome := bundle.Outcome(report, reported, cluster.Generation, consumer, "the cluster's manifests")
	switch {
	case applied == want:
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionDelivered, metav1.ConditionTrue, ReasonApplied,
			fmt.Sprintf("generation %d is in the cluster's HostedCluster on %s", gen, consumer))
	case outcome.Failed:
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionDelivered, metav1.ConditionFalse, ReasonApplyFailed, outcome.Message)
		status.ProvisioningState = v1alpha1.ProvisioningStateFailed
		return 0
	default:
		if consumer == "" {
			conditions.Set(&status.Conditions, gen, v1alpha1.ConditionDelivered, metav1.ConditionFalse, ReasonPending,
				"the cluster is not on a management cluster yet")
			return 0
		}
		reason, message := ReasonPending, fmt.Sprintf("generation %d is on its way to the cluster's HostedCluster on %s", gen, consumer)
		if outcome.Reason == bundle.ReasonApplyRetrying {
			reason, message = outcome.Reason, outcome.Message
		}
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionDelivered, metav1.ConditionFalse, reason, message)
		bundle.Progress(&status.ProvisioningState, false)
		return outcome.RecheckAfter
	}
	awaited, err := render.AwaitedClientSecrets(ea, hostedCluster[render.FeedbackOIDCClients])
	// Once HyperShift has taken this generation, a later change of the HostedCluster (the cluster's own, or
	// its deletion) says nothing of it.
	prev := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionAvailable)
	taken := prev != nil && prev.ObservedGeneration == gen && prev.Reason != ReasonPending
	switch {
	case !taken && !bundle.Observed(hostedCluster):
		// The HostedCluster carries it; HyperShift has not rolled it out to the control plane yet.
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionAvailable, metav1.ConditionFalse, ReasonPending,
			fmt.Sprintf("generation %d is in the cluster's HostedCluster; HyperShift has not rolled it out yet", gen))
		bundle.Progress(&status.ProvisioningState, false)
	case err != nil:
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionAvailable, metav1.ConditionUnknown, ReasonPending,
			"HyperShift's report of the OIDC clients cannot be read: "+err.Error())
	case len(awaited) > 0:
		slices.Sort(awaited)
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionAvailable, metav1.ConditionFalse, ReasonAwaitingSecret,
			fmt.Sprintf("waiting for the client secret %s in the namespace openshift-config of the hosted cluster: create it with the key clientSecret (oc create secret generic <name> -n openshift-config --from-literal=clientSecret=<secret>)",
				quoteAll(awaited)))
		status.ProvisioningState = v1alpha1.ProvisioningStateAwaitingSecret
	default:
		conditions.Set(&status.Conditions, gen, v1alpha1.ConditionAvailable, metav1.ConditionTrue, ReasonClientsReady,
			"the cluster's API server accepts the identity provider's tokens, and every client has what it needs")
		status.ProvisioningState = v1alpha1.ProvisioningStateSucceeded
	}
	return 0
}

func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(quoted, ", ")
}

// removeFinalizer lets a deleted external auth go.
func (c *Controller) removeFinalizer(ctx context.Context, ea *v1alpha1.ExternalAuth) error {
	if !slices.Contains(ea.Finalizers, v1alpha1.DeliveryFinalizer) {
		return nil
	}
	updated := ea.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool { return f == v1alpha1.DeliveryFinalizer })
	_, err := c.client.HcpV1alpha1().ExternalAuths(ea.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: Name})
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Let a deleted external auth go: its cluster's HostedCluster no longer carries it", "externalAuth", klog.KObj(ea))
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
