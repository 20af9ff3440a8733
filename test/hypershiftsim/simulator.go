package hypershiftsim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// The resources the simulator watches, as the HyperShift CRDs serve them.
var (
	HostedClusterResource = schema.GroupVersionResource{
		Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	NodePoolResource = schema.GroupVersionResource{
		Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	CertificateSigningRequestApprovalResource = schema.GroupVersionResource{
		Group: "certificates.hypershift.openshift.io", Version: "v1alpha1", Resource: "certificatesigningrequestapprovals"}
	CertificateRevocationRequestResource = schema.GroupVersionResource{
		Group: "certificates.hypershift.openshift.io", Version: "v1alpha1", Resource: "certificaterevocationrequests"}
)

const (
	// Finalizer is the finalizer the HyperShift operator puts on HostedClusters and NodePools.
	Finalizer = "hypershift.openshift.io/finalizer"

	// ManagedByLabel marks the Secrets, ConfigMaps, Pods and Events the simulator creates (and so watches).
	ManagedByLabel = "hypershiftsim.aro-hcp.test/managed-by"
	managedByValue = "hypershiftsim"
)

// Options set the simulator's timing and the failures it injects. The zero value
// makes everything happen as soon as the API round trips allow.
type Options struct {
	// ProvisionDelay is how long a new HostedCluster takes to become Available, and
	// a NodePool to become Ready once its HostedCluster is Available.
	ProvisionDelay time.Duration
	// UpgradeDelay is how long a HostedCluster or NodePool takes to roll out a new
	// release image.
	UpgradeDelay time.Duration
	// DeletionDelay is how long the simulator keeps its finalizer on a deleted
	// HostedCluster or NodePool.
	DeletionDelay time.Duration

	// NeverAvailable picks HostedClusters whose installation never completes:
	// Available stays False and the version history stays Partial.
	NeverAvailable func(namespace, name string) bool
	// Degraded picks HostedClusters that report Degraded=True.
	Degraded func(namespace, name string) bool
	// NodePoolNeverReady picks NodePools that never become Ready.
	NodePoolNeverReady func(namespace, name string) bool
	// ReleaseVersion maps a release image to its OpenShift version. The default
	// reads the tag (quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64 is
	// 4.20.8); an image it cannot map is reported as invalid (ValidReleaseImage=False).
	ReleaseVersion func(image string) (version string, ok bool)
	// MaxCertificateTTL is the longest break-glass certificate the signer issues, as a real signer's
	// --cluster-signing-duration caps what a CSR asks for; 24 hours when zero. A test shortens it to see
	// credentials expire.
	MaxCertificateTTL time.Duration

	// The failure injections are read when an object is synced: a change to what
	// they return takes effect at that object's next change.
}

// Simulator stands in for the HyperShift operator and its control-plane PKI
// operator on a test management cluster. See the package documentation.
type Simulator struct {
	opts    Options
	dynamic dynamic.Interface
	kube    kubernetes.Interface

	dynamicInformers dynamicinformer.DynamicSharedInformerFactory
	kubeInformers    informers.SharedInformerFactory
	// Only the Secrets, ConfigMaps, Pods and Events the simulator creates are cached.
	managedInformers informers.SharedInformerFactory

	hostedClusters cache.SharedIndexInformer
	nodePools      cache.SharedIndexInformer
	approvals      cache.GenericLister
	revocations    cache.GenericLister
	csrs           certificateslisters.CertificateSigningRequestLister
	namespaces     corelisters.NamespaceLister
	secrets        corelisters.SecretLister
	configMaps     corelisters.ConfigMapLister
	pods           corelisters.PodLister
	events         corelisters.EventLister
	// hostedSecrets holds every Secret, for those the customer creates in the namespaces that stand
	// in for the hosted clusters' openshift-config (HostedConfigNamespace).
	hostedSecrets corelisters.SecretLister
	synced        []cache.InformerSynced

	hostedClusterQueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	nodePoolQueue      workqueue.TypedRateLimitingInterface[cache.ObjectName]
	csrQueue           workqueue.TypedRateLimitingInterface[string]
	revocationQueue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// nodePoolsByCluster indexes NodePools by <namespace>/<spec.clusterName>.
const nodePoolsByCluster = "hypershiftsim/cluster"

// New builds a simulator that talks to the management cluster at cfg. It starts
// nothing: call Run.
func New(cfg *rest.Config, opts Options) (*Simulator, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "hypershiftsim (test double for the HyperShift operator)"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if opts.ReleaseVersion == nil {
		opts.ReleaseVersion = VersionFromReleaseImage
	}
	s := &Simulator{
		opts:             opts,
		dynamic:          dyn,
		kube:             kube,
		dynamicInformers: dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		kubeInformers:    informers.NewSharedInformerFactory(kube, 0),
		managedInformers: informers.NewSharedInformerFactoryWithOptions(kube, 0,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.LabelSelector = labels.Set{ManagedByLabel: managedByValue}.String()
			})),
		hostedClusterQueue: newQueue[cache.ObjectName]("hypershiftsim_hostedclusters"),
		nodePoolQueue:      newQueue[cache.ObjectName]("hypershiftsim_nodepools"),
		csrQueue:           newQueue[string]("hypershiftsim_breakglass_csrs"),
		revocationQueue:    newQueue[cache.ObjectName]("hypershiftsim_certificaterevocationrequests"),
	}

	hc := s.dynamicInformers.ForResource(HostedClusterResource)
	np := s.dynamicInformers.ForResource(NodePoolResource)
	csra := s.dynamicInformers.ForResource(CertificateSigningRequestApprovalResource)
	crr := s.dynamicInformers.ForResource(CertificateRevocationRequestResource)
	csr := s.kubeInformers.Certificates().V1().CertificateSigningRequests()
	ns := s.kubeInformers.Core().V1().Namespaces()
	secret := s.managedInformers.Core().V1().Secrets()
	configMap := s.managedInformers.Core().V1().ConfigMaps()
	pod := s.managedInformers.Core().V1().Pods()
	event := s.managedInformers.Core().V1().Events()
	hostedSecret := s.kubeInformers.Core().V1().Secrets()

	s.hostedClusters = hc.Informer()
	s.nodePools = np.Informer()
	s.approvals = csra.Lister()
	s.revocations = crr.Lister()
	s.csrs = csr.Lister()
	s.namespaces = ns.Lister()
	s.secrets = secret.Lister()
	s.configMaps = configMap.Lister()
	s.pods = pod.Lister()
	s.events = event.Lister()
	s.hostedSecrets = hostedSecret.Lister()

	if err := s.nodePools.AddIndexers(cache.Indexers{nodePoolsByCluster: indexNodePoolByCluster}); err != nil {
		return nil, err
	}
	if err := s.hostedClusters.AddIndexers(cache.Indexers{clustersByHostedConfig: indexByHostedConfig}); err != nil {
		return nil, err
	}

	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{s.hostedClusters, s.handler(s.enqueueHostedCluster)},
		{s.nodePools, s.handler(s.enqueueNodePoolAndCluster)},
		{csra.Informer(), s.handler(s.enqueueCSRForApproval)},
		{crr.Informer(), s.handler(s.enqueueRevocation)},
		{csr.Informer(), s.handler(s.enqueueCSR)},
		{ns.Informer(), s.handler(s.enqueueClusterForNamespace)},
		{secret.Informer(), nil},
		{configMap.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: s.enqueueClusterForRootCA}},
		{pod.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: s.enqueueClusterForPod}},
		{event.Informer(), nil},
		{hostedSecret.Informer(), s.handler(s.enqueueClusterForSecret)},
	}
	for _, h := range handlers {
		if h.handler != nil {
			if _, err := h.informer.AddEventHandler(h.handler); err != nil {
				return nil, err
			}
		}
		s.synced = append(s.synced, h.informer.HasSynced)
	}
	return s, nil
}

