package hypershiftsim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

const (
	// The control-plane namespace carries these, as HyperShift's does.
	controlPlaneLabel = "hypershift.openshift.io/hosted-control-plane"
	clusterAnnotation = "hypershift.openshift.io/cluster"

	// maxHistory bounds status.version.history (the CRD allows 100 in controlPlaneVersion).
	maxHistory = 10
)

// HostedCluster condition reasons and the update states of the history entries.
const (
	reasonProgressing             = "Progressing"
	reasonUnavailableReplicas     = "UnavailableReplicas"
	reasonQuorumAvailable         = "QuorumAvailable"
	reasonEtcdWaitingForQuorum    = "EtcdWaitingForQuorum"
	reasonFromClusterVersion      = "FromClusterVersion"
	reasonStatusUnknown           = "StatusUnknown"
	reasonReconciliationSucceeded = "ReconciliatonSucceeded" // sic: HyperShift's spelling

	statePartial   = "Partial"
	stateCompleted = "Completed"
)

// ControlPlaneNamespace is the namespace HyperShift runs a HostedCluster's control plane in.
func ControlPlaneNamespace(namespace, name string) string {
	return namespace + "-" + name
}

// KubeconfigSecretName is the admin kubeconfig Secret of a HostedCluster, in its namespace.
func KubeconfigSecretName(name string) string {
	return name + "-admin-kubeconfig"
}

// hostedClusterStatus is the part of HostedCluster .status that the simulator
// writes, with the field names and optionality of the CRD.
type hostedClusterStatus struct {
	Conditions               []metav1.Condition         `json:"conditions,omitempty"`
	Version                  *clusterVersionStatus      `json:"version,omitempty"`
	ControlPlaneVersion      *controlPlaneVersionStatus `json:"controlPlaneVersion,omitempty"`
	KubeConfig               *localObjectReference      `json:"kubeconfig,omitempty"`
	ControlPlaneEndpoint     *apiEndpoint               `json:"controlPlaneEndpoint,omitempty"`
	IgnitionEndpoint         string                     `json:"ignitionEndpoint,omitempty"`
	OAuthCallbackURLTemplate string                     `json:"oauthCallbackURLTemplate,omitempty"`
	PayloadArch              string                     `json:"payloadArch,omitempty"`
	Configuration            *configurationStatus       `json:"configuration,omitempty"`
}

var hostedClusterStatusFields = []string{"conditions", "version", "controlPlaneVersion", "kubeconfig",
	"controlPlaneEndpoint", "ignitionEndpoint", "oauthCallbackURLTemplate", "payloadArch", "configuration"}

// clusterVersionStatus is status.version. The CRD requires availableUpdates (null
// allowed) and, in each history entry, completionTime (null while Partial) and verified.
type clusterVersionStatus struct {
	Desired            release         `json:"desired"`
	History            []updateHistory `json:"history,omitempty"`
	ObservedGeneration int64           `json:"observedGeneration"`
	AvailableUpdates   []release       `json:"availableUpdates"`
}

type updateHistory struct {
	State          string       `json:"state"`
	StartedTime    metav1.Time  `json:"startedTime"`
	CompletionTime *metav1.Time `json:"completionTime"`
	Version        string       `json:"version,omitempty"`
	Image          string       `json:"image"`
	Verified       bool         `json:"verified"`
}

// controlPlaneVersionStatus is status.controlPlaneVersion, which has its own
// history type: no verified, completionTime omitted while Partial.
type controlPlaneVersionStatus struct {
	Desired            release                     `json:"desired"`
	History            []controlPlaneUpdateHistory `json:"history,omitempty"`
	ObservedGeneration int64                       `json:"observedGeneration,omitempty"`
}

