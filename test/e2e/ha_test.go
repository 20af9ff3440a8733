package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// haClusters is how many HCPClusters the HA test creates: enough that both crashes fall inside the storm.
const haClusters = 40

// TestHighAvailabilityBehindKubeAPIServer deploys hcp-apiserver as artifacts/deploy does and kills parts of it
// during a storm of creates. kube-apiserver runs as a cluster's does, as the front proxy of aggregated APIs,
// and also serves as the management cluster. `kubectl apply -k` of artifacts/deploy (with certificates from
// hack/deploy-certs.sh) creates the APIService with its caBundle and the Service; three hcp-apiserver processes
// run with the Deployment's own flags and the Secrets' files, on a 3-member etcd that speaks only TLS with
// the Secrets' certificates, and reach the agent through Mosquitto with the ACL of the deploy's ConfigMap. The agent runs as
// artifacts/agent runs it: its Deployment's flags, its ConfigMap and Secret, and its ServiceAccount's token,
// bound to its ClusterRole. The test plays kubelet and the EndpointSlice controller: one EndpointSlice per
// replica, not ready once the replica is dead.
//
// During the creates, sent through kube-apiserver, it kills the replica that leads (runs the controllers and
// the Maestro source) with kill -9, then one etcd member. Every acknowledged create is stored, the clusters
// reach Succeeded through the agent, each is delivered once, and at no moment do two replicas lead.
func TestHighAvailabilityBehindKubeAPIServer(t *testing.T) {
	skipWithoutKubectl(t)
	host := framework.MachineAddress(t)
	deploy := deployKustomization(t)
	certs := filepath.Join(deploy, "certs")

	mc := framework.StartManagementCluster(t, framework.AggregatorArgs(t)...)
	mc.StartControllerManager(t)
	hypershiftsim.StartForTest(t, mc.Config, hypershiftsim.Options{ProvisionDelay: time.Second})
	out := mustRun(t, "kubectl", "--kubeconfig", mc.Kubeconfig, "apply", "-k", deploy)
	t.Logf("kubectl apply -k artifacts/deploy:\n%s", out)

	etcd := framework.StartEtcdClusterTLS(t, 3, &framework.EtcdTLS{
		CA:         filepath.Join(certs, "hcp-etcd-tls", "ca.crt"),
		Cert:       filepath.Join(certs, "hcp-etcd-tls", "tls.crt"),
		Key:        filepath.Join(certs, "hcp-etcd-tls", "tls.key"),
		ClientCert: filepath.Join(certs, "hcp-apiserver-etcd-client", "tls.crt"),
		ClientKey:  filepath.Join(certs, "hcp-apiserver-etcd-client", "tls.key"),
	})
	pki := framework.NewMQTTPKI(t)
	broker := framework.StartMosquitto(t, pki, deployedACL(t, deploy)...)
	// The broker's client certificate, laid out as its Secret would be mounted.
	mqttClient := filepath.Join(t.TempDir(), "hcp-apiserver-mqtt-client")
	serverCert, serverKey := pki.ClientCert(t, "hcp-apiserver")
	for name, from := range map[string]string{"ca.crt": pki.CAFile, "tls.crt": serverCert, "tls.key": serverKey} {
		copyFile(t, from, filepath.Join(mqttClient, name))
	}

	// The replicas run with the Deployment's flags; the mounted Secrets become the folders of the certificates,
	// and the addresses of etcd and the broker become the test's.
	args := deploymentArgs(t, mc, deploy, "hcp-apiserver", map[string]string{"hcp-apiserver-mqtt-client": mqttClient}, certs)
	args = replaceFlags(args, map[string]string{
		"--etcd-servers": strings.Join(etcd.ClientURLs, ","),
		"--mqtt-url":     broker.URL,
		"--secure-port":  "", "--data-dir": "", // the framework gives each replica its own
	})
	args = append(args, "--bind-address="+host,
		"--authentication-kubeconfig", mc.Kubeconfig, "--authorization-kubeconfig", mc.Kubeconfig, "--kubeconfig", mc.Kubeconfig)
	var replicas []*framework.HCPAPIServerProcess
	for i := range 3 {
		r := framework.StartHCPAPIServerProcess(t, t.TempDir(), args...)
		replicas = append(replicas, r)
		publishEndpoint(t, mc, i, r, true)
	}
	if out, err := kubectl(t, "--kubeconfig", mc.Kubeconfig, "wait", "--for=condition=Available", "apiservice/v1alpha1.hcp.aro.azure.com", "--timeout=90s"); err != nil {
		t.Fatalf("the APIService never became Available: %v\n%s\n%s", err, out,
			kubectlOut(t, "--kubeconfig", mc.Kubeconfig, "get", "apiservice/v1alpha1.hcp.aro.azure.com", "-o", "yaml"))
	}
	leaders := watchLeaders(t, replicas)

	// The agent as artifacts/agent runs it: its RBAC, its ConfigMap and Secret, its Deployment's flags, and the
	// token of its ServiceAccount, so that what its ClusterRole allows is all it can do.
	agentNamespace := "maestro-agent"
	mustRun(t, "kubectl", "--kubeconfig", mc.Kubeconfig, "apply", "-k", filepath.Join(repoRoot(t), "artifacts", "agent"))
	if _, err := mc.Kube.CoreV1().ConfigMaps(agentNamespace).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "maestro-agent"},
		Data:       map[string]string{"broker-url": broker.URL, "consumer-name": stormConsumer},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	agentSecret := filepath.Join(t.TempDir(), "maestro-agent-broker")
	agentCert, agentKey := pki.ClientCert(t, stormConsumer)
	for name, from := range map[string]string{"ca.crt": pki.CAFile, "tls.crt": agentCert, "tls.key": agentKey} {
		copyFile(t, from, filepath.Join(agentSecret, name))
	}
	metrics := "127.0.0.1:" + strconv.Itoa(framework.FreePort(t))
	agentArgs := deploymentArgs(t, mc, filepath.Join(repoRoot(t), "artifacts", "agent"), "maestro-agent",
		map[string]string{"maestro-agent-broker": agentSecret}, "")
	agentArgs = append(replaceFlags(agentArgs, map[string]string{"--metrics-bind-address": metrics}),
		"--kubeconfig="+serviceAccountKubeconfig(t, mc, agentNamespace, "maestro-agent"))
	framework.StartProcess(t, framework.ComponentDir(t, "maestro-agent"), framework.Command(t, "maestro-agent"), agentArgs...)
	waitAgentReady(t, "http://"+metrics+"/readyz")

	// Every call from here on goes through kube-apiserver's aggregator to one of the replicas.
	if _, err := mc.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: stormNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &storm{n: haClusters, acknowledged: map[string]bool{}}
	s.client.Store(aggregatedClient(t, mc))
	target := fixtures.ManagementCluster(stormConsumer)
	target.Spec.Capacity = haClusters + 1 // and the one the ARM shim creates
	if _, err := s.client.Load().HcpV1alpha1().ManagementClusters().Create(t.Context(), target, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	createsDone := s.start(t.Context())
	if !s.waitAcknowledged(haClusters/3, createsDone) {
		t.Fatalf("the creates ended with %d acknowledged before the leader was to be killed", s.count())
	}
	leader := leaders.waitForOne(t)
	if err := replicas[leader].Kill(); err != nil {
		t.Fatal(err)
	}
	leaders.dead(leader)
	publishEndpoint(t, mc, leader, replicas[leader], false)
	t.Logf("killed the leading replica %d at %d/%d acknowledged", leader, s.count(), haClusters)

	if !s.waitAcknowledged(2*haClusters/3, createsDone) {
		t.Logf("the creates ended with %d acknowledged before an etcd member was to be killed", s.count())
	}
	if err := etcd.Members[1].Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed etcd member 1 at %d/%d acknowledged", s.count(), haClusters)

	<-createsDone
	if failed := s.failures(); len(failed) > 0 {
		t.Fatalf("%d of %d creates failed:\n%s", len(failed), haClusters, strings.Join(failed, "\n"))
	}
	clusters := waitAllSucceeded(t, s.client.Load(), haClusters, 4*time.Minute)
	t.Logf("all %d clusters Succeeded %v after the first create; %d creates tried again, %d acknowledged as AlreadyExists after a lost answer",
		haClusters, since(start), s.retriedCreates.Load(), s.lostAnswers.Load())
	stored := map[string]bool{}
	for _, c := range clusters {
		stored[c.Name] = true
	}
	for name := range s.acknowledged {
		if !stored[name] {
			t.Errorf("cluster %s was acknowledged through kube-apiserver but is not stored", name)
		}
	}
	checkDeliveredOnce(t, mc, clusters)
	racingExternalAuthsGetOne(t, s.client.Load(), clusters[0])

	armShimBehindKubeAPIServer(t, mc, deploy)

	leaders.stop()
	if both := leaders.overlaps(); len(both) > 0 {
		t.Errorf("more than one replica led at once: %v", both)
	}
	if now := leaders.current(); now < 0 || now == leader {
		t.Errorf("after the leader (replica %d) was killed, replica %d leads; want one of the others", leader, now)
	}
}

