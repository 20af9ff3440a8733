package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agent"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

var stormClusters = flag.Int("storm-clusters", 30, "how many HCPClusters TestStormRidesOutCrashesOfEveryPart creates")

const (
	stormWorkers   = 16
	stormNamespace = "storm"
	stormConsumer  = "mc-eastus-1"
	// stormRetryFor bounds how long one create is tried again while the server is down: far longer than
	// a restart takes, so that only a server that does not come back uses it up.
	stormRetryFor = 3 * time.Minute
	// agentStateNamespace is the maestro-agent's default --state-namespace, where it records its bundles.
	agentStateNamespace = "maestro-agent"
)

// TestStormRidesOutCrashesOfEveryPart creates -storm-clusters HCPClusters from 16 clients while every
// part of the delivery path is killed with kill -9 and restarted in turn: hcp-apiserver a third of the
// way in, the maestro-agent at two thirds, and the MQTT broker (Mosquitto, an external broker as Event
// Grid is) near the end. Once all are Succeeded, every create the API acknowledged is stored and
// delivered exactly once, and the management cluster holds nothing that no stored cluster owns; deleting
// them all then leaves nothing on the management cluster.
func TestStormRidesOutCrashesOfEveryPart(t *testing.T) {
	n := *stormClusters
	if n < 10 {
		t.Fatalf("-storm-clusters=%d: want at least 10, so that each crash falls inside the storm", n)
	}
	st, broker, agentReadyz := startMosquittoDeliveryStack(t, hypershiftsim.Options{ProvisionDelay: time.Second})
	s := &storm{n: n, acknowledged: map[string]bool{}}
	s.client.Store(stormClient(t, st.server.Kubeconfig))
	mc := fixtures.ManagementCluster(stormConsumer)
	mc.Spec.Capacity = int32(n)
	if _, err := s.client.Load().HcpV1alpha1().ManagementClusters().Create(t.Context(), mc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	createsDone := s.start(t.Context())
	var downtimes []string
	// crash kills a part with kill -9 once at creates are acknowledged; restart brings it back and says
	// how long it was gone.
	crash := func(part string, at int, kill func() error, restart func(killed time.Time) string) {
		t.Helper()
		if !s.waitAcknowledged(at, createsDone) {
			t.Logf("the creates ended with %d acknowledged before %s was to be killed at %d", s.count(), part, at)
		}
		progress := fmt.Sprintf("%d/%d acknowledged, %s Succeeded", s.count(), n, s.succeeded(t.Context()))
		killed := time.Now()
		if err := kill(); err != nil {
			t.Fatal(err)
		}
		downtimes = append(downtimes, fmt.Sprintf("%s killed at %s: %s", part, progress, restart(killed)))
	}

	crash("hcp-apiserver", n/3, st.server.Kill, func(killed time.Time) string {
		st.startServer(t)
		s.client.Store(stormClient(t, st.server.Kubeconfig))
		return fmt.Sprintf("API serving again after %v", since(killed))
	})
	crash("maestro-agent", 2*n/3, st.agent.Kill, func(killed time.Time) string {
		st.startAgent(t)
		waitAgentReady(t, agentReadyz)
		return fmt.Sprintf("connected to the broker again after %v", since(killed))
	})
	crash("mosquitto", n-n/10, broker.Kill, func(killed time.Time) string {
		// The agent notices the broker gone before it is back: a restart it never saw proves nothing.
		waitAgentNotReady(t, agentReadyz)
		noticed := since(killed)
		broker.Restart(t)
		up := since(killed)
		waitAgentReady(t, agentReadyz)
		return fmt.Sprintf("agent noticed after %v, broker accepting again after %v, agent connected again after %v",
			noticed, up, since(killed))
	})

	<-createsDone
	allAcknowledged := since(start)
	if failed := s.failures(); len(failed) > 0 {
		t.Fatalf("%d of %d creates failed:\n%s", len(failed), n, strings.Join(failed, "\n"))
	}

	clusters := waitAllSucceeded(t, s.client.Load(), n, 3*time.Minute+time.Duration(n)*300*time.Millisecond)
	allSucceeded := since(start)
	t.Logf("storm of %d HCPClusters from %d clients, over Mosquitto: all %d creates acknowledged after %v, all Succeeded after %v (%.2f clusters/s)",
		n, stormWorkers, n, allAcknowledged, allSucceeded, float64(n)/allSucceeded.Seconds())
	t.Logf("creates tried again while the server was down: %d tries for %d creates; acknowledged only as AlreadyExists after a lost answer: %d",
		s.retried.Load(), s.retriedCreates.Load(), s.lostAnswers.Load())
	for _, d := range downtimes {
		t.Logf("%s", d)
	}

	// Every acknowledged create is stored, and nothing else is.
	stored := map[string]*v1alpha1.HCPCluster{}
	for i := range clusters {
		stored[clusters[i].Name] = &clusters[i]
	}
	for name := range s.acknowledged {
		if stored[name] == nil {
			t.Errorf("cluster %s was acknowledged by the API but is not stored", name)
		}
	}
	if len(stored) != len(s.acknowledged) {
		t.Errorf("%d clusters stored, %d acknowledged", len(stored), len(s.acknowledged))
	}
	checkDeliveredOnce(t, st.mc, clusters)

	// Deleting every cluster leaves nothing on the management cluster. The last to go are the two
	// namespaces of each cluster, emptied by kube-controller-manager's namespace controller, which at its
	// default 20 requests/s deletes about 5.5 namespaces/s here: 1,000 clusters need some 6 minutes of it.
	deleteStart := time.Now()
	deleteAll(t, s.client.Load(), clusters)
	waitManagementClusterEmpty(t, s.client.Load(), st.mc, n, 3*time.Minute+time.Duration(n)*500*time.Millisecond)
	t.Logf("all %d clusters deleted, and their objects gone from the management cluster, after %v", n, since(deleteStart))
}

// sourceACL is Mosquitto's ACL for the source hcp-apiserver and its agents, with Event Grid's topic
// permissions, as artifacts/deploy/base/mqtt.yaml has it: the source reads and writes all its topics, an agent
// (user = its certificate's CN, the consumer name) reads only its own source events and writes only its own
// agent events.
var sourceACL = []string{
	"user hcp-apiserver",
	"topic readwrite sources/hcp-apiserver/#",
	"pattern read sources/hcp-apiserver/consumers/%u/sourceevents",
	"pattern write sources/hcp-apiserver/consumers/%u/agentevents",
}

// startMosquittoDeliveryStack is a deliveryStack whose server and agent meet on Mosquitto, an external
// broker with client certificates and Event Grid's topic permissions, instead of the server's embedded
// broker. It returns the broker, and the agent's /readyz URL (ready while it holds a session).
func startMosquittoDeliveryStack(t *testing.T, sim hypershiftsim.Options) (*deliveryStack, *framework.Broker, string) {
	t.Helper()
	st := newDeliveryStack(t, sim)
	pki := framework.NewMQTTPKI(t)
	broker := framework.StartMosquitto(t, pki, sourceACL...)
	serverCert, serverKey := pki.ClientCert(t, "hcp-apiserver")
	st.args = []string{"--mqtt-url=" + broker.URL, "--mqtt-ca-file=" + pki.CAFile,
		"--mqtt-cert-file=" + serverCert, "--mqtt-key-file=" + serverKey}
	st.startServer(t)

	agentCert, agentKey := pki.ClientCert(t, stormConsumer)
	metrics := "127.0.0.1:" + strconv.Itoa(framework.FreePort(t))
	st.agentArgs = []string{"--broker-url=" + broker.URL, "--broker-ca-file=" + pki.CAFile,
		"--broker-cert-file=" + agentCert, "--broker-key-file=" + agentKey,
		"--consumer-name=" + stormConsumer, "--source=hcp-apiserver",
		"--kubeconfig=" + st.mc.Kubeconfig, "--metrics-bind-address=" + metrics}
	st.startAgent(t)
	readyz := "http://" + metrics + "/readyz"
	waitAgentReady(t, readyz)
	return st, broker, readyz
}

// storm creates n HCPClusters from stormWorkers clients and records which creates the API acknowledged.
type storm struct {
	n int
	// client talks to the running server; it is replaced when the server restarts on another port.
	client atomic.Pointer[versioned.Clientset]

	next atomic.Int64
	// retried counts the create requests tried again, retriedCreates the creates that needed it, and
	// lostAnswers those acknowledged as AlreadyExists: the server stored an earlier try and died before
	// answering it.
	retried, retriedCreates, lostAnswers atomic.Int64

	mu           sync.Mutex
	acknowledged map[string]bool
	failed       []string
}

// start runs the creates; the channel is closed once each is acknowledged or has failed.
func (s *storm) start(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range stormWorkers {
		wg.Go(func() {
			for i := int(s.next.Add(1) - 1); i < s.n; i = int(s.next.Add(1) - 1) {
				s.create(ctx, fmt.Sprintf("storm-%04d", i))
			}
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// create creates one cluster, trying again while no server answers, until the API acknowledges it.
func (s *storm) create(ctx context.Context, name string) {
	c := fixtures.HCPCluster(stormNamespace, name)
	c.Spec.DNS.BaseDomainPrefix = name
	giveUp := time.Now().Add(stormRetryFor)
	for try := 1; ; try++ {
		_, err := s.client.Load().HcpV1alpha1().HCPClusters(stormNamespace).Create(ctx, c, metav1.CreateOptions{})
		switch {
		case err == nil:
		case try > 1 && apierrors.IsAlreadyExists(err):
			s.lostAnswers.Add(1)
		case unanswered(err) && time.Now().Before(giveUp) && ctx.Err() == nil:
			if try == 1 {
				s.retriedCreates.Add(1)
			}
			s.retried.Add(1)
			time.Sleep(200 * time.Millisecond)
			continue
		default:
			s.mu.Lock()
			s.failed = append(s.failed, fmt.Sprintf("create %s, try %d: %v", name, try, err))
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		s.acknowledged[name] = true
		s.mu.Unlock()
		return
	}
}

// succeeded says how many clusters are Succeeded, as far as the server answers.
func (s *storm) succeeded(ctx context.Context) string {
	list, err := s.client.Load().HcpV1alpha1().HCPClusters(stormNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "?"
	}
	count := 0
	for _, c := range list.Items {
		if c.Status.ProvisioningState == v1alpha1.ProvisioningStateSucceeded {
			count++
		}
	}
	return strconv.Itoa(count)
}

func (s *storm) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acknowledged)
}

func (s *storm) failures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failed)
}

// waitAcknowledged waits until at least k creates are acknowledged; false if the creates ended first.
func (s *storm) waitAcknowledged(k int, done <-chan struct{}) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.count() < k {
		select {
		case <-done:
			return s.count() >= k
		case <-tick.C:
		}
	}
	return true
}

// unanswered tells whether a request failed because no server answered it (refused, reset, cut off
// mid-answer), a server said to come back later, or the server's etcd member went away or lost its leader
// mid-request (an internal error, as kube-apiserver answers too: whether the write was made is unknown, as
// with a lost answer); any other answer is final.
func unanswered(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		(apierrors.IsInternalError(err) && etcdInterrupted(err.Error()))
}

// etcdInterrupted tells whether an error is one of etcd's while a member dies or the leader changes.
func etcdInterrupted(message string) bool {
	for _, transient := range []string{"code = Unavailable", "etcdserver: leader changed", "etcdserver: no leader",
		"etcdserver: request timed out", "etcdserver: too many requests"} {
		if strings.Contains(message, transient) {
			return true
		}
	}
	return false
}

// stormClient is a typed client of the server as its admin, without client-side rate limiting.
func stormClient(t *testing.T, kubeconfig string) *versioned.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Timeout = commandTimeout
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// waitAllSucceeded waits until n clusters are stored and every one is Succeeded, and returns them. A
// Failed cluster ends the wait: it does not come back.
func waitAllSucceeded(t *testing.T, client versioned.Interface, n int, timeout time.Duration) []v1alpha1.HCPCluster {
	t.Helper()
	var clusters []v1alpha1.HCPCluster
	states := map[string]int{}
	var failed []string
	report := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), pollInterval(n), timeout, true, func(ctx context.Context) (bool, error) {
		if time.Since(report) > 30*time.Second {
			report = time.Now()
			t.Logf("%d clusters stored; by provisioningState: %v", len(clusters), states)
		}
		list, err := client.HcpV1alpha1().HCPClusters(stormNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Logf("listing the clusters: %v", err)
			return false, nil
		}
		clusters, states, failed = list.Items, map[string]int{}, nil
		for _, c := range clusters {
			states[string(c.Status.ProvisioningState)]++
			if c.Status.ProvisioningState == v1alpha1.ProvisioningStateFailed {
				failed = append(failed, c.Name)
			}
		}
		if len(failed) > 0 {
			return false, errors.New("clusters failed")
		}
		return len(clusters) == n && states[string(v1alpha1.ProvisioningStateSucceeded)] == n, nil
	})
	if err != nil {
		t.Fatalf("%d clusters stored, not all %d Succeeded within %v (%v); by provisioningState: %v; failed: %v",
			len(clusters), n, timeout, err, states, failed)
	}
	return clusters
}