func newQueue[T comparable](name string) workqueue.TypedRateLimitingInterface[T] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[T](),
		workqueue.TypedRateLimitingQueueConfig[T]{Name: name})
}

// Run starts the informers and one worker per kind, and blocks until ctx is done.
func (s *Simulator) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	logger := klog.FromContext(ctx).WithName("hypershiftsim")
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting the HyperShift simulator (a test double, not the HyperShift operator)")

	queues := []interface{ ShutDown() }{s.hostedClusterQueue, s.nodePoolQueue, s.csrQueue, s.revocationQueue}
	defer func() {
		for _, q := range queues {
			q.ShutDown()
		}
	}()

	s.dynamicInformers.Start(ctx.Done())
	s.kubeInformers.Start(ctx.Done())
	s.managedInformers.Start(ctx.Done())
	defer s.dynamicInformers.Shutdown()
	defer s.kubeInformers.Shutdown()
	defer s.managedInformers.Shutdown()
	if !cache.WaitForNamedCacheSyncWithContext(ctx, s.synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("hypershiftsim: informer caches did not sync")
	}

	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, f, time.Second)
		}()
	}
	run(func(ctx context.Context) { work(ctx, s.hostedClusterQueue, s.syncHostedCluster) })
	run(func(ctx context.Context) { work(ctx, s.nodePoolQueue, s.syncNodePool) })
	run(func(ctx context.Context) { work(ctx, s.csrQueue, s.syncCSR) })
	run(func(ctx context.Context) { work(ctx, s.revocationQueue, s.syncRevocation) })

	<-ctx.Done()
	for _, q := range queues {
		q.ShutDown()
	}
	wg.Wait()
	logger.Info("Stopped the HyperShift simulator")
	return nil
}