// deploymentArgs are the arguments of the Deployment's container of the same name, in the rendered
// kustomization, as kubelet would run them: every path under a mounted Secret is the same file of that Secret's
// folder, secretDirs[name] or <certs>/<name> (hack/deploy-certs.sh makes one folder per Secret; kustomize adds a
// hash to the name), and $(VAR) is the container's environment: a ConfigMap key read from mc, or the namespace.
func deploymentArgs(t *testing.T, mc *framework.ManagementCluster, kustomization, name string, secretDirs map[string]string, certs string) []string {
	t.Helper()
	hashed := regexp.MustCompile(`-[a-z0-9]{10}$`)
	for _, o := range kustomize(t, kustomization) {
		if o.GetKind() != "Deployment" || o.GetName() != name {
			continue
		}
		var d appsv1.Deployment
		fromUnstructured(t, o, &d)
		pod := d.Spec.Template.Spec
		secretOf := map[string]string{} // volume -> Secret
		for _, v := range pod.Volumes {
			if v.Secret != nil {
				secretOf[v.Name] = hashed.ReplaceAllString(v.Secret.SecretName, "")
			}
		}
		for _, c := range pod.Containers {
			if c.Name != name {
				continue
			}
			var replacements []string
			for _, m := range c.VolumeMounts {
				if secret, ok := secretOf[m.Name]; ok {
					dir := secretDirs[secret]
					if dir == "" {
						dir = filepath.Join(certs, secret)
					}
					replacements = append(replacements, m.MountPath+"/", dir+"/")
				}
			}
			for _, env := range c.Env {
				replacements = append(replacements, "$("+env.Name+")", envValue(t, mc, d.Namespace, env))
			}
			paths := strings.NewReplacer(replacements...)
			var args []string
			for _, arg := range c.Args {
				args = append(args, paths.Replace(arg))
			}
			return args
		}
	}
	t.Fatalf("no Deployment %s with a container %s in %s", name, name, kustomization)
	return nil
}