// checkDeliveredOnce checks that each cluster has exactly one HostedCluster on the management cluster,
// in its namespace, and one bundle record of the agent, and that no HostedCluster, ocm-* namespace or
// record belongs to no cluster.
func checkDeliveredOnce(t *testing.T, mc *framework.ManagementCluster, clusters []v1alpha1.HCPCluster) {
	t.Helper()
	owner := map[string]string{}      // bundle ID -> cluster
	placed := map[string]string{}     // namespace/name of its HostedCluster -> cluster
	namespaces := map[string]string{} // namespaces it may have -> cluster
	for _, c := range clusters {
		ns := render.Namespace(render.DefaultEnvironment, c.Status.ClusterID)
		name := render.HostedClusterName(&c)
		owner[string(c.UID)] = c.Name
		placed[ns+"/"+name] = c.Name
		namespaces[ns] = c.Name
		namespaces[hypershiftsim.ControlPlaneNamespace(ns, name)] = c.Name
	}

	left, err := listLeftovers(t.Context(), mcMetadata(t, mc))
	if err != nil {
		t.Fatal(err)
	}
	delivered := map[string]int{}
	for _, hc := range left.hostedClusters {
		key := hc.Namespace + "/" + hc.Name
		cluster := placed[key]
		if cluster == "" || owner[hc.Labels[agent.BundleLabel]] != cluster {
			t.Errorf("HostedCluster %s (bundle %q) on the management cluster belongs to no stored cluster",
				key, hc.Labels[agent.BundleLabel])
			continue
		}
		delivered[cluster]++
	}
	for _, c := range clusters {
		if delivered[c.Name] != 1 {
			t.Errorf("cluster %s (ID %s) has %d HostedClusters on the management cluster, want exactly 1",
				c.Name, c.Status.ClusterID, delivered[c.Name])
		}
	}
	for _, ns := range left.namespaces {
		if namespaces[ns.Name] == "" {
			t.Errorf("namespace %s on the management cluster belongs to no stored cluster", ns.Name)
		}
	}
	// The agent keeps many bundles' records in one Secret, one data key per bundle ID.
	secrets, err := mc.Kube.CoreV1().Secrets(agentStateNamespace).List(t.Context(),
		metav1.ListOptions{LabelSelector: agent.ConsumerLabel + "=" + stormConsumer})
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]int{}
	for _, secret := range secrets.Items {
		for id := range secret.Data {
			recorded[id]++
		}
	}
	for _, c := range clusters {
		if recorded[string(c.UID)] != 1 {
			t.Errorf("cluster %s (bundle %s) has %d records of the agent, want exactly 1", c.Name, c.UID, recorded[string(c.UID)])
		}
		delete(recorded, string(c.UID))
	}
	for id := range recorded {
		t.Errorf("the agent records bundle %s, which belongs to no stored cluster", id)
	}
}

