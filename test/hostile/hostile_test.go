// Package hostile sends hcp-apiserver and the ARM shim what a careless or hostile client would:
// malformed bodies, wrong types, oversized and deeply nested documents, odd encodings, names, IDs,
// query parameters, patches and slow connections. Every answer must be a 4xx that says what is wrong
// (a Kubernetes Status from the API, an ARM CloudError from the shim), never a 5xx, a panic or a hang;
// and both servers must still answer a normal request in under a second afterwards.
package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// probe is one request and what its answer must be.
type probe struct {
	name   string
	method string
	// path is the request's path and query, as sent (percent-encoded where it must be).
	path   string
	header http.Header
	body   []byte
	// accept says whether a status is right; nil means a 4xx.
	accept func(status int) bool
}

// clientError is the answer to a request the client got wrong.
func clientError(status int) bool { return status >= 400 && status < 500 }

// notServerError accepts whatever is not a 5xx: the probe's request may be a valid one.
func notServerError(status int) bool { return status < 500 }

// answeredOK accepts a 200 only: what the contract answers with its verdict in the body.
func answeredOK(status int) bool { return status == http.StatusOK }

// probeTimeout is how long one answer may take; a probe still waiting after it is a hang.
const probeTimeout = 15 * time.Second

// TestHostileClients runs every probe against a standalone hcp-apiserver and an arm-shim in front of it.
func TestHostileClients(t *testing.T) {
	api := framework.StartHCPAPIServerProcess(t, filepath.Join(t.TempDir(), "data"), "--request-timeout="+apiRequestTimeout.String())
	shim := framework.StartARMShim(t, api.Kubeconfig, armLocation, shimTimeoutFlags...)

	restConfig, err := clientcmd.BuildConfigFromFlags("", api.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	apiHTTP, err := rest.HTTPClientFor(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	apiHTTP.Timeout = probeTimeout
	client := versioned.NewForConfigOrDie(restConfig)
	shimHTTP := shim.HTTPClient(t)
	shimHTTP.Timeout = probeTimeout

	ctx := context.Background()
	createAPITargets(t, ctx, client)
	apiSet := apiProbes(t)
	registerARMSubscription(t, shim.URL, shimHTTP)
	createARMTargets(t, shim.URL, shimHTTP)
	shimSet := shimProbes()

	names := map[string]bool{}
	for _, set := range [][]probe{apiSet, shimSet} {
		for _, p := range set {
			if names[p.name] {
				t.Fatalf("two probes are named %q", p.name)
			}
			names[p.name] = true
		}
	}
	t.Logf("%d probes of hcp-apiserver, %d of the ARM shim", len(apiSet), len(shimSet))

	t.Run("hcp-apiserver", func(t *testing.T) {
		for _, p := range apiSet {
			t.Run(p.name, func(t *testing.T) { send(t, apiHTTP, restConfig.Host, p, checkStatusBody) })
		}
	})
	t.Run("arm-shim", func(t *testing.T) {
		for _, p := range shimSet {
			t.Run(p.name, func(t *testing.T) { send(t, shimHTTP, shim.URL, p, checkCloudErrorBody) })
		}
	})
	t.Run("slow clients", func(t *testing.T) {
		slowClientProbes(t, api, restConfig, shim)
	})

	// Afterwards both servers answer a normal request at once.
	for _, normal := range []struct {
		name, url string
		client    *http.Client
	}{
		{"hcp-apiserver", restConfig.Host + "/apis/hcp.aro.azure.com/v1alpha1/namespaces/" + targetNamespace + "/hcpclusters/" + targetCluster, apiHTTP},
		{"arm-shim", shim.URL + armClusterPath(armTargetCluster) + "?api-version=" + armAPIVersions[len(armAPIVersions)-1], shimHTTP},
	} {
		start := time.Now()
		resp, err := normal.client.Get(normal.url)
		if err != nil {
			t.Fatalf("%s: a normal GET after the probes: %v", normal.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != http.StatusOK || took > time.Second {
			t.Errorf("%s: a normal GET after the probes answered %d in %v, want 200 in under 1s", normal.name, resp.StatusCode, took)
		}
	}
	for _, p := range []*framework.Process{api.Process, shim.Process} {
		assertNoPanicLogged(t, p)
	}
}

// send sends p and checks its answer.
func send(t *testing.T, client *http.Client, base string, p probe, checkBody func(*testing.T, int, []byte)) {
	t.Helper()
	req, err := http.NewRequest(p.method, base+p.path, bytesOrNil(p.body))
	if err != nil {
		t.Fatalf("building the request: %v", err)
	}
	for k, vs := range p.header {
		req.Header[k] = vs
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: no answer after %v: %v", p.method, truncate(p.path), time.Since(start), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", p.method, truncate(p.path), err)
	}
	accept := p.accept
	if accept == nil {
		accept = clientError
	}
	if !accept(resp.StatusCode) || resp.StatusCode >= 500 {
		t.Fatalf("%s %s answered %d: %s", p.method, truncate(p.path), resp.StatusCode, truncate(string(body)))
	}
	if resp.StatusCode >= 400 && p.method != http.MethodHead {
		checkBody(t, resp.StatusCode, body)
	}
}

func bytesOrNil(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// checkStatusBody checks that a refusal of hcp-apiserver is a Kubernetes Status with a message.
func checkStatusBody(t *testing.T, status int, body []byte) {
	t.Helper()
	var s struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	if err := json.Unmarshal(body, &s); err != nil || s.Kind != "Status" || s.Message == "" || s.Code != status {
		t.Errorf("the %d's body is not a Status with a message and code %d: %s", status, status, truncate(string(body)))
	}
}

// checkCloudErrorBody checks that a refusal of the shim is an ARM CloudError with a code and a message,
// and that nothing in it names the Kubernetes objects behind ARM's resources.
func checkCloudErrorBody(t *testing.T, status int, body []byte) {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details []struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Target  string `json:"target"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Errorf("the %d's body is not a CloudError with a code and a message: %s", status, truncate(string(body)))
		return
	}
	if internal := internalNames.FindString(string(body)); internal != "" {
		t.Errorf("the %d's CloudError speaks of the API's objects (%q): %s", status, internal, truncate(string(body)))
	}
}

// internalNames are words of hcp-apiserver that an ARM caller cannot know.
var internalNames = regexp.MustCompile(`metadata\.|HCPCluster |NodePool |hcp\.aro\.azure\.com|\barm-[0-9a-f]{8,}`)

// panicLine is what a recovered or fatal panic leaves in a server's log.
var panicLine = regexp.MustCompile(`(?i)panic`)

func assertNoPanicLogged(t *testing.T, p *framework.Process) {
	t.Helper()
	log, err := os.ReadFile(p.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if panicLine.MatchString(line) {
			t.Errorf("%s logged a panic: %s", p.Name, truncate(line))
			return
		}
	}
}

func truncate(s string) string {
	const max = 300
	if len(s) > max {
		return fmt.Sprintf("%s... (%d bytes)", s[:max], len(s))
	}
	return s
}