// envValue is the value kubelet gives a container's environment variable.
func envValue(t *testing.T, mc *framework.ManagementCluster, namespace string, env corev1.EnvVar) string {
	t.Helper()
	switch from := env.ValueFrom; {
	case from == nil:
		return env.Value
	case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.namespace":
		return namespace
	case from.ConfigMapKeyRef != nil:
		cm, err := mc.Kube.CoreV1().ConfigMaps(namespace).Get(t.Context(), from.ConfigMapKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("environment variable %s: %v", env.Name, err)
		}
		return cm.Data[from.ConfigMapKeyRef.Key]
	}
	t.Fatalf("environment variable %s: the test does not know where its value comes from", env.Name)
	return ""
}

// deployedACL is the broker's ACL as the kustomization's ConfigMap hcp-mqtt gives it to Mosquitto.
func deployedACL(t *testing.T, kustomization string) []string {
	t.Helper()
	for _, o := range kustomize(t, kustomization) {
		if o.GetKind() != "ConfigMap" || o.GetName() != "hcp-mqtt" {
			continue
		}
		acl, _, _ := unstructured.NestedString(o.Object, "data", "acl")
		if lines := strings.Split(strings.TrimSpace(acl), "\n"); len(lines) > 1 {
			return lines
		}
	}
	t.Fatalf("no ConfigMap hcp-mqtt with an acl in %s", kustomization)
	return nil
}

