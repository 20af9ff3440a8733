package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// The caller ARM names on every request, and the region the shim serves.
const (
	armSubscription = "9f1c2b3a-4d5e-4f60-8a7b-1c2d3e4f5a6b"
	armTenant       = "0a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d"
	armCaller       = "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"
	armLocation     = "eastus"
	armAPIVersion   = "2026-09-01-preview"
)

// armShim is the arm-shim binary in its local mode (a CA and client certificate of its own), in front
// of the in-process server, and an HTTPS client that presents that client certificate.
type armShim struct {
	url string
	// profiles is the shim's /debug/pprof/ URL when it serves profiles.
	profiles string
	client   *http.Client
	cmd      *exec.Cmd
	exited   chan struct{}
}

// startARMShim builds and starts arm-shim on a free loopback port with its files in dir, and returns
// once it serves /healthz. The client keeps one connection per benchmark client alive.
func startARMShim(ctx context.Context, dir, kubeconfig string, clients int, profiling bool) (*armShim, error) {
	binary, err := framework.Build("arm-shim")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "arm-shim.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	pki := filepath.Join(dir, "pki")
	s := &armShim{url: "https://127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
	args := []string{"--kubeconfig=" + kubeconfig, "--location=" + armLocation, "--pki-dir=" + pki, "--secure-port=" + strconv.Itoa(port)}
	if profiling {
		profilePort, err := freePort()
		if err != nil {
			return nil, err
		}
		address := "127.0.0.1:" + strconv.Itoa(profilePort)
		args = append(args, "--profiling-address="+address)
		s.profiles = "http://" + address + "/debug/pprof/"
	}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.cmd.Wait()
		close(s.exited)
	}()

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := s.healthy(ctx, pki, clients)
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("arm-shim exited before it served (see %s): %v", log.Name(), s.cmd.ProcessState)
		case <-ctx.Done():
			s.stop()
			return nil, fmt.Errorf("arm-shim did not serve /healthz within a minute (see %s): %v", log.Name(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// healthy makes the client once the shim has written its certificates, and asks /healthz.
func (s *armShim) healthy(ctx context.Context, pki string, clients int) error {
	if s.client == nil {
		client, err := armHTTPClient(pki, clients)
		if err != nil {
			return err
		}
		s.client = client
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/healthz", nil)
	if err != nil {
		return err
	}
	status, body, err := s.send(req)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("/healthz answered %d: %s", status, body)
	}
	return err
}

// armHTTPClient trusts the shim's CA and presents its client certificate, as ARM presents its own.
func armHTTPClient(pki string, clients int) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "client.crt"), filepath.Join(pki, "client.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no certificate", filepath.Join(pki, "ca.crt"))
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots},
		// The shim speaks HTTP/1.1, one request at a time per connection: without an idle connection
		// for every client, the transport would close some and pay a TLS handshake on the next call.
		MaxIdleConnsPerHost: clients,
	}}, nil
}

// stop sends SIGINT, which the shim takes as SIGTERM, and kills it if it has not exited in 30 s.
func (s *armShim) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// cpu is the CPU time the shim has used so far; 0 where /proc cannot tell.
func (s *armShim) cpu() time.Duration {
	cpu, _ := framework.ProcessCPU(s.cmd.Process.Pid)
	return cpu
}

// do sends what ARM forwards to a resource provider: the caller's tenant and object ID, system data
// on a PUT, and the request's own URL as Referer, from which the shim builds its links.
func (s *armShim) do(ctx context.Context, method, path, apiVersion string, body []byte) (int, []byte, error) {
	url := s.url + path + "?api-version=" + apiVersion
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Ms-Home-Tenant-Id", armTenant)
	req.Header.Set("X-Ms-Client-Object-Id", armCaller)
	req.Header.Set("Referer", url)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPut {
		req.Header.Set("X-Ms-Arm-Resource-System-Data", armSystemData)
	}
	return s.send(req)
}