// work processes items until the queue shuts down. A sync returns the delay after
// which it wants to look at the item again (the simulated passage of time), or an
// error to be retried with backoff.
func work[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], sync func(context.Context, T) (time.Duration, error)) {
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return
		}
		func() {
			defer queue.Done(key)
			after, err := sync(ctx, key)
			switch {
			case apierrors.IsConflict(err):
				// A cache a write behind; the retry reads the newer object.
				klog.FromContext(ctx).V(4).Info("Conflict; will retry", "key", key)
				queue.AddRateLimited(key)
				return
			case err != nil:
				utilruntime.HandleErrorWithContext(ctx, err, "hypershiftsim sync failed; will retry", "key", key)
				queue.AddRateLimited(key)
				return
			}
			queue.Forget(key)
			if after > 0 {
				queue.AddAfter(key, after)
			}
		}()
	}
}

// handler calls enqueue for every add, update and delete.
func (s *Simulator) handler(enqueue func(obj any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			enqueue(obj)
		},
	}
}

// enqueueHostedCluster also wakes the HostedCluster's NodePools, which wait for it
// to be Available.
func (s *Simulator) enqueueHostedCluster(obj any) {
	name, err := cache.ObjectToName(obj)
	if err != nil {
		return
	}
	s.hostedClusterQueue.Add(name)
	nodePools, _ := s.nodePools.GetIndexer().ByIndex(nodePoolsByCluster, name.String())
	for _, np := range nodePools {
		if npName, err := cache.ObjectToName(np); err == nil {
			s.nodePoolQueue.Add(npName)
		}
	}
}

// enqueueNodePoolAndCluster also wakes the NodePool's HostedCluster, which waits
// for its NodePools to be gone before it lets go of its finalizer.
func (s *Simulator) enqueueNodePoolAndCluster(obj any) {
	name, err := cache.ObjectToName(obj)
	if err != nil {
		return
	}
	s.nodePoolQueue.Add(name)
	if keys, err := indexNodePoolByCluster(obj); err == nil && len(keys) == 1 {
		if cluster, err := cache.ParseObjectName(keys[0]); err == nil {
			s.hostedClusterQueue.Add(cluster)
		}
	}
}

// enqueueClusterForNamespace wakes the HostedCluster whose control-plane namespace changed.
func (s *Simulator) enqueueClusterForNamespace(obj any) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return
	}
	if cluster, err := cache.ParseObjectName(ns.Annotations[clusterAnnotation]); err == nil && cluster.Namespace != "" {
		s.hostedClusterQueue.Add(cluster)
	}
}

func (s *Simulator) enqueueCSR(obj any) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return
	}
	if _, _, ok := parseSignerName(csr.Spec.SignerName); ok {
		s.csrQueue.Add(csr.Name)
	}
}

// enqueueCSRForApproval: an approval is tied to its CertificateSigningRequest by name only.
func (s *Simulator) enqueueCSRForApproval(obj any) {
	if name, err := cache.ObjectToName(obj); err == nil {
		s.csrQueue.Add(name.Name)
	}
}

func (s *Simulator) enqueueRevocation(obj any) {
	if name, err := cache.ObjectToName(obj); err == nil {
		s.revocationQueue.Add(name)
	}
}

func now() time.Time { return time.Now() }

// stamp is t as the API keeps it, to the second. The simulator writes only
// stamped times, so that what it compares is what it wrote.
func stamp(t time.Time) metav1.Time {
	return metav1.NewTime(t.UTC().Truncate(time.Second))
}

// remaining is how long until delay has passed since a stamped time, or 0. The
// event behind since happened up to a second after it, so the wait counts from a
// second later: a delay lasts at least its length and at most a second more.
func remaining(now, since time.Time, delay time.Duration) time.Duration {
	if delay <= 0 {
		return 0
	}
	return max(since.Add(time.Second+delay).Sub(now), 0)
}

func picked(f func(namespace, name string) bool, namespace, name string) bool {
	return f != nil && f(namespace, name)
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("hypershiftsim: "+format, args...)
}

// StartForTest runs a simulator against the cluster cfg reaches until the test ends.
func StartForTest(t testing.TB, cfg *rest.Config, opts Options) *Simulator {
	t.Helper()
	sim, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := sim.Run(ctx); err != nil {
			t.Errorf("the HyperShift simulator: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return sim
}