// replaceFlags gives the flags named new values, or drops them where the new value is empty.
func replaceFlags(args []string, values map[string]string) []string {
	var out []string
	for _, arg := range args {
		flag, _, _ := strings.Cut(arg, "=")
		value, ok := values[flag]
		switch {
		case !ok:
			out = append(out, arg)
		case value != "":
			out = append(out, flag+"="+value)
		}
	}
	return out
}

// publishEndpoint does what kubelet's readiness probe and the EndpointSlice controller do for a pod of the
// hcp-apiserver Service: replica i's address and port in an EndpointSlice of its own, ready or not.
func publishEndpoint(t *testing.T, mc *framework.ManagementCluster, i int, r *framework.HCPAPIServerProcess, ready bool) {
	t.Helper()
	u, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	host := u.Hostname()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("hcp-apiserver-replica-%d", i), Namespace: "hcp-system",
			Labels: map[string]string{discoveryv1.LabelServiceName: "hcp-apiserver"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	slices := mc.Kube.DiscoveryV1().EndpointSlices("hcp-system")
	if ready {
		_, err = slices.Create(t.Context(), slice, metav1.CreateOptions{})
	} else {
		var current *discoveryv1.EndpointSlice
		if current, err = slices.Get(t.Context(), slice.Name, metav1.GetOptions{}); err == nil {
			slice.ResourceVersion = current.ResourceVersion
			_, err = slices.Update(t.Context(), slice, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// aggregatedClient is a typed client of kube-apiserver as its admin: it reaches hcp-apiserver's resources
// through the aggregator, as kubectl does.
func aggregatedClient(t *testing.T, mc *framework.ManagementCluster) *versioned.Clientset {
	t.Helper()
	client, err := versioned.NewForConfig(mc.Config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// leaderWatch follows which replicas say they lead, from their logs ("Became the leader", "Lost the lead"),
// and records any moment at which two living replicas did.
type leaderWatch struct {
	replicas []*framework.HCPAPIServerProcess
	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once

	mu      sync.Mutex
	killed  map[int]bool
	leading []int
	overlap []string
}

func watchLeaders(t *testing.T, replicas []*framework.HCPAPIServerProcess) *leaderWatch {
	t.Helper()
	w := &leaderWatch{replicas: replicas, done: make(chan struct{}), killed: map[int]bool{}}
	w.sample()
	w.wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
				w.sample()
			}
		}
	})
	t.Cleanup(w.stop)
	return w
}

// sample reads each living replica's log: a replica leads if its last word on the lead is that it became the
// leader.
func (w *leaderWatch) sample() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.leading = w.leading[:0]
	for i, r := range w.replicas {
		if w.killed[i] {
			continue
		}
		log, err := os.ReadFile(r.LogFile)
		if err != nil {
			continue
		}
		became, lost := strings.LastIndex(string(log), "Became the leader"), strings.LastIndex(string(log), "Lost the lead")
		if became > lost {
			w.leading = append(w.leading, i)
		}
	}
	if len(w.leading) > 1 {
		w.overlap = append(w.overlap, fmt.Sprintf("%s: replicas %v", time.Now().Format(time.StampMilli), w.leading))
	}
}

// dead tells the watch that replica i was killed: what its log says no longer counts.
func (w *leaderWatch) dead(i int) {
	w.mu.Lock()
	w.killed[i] = true
	w.mu.Unlock()
}

// waitForOne waits until exactly one replica leads and returns it.
func (w *leaderWatch) waitForOne(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if i := w.current(); i >= 0 {
			return i
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no single replica led within a minute; overlaps seen: %v", w.overlaps())
	return -1
}

// current is the one replica that leads now, or -1 if none or several do.
func (w *leaderWatch) current() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.leading) != 1 {
		return -1
	}
	return w.leading[0]
}

func (w *leaderWatch) overlaps() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.overlap)
}

func (w *leaderWatch) stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.wg.Wait()
	})
}