// send reads the whole answer, so that the connection goes back to the pool.
func (s *armShim) send(req *http.Request) (int, []byte, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

var armSystemData = func() string {
	now := time.Now().UTC().Format(time.RFC3339)
	return fmt.Sprintf(`{"createdBy":"bench@example.com","createdByType":"User","createdAt":%q,`+
		`"lastModifiedBy":"bench@example.com","lastModifiedByType":"User","lastModifiedAt":%q}`, now, now)
}()

// registerSubscription does what ARM does before the first request of a subscription.
func (s *armShim) registerSubscription(ctx context.Context) error {
	body, err := json.Marshal(map[string]any{
		"state": "Registered", "registrationDate": time.Now().UTC().Format(time.RFC1123),
		"properties": map[string]any{"tenantId": armTenant},
	})
	if err != nil {
		return err
	}
	status, answer, err := s.do(ctx, http.MethodPut, "/subscriptions/"+armSubscription, "2.0", body)
	if err == nil && status != http.StatusOK && status != http.StatusCreated {
		err = fmt.Errorf("registering the subscription answered %d: %s", status, answer)
	}
	return err
}

// armClusters are the PUTs of one ARM phase: one resource group, and for every cluster its own
// network, identities and DNS prefix, since the API refuses infrastructure that another cluster uses.
type armClusters struct {
	// run tells this phase's clusters and infrastructure from those of another phase or another run
	// on the same -data-dir.
	run string
}

func newARMClusters() armClusters { return armClusters{run: rand.String(5)} }

func (c armClusters) path(i int) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/bench-%s/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/%s",
		armSubscription, c.run, clusterName(i))
}