// leftovers is what clusters leave on the management cluster, metadata only: HostedClusters, ocm-*
// namespaces and the agent's bundle records. The test reads metadata only, so that its own reads weigh
// little on the management cluster's API beside what it measures.
type leftovers struct {
	hostedClusters, namespaces, records []metav1.PartialObjectMetadata
}

func (l leftovers) String() string {
	var parts []string
	for _, p := range []struct {
		what  string
		count int
	}{{"HostedClusters", len(l.hostedClusters)}, {"ocm-* namespaces", len(l.namespaces)}, {"bundle records", len(l.records)}} {
		if p.count > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.count, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

func listLeftovers(ctx context.Context, client metadata.Interface) (leftovers, error) {
	var l leftovers
	hcs, err := client.Resource(hostedClusters).List(ctx, metav1.ListOptions{})
	if err != nil {
		return l, err
	}
	l.hostedClusters = hcs.Items
	nsList, err := client.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return l, err
	}
	for _, ns := range nsList.Items {
		if strings.HasPrefix(ns.Name, "ocm-") {
			l.namespaces = append(l.namespaces, ns)
		}
	}
	records, err := client.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).Namespace(agentStateNamespace).
		List(ctx, metav1.ListOptions{LabelSelector: agent.ConsumerLabel + "=" + stormConsumer})
	if err != nil {
		return l, err
	}
	l.records = records.Items
	return l, nil
}