// serviceAccountKubeconfig writes a kubeconfig for mc with a token of the ServiceAccount, as a pod gets one.
func serviceAccountKubeconfig(t *testing.T, mc *framework.ManagementCluster, namespace, name string) string {
	t.Helper()
	token, err := mc.Kube.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return mc.TokenKubeconfig(t, name, token.Status.Token)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// kubectlOut is what kubectl prints, error or not, for a failure message.
func kubectlOut(t *testing.T, args ...string) string {
	t.Helper()
	out, _ := kubectl(t, args...)
	return out
}

// armShimBehindKubeAPIServer runs arm-shim as artifacts/deploy runs it: its Deployment's flags, its Secrets
// from hack/deploy-certs.sh, and the token of its ServiceAccount, so that it reaches the replicas through
// kube-apiserver's aggregator with only what its ClusterRole grants. Called as ARM calls it, with the
// client certificate of the CA the shim trusts, it creates a cluster in a resource group kube-apiserver
// has no namespace for, brings it to Succeeded, reads it and deletes it.
func armShimBehindKubeAPIServer(t *testing.T, mc *framework.ManagementCluster, deploy string) {
	t.Helper()
	certs := filepath.Join(deploy, "certs")
	port := framework.FreePort(t)
	args := deploymentArgs(t, mc, deploy, "arm-shim", nil, certs)
	args = append(replaceFlags(args, map[string]string{"--secure-port": strconv.Itoa(port), "--bind-address": "127.0.0.1"}),
		"--kubeconfig="+serviceAccountKubeconfig(t, mc, "hcp-system", "hcp-arm-shim"))
	shim := framework.StartARMShimWithCertificates(t, port, filepath.Join(certs, "hcp-arm-shim-serving", "ca.crt"),
		filepath.Join(certs, "arm-client", "tls.crt"), filepath.Join(certs, "arm-client", "tls.key"), args...)
	c := newARMClient(t, shim)

	const v = "2026-09-01-preview"
	c.mustDo(t, http.MethodPut, "/subscriptions/"+armSubscription, "2.0", map[string]any{
		"state": "Registered", "registrationDate": time.Now().UTC().Format(time.RFC1123),
		"properties": map[string]any{"tenantId": armTenant},
	}, http.StatusOK)
	id := armClusterID("HA-Shim-RG", "ha-shim-cluster")
	resp := c.mustDo(t, http.MethodPut, id, v, armClusterBody(v, 90), http.StatusCreated)
	final := pollToEnd(t, c, resp, runtime.FinalStateViaAzureAsyncOp)
	if state := jsonString(t, final, "properties", "provisioningState"); state != "Succeeded" {
		t.Fatalf("the cluster created through kube-apiserver ended %s:\n%s", state, final)
	}
	if got := jsonString(t, c.getJSON(t, id, v), "name"); got != "ha-shim-cluster" {
		t.Errorf("GET of the cluster answered name %q", got)
	}
	// The resource group's namespace, made by the shim on the first create, as ARM spelled the group.
	namespaces, err := mc.Kube.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{LabelSelector: "hcp.aro.azure.com/arm-subscription=" + armSubscription})
	if err != nil {
		t.Fatal(err)
	}
	if len(namespaces.Items) != 1 || namespaces.Items[0].Annotations["hcp.aro.azure.com/arm-resource-group"] != "HA-Shim-RG" {
		t.Errorf("namespaces of the subscription in kube-apiserver: %v, want one annotated with resource group HA-Shim-RG", namespaces.Items)
	}
	resp = c.mustDo(t, http.MethodDelete, id, v, nil, http.StatusAccepted)
	pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
	c.mustDo(t, http.MethodGet, id, v, nil, http.StatusNotFound)
}

// racingExternalAuthsGetOne creates the first external auth of a cluster 20 times at once through
// kube-apiserver, which spreads the requests over the live replicas: one wins, the others are told why.
func racingExternalAuthsGetOne(t *testing.T, client versioned.Interface, cluster v1alpha1.HCPCluster) {
	t.Helper()
	const racers = 20
	errs := make([]error, racers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range racers {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			ea := fixtures.ExternalAuth(cluster.Namespace, cluster.Name, fmt.Sprintf("idp-%d", i))
			_, errs[i] = client.HcpV1alpha1().ExternalAuths(cluster.Namespace).Create(t.Context(), ea, metav1.CreateOptions{})
		}()
	}
	start.Done()
	done.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "a cluster can have one external auth only"):
			t.Errorf("a racing external auth was refused with %v; want 409 Conflict saying a cluster has one", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d racing external auths of cluster %s were created; want exactly one", won, racers, cluster.Name)
	}
}