type controlPlaneUpdateHistory struct {
	State          string       `json:"state"`
	StartedTime    metav1.Time  `json:"startedTime"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	Version        string       `json:"version"`
	Image          string       `json:"image"`
}

type release struct {
	Version  string   `json:"version"`
	Image    string   `json:"image"`
	Channels []string `json:"channels,omitempty"`
}

type localObjectReference struct {
	Name string `json:"name"`
}

type apiEndpoint struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// hostedClusterInput is what the status of a HostedCluster is computed from.
type hostedClusterInput struct {
	name       string
	generation int64
	now        time.Time

	image        string
	version      string // "" when the image is not a release the simulator knows
	channel      string
	endpoint     apiEndpoint
	ignitionHost string
	oauthHost    string

	provisionDelay, upgradeDelay time.Duration
	neverAvailable, degraded     bool
}

func (s *Simulator) hostedClusterInput(hc *unstructured.Unstructured, now time.Time) hostedClusterInput {
	in := hostedClusterInput{
		name:           hc.GetName(),
		generation:     hc.GetGeneration(),
		now:            now,
		provisionDelay: s.opts.ProvisionDelay,
		upgradeDelay:   s.opts.UpgradeDelay,
		neverAvailable: picked(s.opts.NeverAvailable, hc.GetNamespace(), hc.GetName()),
		degraded:       picked(s.opts.Degraded, hc.GetNamespace(), hc.GetName()),
	}
	in.image, _, _ = unstructured.NestedString(hc.Object, "spec", "release", "image")
	if v, ok := s.opts.ReleaseVersion(in.image); ok {
		in.version = v
	}
	in.channel, _, _ = unstructured.NestedString(hc.Object, "spec", "channel")

	routes := map[string]string{}
	services, _, _ := unstructured.NestedSlice(hc.Object, "spec", "services")
	for _, svc := range services {
		m, ok := svc.(map[string]any)
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(m, "service")
		host, _, _ := unstructured.NestedString(m, "servicePublishingStrategy", "route", "hostname")
		routes[name] = host
	}
	// Published through a Route, the API server is on 443 at the route's host name.
	in.endpoint = apiEndpoint{Host: routes["APIServer"], Port: 443}
	if in.endpoint.Host == "" {
		baseDomain, _, _ := unstructured.NestedString(hc.Object, "spec", "dns", "baseDomain")
		if baseDomain == "" {
			baseDomain = hc.GetNamespace() + ".hypershiftsim.test"
		}
		in.endpoint.Host = fmt.Sprintf("api.%s.%s", hc.GetName(), baseDomain)
	}
	in.ignitionHost = routes["Ignition"]
	in.oauthHost = routes["OAuthServer"]
	return in
}

// computeHostedClusterStatus advances st by what has happened by in.now and says
// after how long the next step is due (0: none, or the write itself triggers it).
func computeHostedClusterStatus(in hostedClusterInput, st hostedClusterStatus) (hostedClusterStatus, time.Duration) {
	now := stamp(in.now)
	var requeue time.Duration

	if in.version != "" {
		v := st.Version
		if v == nil {
			v = &clusterVersionStatus{}
			st.Version = v
		}
		started := false
		if len(v.History) == 0 || v.Desired.Image != in.image {
			// A new release: the install, or an upgrade. A rollout still going is superseded.
			for i := range v.History {
				if v.History[i].CompletionTime == nil {
					v.History[i].CompletionTime = &now
				}
			}
			v.History = append([]updateHistory{{
				State:       statePartial,
				StartedTime: now,
				Version:     in.version,
				Image:       in.image,
			}}, v.History...)
			if len(v.History) > maxHistory {
				v.History = v.History[:maxHistory]
			}
			started = true
		}
		v.Desired = release{Version: in.version, Image: in.image}
		if in.channel != "" {
			v.Desired.Channels = []string{in.channel}
		}
		v.ObservedGeneration = in.generation

		if latest := &v.History[0]; latest.State == statePartial {
			installed := completed(v.History) != nil
			delay := in.provisionDelay
			if installed {
				delay = in.upgradeDelay
			}
			switch left := remaining(in.now, latest.StartedTime.Time, delay); {
			case in.neverAvailable && !installed:
				// The install never finishes.
			case started || left > 0:
				// Partial is written first, so that it can be seen even with no delay.
				requeue = left
			default:
				latest.State = stateCompleted
				latest.CompletionTime = &now
			}
		}
		st.ControlPlaneVersion = controlPlaneVersionFrom(v)
		st.PayloadArch = payloadArch(in.image)
	}

	var latest, current *updateHistory
	if st.Version != nil && len(st.Version.History) > 0 {
		latest = &st.Version.History[0]
		current = completed(st.Version.History)
	}
	installed := current != nil
	available := installed && !in.neverAvailable
	progressing := latest != nil && latest.State == statePartial

	st.ControlPlaneEndpoint = &in.endpoint
	if installed {
		st.KubeConfig = &localObjectReference{Name: KubeconfigSecretName(in.name)}
	}
	if in.ignitionHost != "" {
		st.IgnitionEndpoint = in.ignitionHost
	}
	if in.oauthHost != "" {
		st.OAuthCallbackURLTemplate = fmt.Sprintf("https://%s:443/oauth2callback/[identity-provider-name]", in.oauthHost)
	}

	set := func(t string, status metav1.ConditionStatus, reason, message string) {
		condition(&st.Conditions, in.generation, in.now, t, status, reason, message)
	}
	if available {
		set("Available", metav1.ConditionTrue, reasonAsExpected, "The hosted control plane is available")
	} else {
		set("Available", metav1.ConditionFalse, reasonWaitingForAvailable, "Waiting for the hosted control plane to become available")
	}
	switch {
	case in.version == "":
		set("Progressing", metav1.ConditionFalse, reasonBlocked, invalidImageMessage(in.image))
	case progressing:
		set("Progressing", metav1.ConditionTrue, reasonProgressing, "HostedCluster is deploying, upgrading, or reconfiguring")
	default:
		set("Progressing", metav1.ConditionFalse, reasonAsExpected, "HostedCluster is at expected version")
	}
	if in.degraded {
		set("Degraded", metav1.ConditionTrue, reasonUnavailableReplicas, "kube-apiserver deployment has 1 unavailable replicas")
	} else {
		set("Degraded", metav1.ConditionFalse, reasonAsExpected, "The hosted cluster is not degraded")
	}
	set("ValidConfiguration", metav1.ConditionTrue, reasonAsExpected, "Configuration passes validation")
	set("SupportedHostedCluster", metav1.ConditionTrue, reasonAsExpected, "HostedCluster is supported by operator configuration")
	if in.version == "" {
		set("ValidReleaseImage", metav1.ConditionFalse, reasonInvalidImage, invalidImageMessage(in.image))
	} else {
		set("ValidReleaseImage", metav1.ConditionTrue, reasonAsExpected, "Release image is valid")
	}
	set("ReconciliationActive", metav1.ConditionTrue, reasonAsExpected, "Reconciliation active on resource")
	set("ReconciliationSucceeded", metav1.ConditionTrue, reasonReconciliationSucceeded, "Reconciliation completed successfully")
	set("InfrastructureReady", metav1.ConditionTrue, reasonAsExpected, messageAllIsWell)
	if available {
		set("KubeAPIServerAvailable", metav1.ConditionTrue, reasonAsExpected, "Kube APIServer deployment is available")
		set("EtcdAvailable", metav1.ConditionTrue, reasonQuorumAvailable, messageAllIsWell)
		set("IgnitionEndpointAvailable", metav1.ConditionTrue, reasonAsExpected, "Ignition server deployment is available")
	} else {
		set("KubeAPIServerAvailable", metav1.ConditionFalse, reasonWaitingForAvailable, "Waiting for Kube APIServer deployment to become available")
		set("EtcdAvailable", metav1.ConditionFalse, reasonEtcdWaitingForQuorum, "Waiting for etcd to reach quorum")
		set("IgnitionEndpointAvailable", metav1.ConditionFalse, reasonWaitingForAvailable, "Waiting for ignition server deployment to become available")
	}
	// The ClusterVersion conditions come from the hosted cluster's own CVO, which
	// answers only once the control plane is up.
	if !available {
		for _, t := range []string{"ClusterVersionSucceeding", "ClusterVersionAvailable", "ClusterVersionProgressing", "ClusterVersionUpgradeable"} {
			set(t, metav1.ConditionUnknown, reasonStatusUnknown, "Condition not found in the CVO.")
		}
	} else {
		set("ClusterVersionSucceeding", metav1.ConditionTrue, reasonFromClusterVersion, "Cluster version is "+current.Version)
		set("ClusterVersionAvailable", metav1.ConditionTrue, reasonFromClusterVersion, "Done applying "+current.Version)
		if progressing {
			set("ClusterVersionProgressing", metav1.ConditionTrue, reasonFromClusterVersion, "Working towards "+latest.Version)
		} else {
			set("ClusterVersionProgressing", metav1.ConditionFalse, reasonFromClusterVersion, "Cluster version is "+current.Version)
		}
		set("ClusterVersionUpgradeable", metav1.ConditionTrue, reasonFromClusterVersion, messageAllIsWell)
	}
	return st, requeue
}

// completed is the newest Completed history entry: the release the cluster runs.
func completed(history []updateHistory) *updateHistory {
	for i := range history {
		if history[i].State == stateCompleted {
			return &history[i]
		}
	}
	return nil
}

// controlPlaneVersionFrom mirrors status.version: the simulated control plane
// rolls out together with the cluster version.
func controlPlaneVersionFrom(v *clusterVersionStatus) *controlPlaneVersionStatus {
	cpv := &controlPlaneVersionStatus{
		Desired:            release{Version: v.Desired.Version, Image: v.Desired.Image},
		ObservedGeneration: v.ObservedGeneration,
	}
	for _, h := range v.History {
		cpv.History = append(cpv.History, controlPlaneUpdateHistory{
			State:          h.State,
			StartedTime:    h.StartedTime,
			CompletionTime: h.CompletionTime,
			Version:        h.Version,
			Image:          h.Image,
		})
	}
	return cpv
}

func invalidImageMessage(image string) string {
	return fmt.Sprintf("cannot determine the OpenShift version of release image %q", image)
}

func (s *Simulator) syncHostedCluster(ctx context.Context, key cache.ObjectName) (time.Duration, error) {
	logger := klog.FromContext(ctx).WithValues("hostedCluster", key)
	ctx = klog.NewContext(ctx, logger)
	obj, exists, err := s.hostedClusters.GetIndexer().GetByKey(key.String())
	if err != nil || !exists {
		return 0, err
	}
	hc := obj.(*unstructured.Unstructured)
	client := s.dynamic.Resource(HostedClusterResource).Namespace(key.Namespace)

	if hc.GetDeletionTimestamp() != nil {
		return s.finalizeHostedCluster(ctx, hc)
	}
	if !hasFinalizer(hc) {
		hc = hc.DeepCopy()
		hc.SetFinalizers(append(hc.GetFinalizers(), Finalizer))
		if hc, err = client.Update(ctx, hc, metav1.UpdateOptions{}); err != nil {
			return 0, err
		}
	}
	if err := s.ensureControlPlaneNamespace(ctx, hc); err != nil {
		return 0, err
	}
	if err := s.ensureRootCA(ctx, ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())); err != nil {
		return 0, err
	}
	if err := s.ensureLoadBalancers(ctx, ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())); err != nil {
		return 0, err
	}
	if err := s.ensureHostedConfigNamespace(ctx, hc); err != nil {
		return 0, err
	}

	var current, desired hostedClusterStatus
	if err := readStatus(hc, &current); err != nil {
		return 0, err
	}
	if err := readStatus(hc, &desired); err != nil {
		return 0, err
	}
	in := s.hostedClusterInput(hc, now())
	desired, requeue := computeHostedClusterStatus(in, desired)
	if desired.Configuration, err = s.configurationStatusOf(hc, desired); err != nil {
		return 0, err
	}
	state := controlPlaneStarting
	switch {
	case in.neverAvailable:
		state = controlPlaneCrashLooping
	case meta.IsStatusConditionTrue(desired.Conditions, "Available"):
		state = controlPlaneRunning
	}
	nextCrash, err := s.syncControlPlane(ctx, hc, state, desired.Conditions)
	if err != nil {
		return 0, err
	}
	if nextCrash > 0 && (requeue == 0 || nextCrash < requeue) {
		requeue = nextCrash
	}
	if equality.Semantic.DeepEqual(current, desired) {
		return requeue, nil
	}
	if desired.KubeConfig != nil {
		// The status names the Secret only once it exists.
		if err := s.ensureKubeconfigSecret(ctx, hc, desired.ControlPlaneEndpoint); err != nil {
			return 0, err
		}
	}
	hc = hc.DeepCopy()
	if err := writeStatus(hc, &desired, hostedClusterStatusFields...); err != nil {
		return 0, err
	}
	if _, err := client.UpdateStatus(ctx, hc, metav1.UpdateOptions{}); err != nil {
		return 0, err
	}
	logger.V(2).Info("Updated HostedCluster status", "available", meta.IsStatusConditionTrue(desired.Conditions, "Available"),
		"progressing", meta.IsStatusConditionTrue(desired.Conditions, "Progressing"))
	return requeue, nil
}

func (s *Simulator) ensureControlPlaneNamespace(ctx context.Context, hc *unstructured.Unstructured) error {
	name := ControlPlaneNamespace(hc.GetNamespace(), hc.GetName())
	if _, err := s.namespaces.Get(name); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{controlPlaneLabel: "true"},
		Annotations: map[string]string{clusterAnnotation: hc.GetNamespace() + "/" + hc.GetName()},
	}}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Created the control-plane namespace", "namespace", name)
	return nil
}

// ensureKubeconfigSecret writes the admin kubeconfig Secret the status points to.
// Its kubeconfig reaches no real API server and carries no credentials.
func (s *Simulator) ensureKubeconfigSecret(ctx context.Context, hc *unstructured.Unstructured, endpoint *apiEndpoint) error {
	name := KubeconfigSecretName(hc.GetName())
	if _, err := s.secrets.Secrets(hc.GetNamespace()).Get(name); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	kubeconfig, err := clientcmd.Write(clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			"cluster": {Server: fmt.Sprintf("https://%s:%d", endpoint.Host, endpoint.Port)},
		},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {}},
		Contexts:       map[string]*clientcmdapi.Context{"admin": {Cluster: "cluster", AuthInfo: "admin"}},
		CurrentContext: "admin",
	})
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: hc.GetNamespace(),
			Labels:    map[string]string{ManagedByLabel: managedByValue},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: HostedClusterResource.GroupVersion().String(),
				Kind:       "HostedCluster",
				Name:       hc.GetName(),
				UID:        hc.GetUID(),
			}},
		},
		Data: map[string][]byte{"kubeconfig": kubeconfig},
	}
	if _, err := s.kube.CoreV1().Secrets(hc.GetNamespace()).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// finalizeHostedCluster does what HyperShift does before it lets a HostedCluster
// go: it deletes the NodePools and waits until they are gone, then deletes the
// control-plane namespace and the stand-in for the hosted cluster's openshift-config.
// (Without a namespace controller, as on a bare kube-apiserver, they stay Terminating.)
func (s *Simulator) finalizeHostedCluster(ctx context.Context, hc *unstructured.Unstructured) (time.Duration, error) {
	if !hasFinalizer(hc) {
		return 0, nil
	}
	if left := remaining(now(), hc.GetDeletionTimestamp().Time, s.opts.DeletionDelay); left > 0 {
		return left, nil
	}
	nodePools, err := s.nodePools.GetIndexer().ByIndex(nodePoolsByCluster, hc.GetNamespace()+"/"+hc.GetName())
	if err != nil {
		return 0, err
	}
	for _, obj := range nodePools {
		np := obj.(*unstructured.Unstructured)
		if np.GetDeletionTimestamp() != nil {
			continue
		}
		err := s.dynamic.Resource(NodePoolResource).Namespace(np.GetNamespace()).Delete(ctx, np.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	if len(nodePools) > 0 {
		return 0, nil // their deletion wakes this HostedCluster again
	}

	err = s.kube.CoreV1().Secrets(hc.GetNamespace()).Delete(ctx, KubeconfigSecretName(hc.GetName()), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	for _, ns := range []string{ControlPlaneNamespace(hc.GetNamespace(), hc.GetName()), HostedConfigNamespace(hc.GetNamespace(), hc.GetName())} {
		if existing, err := s.namespaces.Get(ns); err == nil && existing.DeletionTimestamp == nil {
			if err := s.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
		}
	}

	hc = hc.DeepCopy()
	hc.SetFinalizers(withoutFinalizer(hc.GetFinalizers()))
	if _, err := s.dynamic.Resource(HostedClusterResource).Namespace(hc.GetNamespace()).Update(ctx, hc, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	klog.FromContext(ctx).V(2).Info("Removed the finalizer of the deleted HostedCluster")
	return 0, nil
}