// mcMetadata is a metadata client of the management cluster.
func mcMetadata(t *testing.T, mc *framework.ManagementCluster) metadata.Interface {
	t.Helper()
	client, err := metadata.NewForConfig(mc.Config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// deleteAll deletes the clusters from stormWorkers clients.
func deleteAll(t *testing.T, client versioned.Interface, clusters []v1alpha1.HCPCluster) {
	t.Helper()
	names := make(chan string, len(clusters))
	for _, c := range clusters {
		names <- c.Name
	}
	close(names)
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for range stormWorkers {
		wg.Go(func() {
			for name := range names {
				err := client.HcpV1alpha1().HCPClusters(stormNamespace).Delete(t.Context(), name, metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("delete %s: %v", name, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d deletes failed:\n%s", len(failed), strings.Join(failed, "\n"))
	}
}

// waitManagementClusterEmpty waits until no HCPCluster is stored and the management cluster holds no
// HostedCluster, no ocm-* namespace and no bundle record of the agent.
func waitManagementClusterEmpty(t *testing.T, client versioned.Interface, mc *framework.ManagementCluster, n int, timeout time.Duration) {
	t.Helper()
	meta := mcMetadata(t, mc)
	var left string
	report := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), pollInterval(n), timeout, true, func(ctx context.Context) (bool, error) {
		clusters, err := client.HcpV1alpha1().HCPClusters(stormNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		l, err := listLeftovers(ctx, meta)
		if err != nil {
			return false, nil
		}
		left = l.String()
		if n := len(clusters.Items); n > 0 {
			left = strings.TrimSuffix(fmt.Sprintf("%d HCPClusters, %s", n, left), ", ")
		}
		if time.Since(report) > 30*time.Second {
			report = time.Now()
			t.Logf("still left: %s", left)
		}
		return left == "", nil
	})
	if err != nil {
		t.Fatalf("%v after deleting every cluster, still left: %s", timeout, left)
	}
}

// waitAgentReady waits until the agent's /readyz says it holds a session with the broker.
func waitAgentReady(t *testing.T, readyz string) {
	t.Helper()
	if err := pollReadyz(t.Context(), readyz, true); err != nil {
		t.Fatalf("maestro-agent not ready within a minute: %v", err)
	}
}

// waitAgentNotReady waits until the agent's /readyz says it lost its session.
func waitAgentNotReady(t *testing.T, readyz string) {
	t.Helper()
	if err := pollReadyz(t.Context(), readyz, false); err != nil {
		t.Fatalf("maestro-agent still ready a minute after the broker went: %v", err)
	}
}

func pollReadyz(ctx context.Context, readyz string, want bool) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		resp.Body.Close()
		last = resp.Status
		return (resp.StatusCode == http.StatusOK) == want, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last answer: %s", err, last)
	}
	return nil
}

// pollInterval is how often the test looks at n clusters: every second for a few, less often for many,
// so that its own reads stay small beside the work it waits for.
func pollInterval(n int) time.Duration { return time.Second + time.Duration(n)*2*time.Millisecond }

// since is the time since start, rounded for a reader.
func since(start time.Time) time.Duration { return time.Since(start).Round(time.Millisecond) }