// body is cluster i's PUT body in armAPIVersion.
func (c armClusters) body(i int) ([]byte, error) {
	own := func(name string) string { return fmt.Sprintf("%s-%s-%d", name, c.run, i) }
	network := func(kind, name string) string {
		return "/subscriptions/" + armSubscription + "/resourceGroups/bench-network/providers/Microsoft.Network/" + kind + "/" + name
	}
	identity := func(name string) string {
		return "/subscriptions/" + armSubscription + "/resourceGroups/bench-identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/" + own(name)
	}
	controlPlane, service := identity("cp"), identity("service")
	return json.Marshal(map[string]any{
		"location": armLocation,
		"identity": map[string]any{"type": "UserAssigned", "userAssignedIdentities": map[string]any{controlPlane: map[string]any{}, service: map[string]any{}}},
		"properties": map[string]any{
			"version": map[string]any{"id": "4.20", "channelGroup": "stable"},
			// At most 15 characters: "b", the run's 5 and the index's 6.
			"dns": map[string]any{"baseDomainPrefix": fmt.Sprintf("b%s%06d", c.run, i)},
			"platform": map[string]any{
				"subnetId":                network("virtualNetworks", own("vnet")+"/subnets/workers"),
				"vnetIntegrationSubnetId": network("virtualNetworks", own("vnet")+"/subnets/integration"),
				"networkSecurityGroupId":  network("networkSecurityGroups", own("nsg")),
				"operatorsAuthentication": map[string]any{"userAssignedIdentities": map[string]any{
					"controlPlaneOperators":  map[string]any{"control-plane": controlPlane},
					"dataPlaneOperators":     map[string]any{"disk-csi-driver": identity("disk")},
					"serviceManagedIdentity": service,
				}},
			},
		},
	})
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// armRow is the PUT of a cluster through arm-shim beside the create of an HCPCluster through the API.
type armRow struct {
	clusters int
	// arm's CPU time includes the shim's. api is the creates of the HCPClusters the shim makes of the same
	// PUTs; fixture the creates of the rounds' smaller cluster (test/fixtures), as the row measured before.
	arm, api, fixture apiStats
}

// ratio is PUTs per second over API creates of the same clusters per second: 1 would mean the shim costs
// nothing.
func (r armRow) ratio() float64 { return r.arm.perSecond() / r.api.perSecond() }

// fixtureRatio is PUTs per second over API creates of the fixture cluster per second.
func (r armRow) fixtureRatio() float64 { return r.arm.perSecond() / r.fixture.perSecond() }

// armRound creates n HCPClusters of the fixture through the API in a fresh namespace, then n of the
// clusters the shim makes of the PUTs that follow (converted as the shim converts them, with its labels) in
// a resource group of their own, then PUTs n clusters through the shim in a fresh resource group, with the
// same clients. Each phase waits for the server's controllers to finish with the clusters it made, so that
// the next one does not pay for them.
func (b *bench) armRound(ctx context.Context, shim *armShim, n int) (armRow, error) {
	create := func(objects []*v1alpha1.HCPCluster) (apiStats, error) {
		clusters := b.api.HcpV1alpha1().HCPClusters(objects[0].Namespace)
		stats, err := b.measureAPI(ctx, n, b.clients, func(ctx context.Context, i int) error {
			_, err := clusters.Create(ctx, objects[i], metav1.CreateOptions{})
			return err
		})
		b.settle(ctx)
		return stats, err
	}
	ns := namespace(n)
	fixed := make([]*v1alpha1.HCPCluster, n)
	for i := range fixed {
		fixed[i] = fixtures.HCPCluster(ns, clusterName(i))
	}
	b.logf("%d clusters: API creates of the fixture", n)
	fixture, err := create(fixed)
	if err != nil {
		return armRow{}, err
	}

	asAPI := newARMClusters()
	same := make([]*v1alpha1.HCPCluster, n)
	for i := range same {
		body, err := asAPI.body(i)
		if err != nil {
			return armRow{}, err
		}
		obj, errs := conversion.ClusterFromARM(conversion.Request{APIVersion: armAPIVersion, ResourceID: asAPI.path(i), Body: body,
			SystemData: armSystemData}, nil)
		if len(errs) > 0 {
			return armRow{}, errs.ToAggregate()
		}
		obj.Labels = names.SubscriptionLabels(armSubscription)
		same[i] = obj
	}
	b.logf("%d clusters: API creates of the clusters the shim makes", n)
	api, err := create(same)
	if err != nil {
		return armRow{}, err
	}

	arm := newARMClusters()
	bodies := make([][]byte, n)
	for i := range bodies {
		if bodies[i], err = arm.body(i); err != nil {
			return armRow{}, err
		}
	}
	b.logf("%d clusters: ARM PUTs through arm-shim", n)
	profiled := b.profileARM(ctx, shim)
	shimCPU := shim.cpu()
	put, err := b.measureAPI(ctx, n, b.clients, func(ctx context.Context, i int) error {
		status, answer, err := shim.do(ctx, http.MethodPut, arm.path(i), armAPIVersion, bodies[i])
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("PUT %s answered %d, want 201: %s", arm.path(i), status, answer)
		}
		return err
	})
	put.cpu += shim.cpu() - shimCPU
	if perr := profiled(); err == nil {
		err = perr
	}
	if err != nil {
		return armRow{}, err
	}
	b.settle(ctx)
	return armRow{clusters: n, arm: put, api: api, fixture: fixture}, nil
}

// armProfileTime is how long the ARM row's profiles run, from the first measured PUT.
const armProfileTime = 5 * time.Second

// profileARM starts the CPU profiles of -arm-cpu-profile, if asked for, and returns what waits for them.
func (b *bench) profileARM(ctx context.Context, shim *armShim) (wait func() error) {
	if b.armProfile == "" {
		return func() error { return nil }
	}
	done := make(chan error, 2)
	go func() {
		url := fmt.Sprintf("%sprofile?seconds=%d", shim.profiles, int(armProfileTime.Seconds()))
		done <- framework.FetchProfile(ctx, nil, url, b.armProfile+".shim")
	}()
	go func() {
		f, err := os.Create(b.armProfile + ".server")
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			done <- err
			return
		}
		time.Sleep(armProfileTime)
		pprof.StopCPUProfile()
		done <- nil
	}()
	return func() error {
		return errors.Join(<-done, <-done)
	}
}

// settle waits, for at most 30 s, until the server has sent etcd no request for a second: the
// controllers' writes for the clusters just made (placement, operations) are over.
func (b *bench) settle(ctx context.Context) {
	const quiet, most = time.Second, 30 * time.Second
	last, since := etcdRequests(), time.Now()
	for start := time.Now(); time.Since(start) < most && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond)
		if n := etcdRequests(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
	}
}
