package framework

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/agentbundle"
)

// The open-cluster-management work agent is the agent Maestro runs on a management cluster. The tests run
// it in place of maestro-agent to show that hcp-apiserver serves it as it serves its own. It is built by
// hack/build-test-tools.sh from the module hack/ocm-agent, which pins its version.
const (
	// OCMWorkAgentTool is the work agent's name in _output/tools (see Tool).
	OCMWorkAgentTool = "ocm-work-agent"
	// ocmModule is the module of the work agent; its manifests hold the CRD the agent needs on the
	// management cluster.
	ocmModule = "open-cluster-management.io/ocm"
	// appliedManifestWorkCRD is, in ocmModule, the CRD of the record the agent keeps on the management
	// cluster of every bundle it applied.
	appliedManifestWorkCRD = "manifests/klusterlet/managed/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml"
	// ocmAgentNamespace is where the agent records its events, as in a klusterlet.
	ocmAgentNamespace = "open-cluster-management-agent"
)

// OCMMaxJSONRawLength is the --max-json-raw-length the tests (and the README) give the work agent: a
// HostedCluster's version history is reported whole as one JSON value that grows by about 200 bytes with
// every upgrade. The agent's default, 1024 bytes, drops the value after about four upgrades.
const OCMMaxJSONRawLength = 65536

// OCMWorkAgentOptions say how the work agent reaches the broker, and as whom.
type OCMWorkAgentOptions struct {
	// Source and Consumer name the topics: sources/<Source>/consumers/<Consumer>/{sourceevents,agentevents}.
	// Consumer is also the agent's cluster name, which the events carry.
	Source, Consumer string
	// BrokerAddress is host:port of the broker, which serves TLS.
	BrokerAddress string
	// CAFile verifies the broker; CertFile and KeyFile are the agent's client certificate, issued to
	// Consumer.
	CAFile, CertFile, KeyFile string
}

// OCMWorkAgentOptionsFromBundle reads an agent bundle, as "hcp-apiserver agent-bundle" writes it, and
// writes its certificates as the files the work agent reads.
func OCMWorkAgentOptionsFromBundle(t testing.TB, bundlePath string) OCMWorkAgentOptions {
	t.Helper()
	b, err := agentbundle.Load(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	address, err := b.Address()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := OCMWorkAgentOptions{
		Source: b.Source, Consumer: b.Consumer, BrokerAddress: address,
		CAFile:   filepath.Join(dir, "ca.crt"),
		CertFile: filepath.Join(dir, "tls.crt"),
		KeyFile:  filepath.Join(dir, "tls.key"),
	}
	for file, data := range map[string][]byte{opts.CAFile: b.CertificateAuthorityData, opts.CertFile: b.ClientCertificateData, opts.KeyFile: b.ClientKeyData} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return opts
}

// OCMWorkAgent is the work agent running as a process against a management cluster.
type OCMWorkAgent struct {
	*Process
	binary string
	args   []string
}

// StartOCMWorkAgent installs the AppliedManifestWork CRD on mc unless it is there, and starts the work
// agent against mc and the broker, with the MQTT driver and the manifestbundle codec, as Maestro deploys
// it. It returns once the agent serves its health check; connecting to the broker comes after. It is
// stopped when the test ends. The test is skipped if the agent is not built.
func StartOCMWorkAgent(t testing.TB, mc *ManagementCluster, opts OCMWorkAgentOptions) *OCMWorkAgent {
	t.Helper()
	binary := Tool(t, OCMWorkAgentTool)
	mc.installAppliedManifestWorkCRD(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := mc.ensureNamespace(ctx, ocmAgentNamespace); err != nil {
		t.Fatal(err)
	}

	config := filepath.Join(t.TempDir(), "mqtt.yaml")
	writeOCMMQTTConfig(t, config, opts)
	a := &OCMWorkAgent{binary: binary, args: []string{"agent",
		"--spoke-cluster-name=" + opts.Consumer,
		"--agent-id=" + opts.Consumer + "-work-agent",
		"--kubeconfig=" + mc.Kubeconfig,
		"--namespace=" + ocmAgentNamespace,
		"--disable-leader-election",
		"--workload-source-driver=mqtt",
		"--workload-source-config=" + config,
		"--cloudevents-client-id=" + opts.Consumer + "-work-agent",
		"--cloudevents-client-codecs=manifestbundle",
		// The feedback rules of a HostedCluster read its version history, a JSON value.
		"--feature-gates=RawFeedbackJsonString=true",
		"--max-json-raw-length=" + strconv.Itoa(OCMMaxJSONRawLength),
		// What the simulator does shows within two seconds, not ten.
		"--status-sync-interval=2s",
	}}
	a.start(t)
	return a
}

// Restart starts the agent again after Stop or Kill, with the same arguments.
func (a *OCMWorkAgent) Restart(t testing.TB) {
	t.Helper()
	a.start(t)
}

func (a *OCMWorkAgent) start(t testing.TB) {
	t.Helper()
	port := FreePort(t)
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// --listen serves /healthz over TLS with a certificate the agent makes for itself.
	a.Process = StartProcess(t, ComponentDir(t, OCMWorkAgentTool), a.binary, append(a.args, "--listen="+address)...)
	a.WaitUntilReady(t, time.Minute, "/healthz", func(ctx context.Context) error { return getOK(ctx, "https://"+address+"/healthz") })
}

// writeOCMMQTTConfig writes the work agent's --workload-source-config: the broker, the certificates, and
// this server's topics for one consumer, named in full (Maestro's own configuration has + for the
// consumer, which the agent replaces with its cluster name).
func writeOCMMQTTConfig(t testing.TB, path string, opts OCMWorkAgentOptions) {
	t.Helper()
	prefix := "sources/" + opts.Source + "/consumers/" + opts.Consumer + "/"
	data, err := yaml.Marshal(map[string]any{
		"brokerHost":     opts.BrokerAddress,
		"caFile":         opts.CAFile,
		"clientCertFile": opts.CertFile,
		"clientKeyFile":  opts.KeyFile,
		"topics": map[string]string{
			"sourceEvents": prefix + "sourceevents",
			"agentEvents":  prefix + "agentevents",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// installAppliedManifestWorkCRD creates the AppliedManifestWork CRD from the work agent's module, as
// hack/build-test-tools.sh downloaded it, unless mc has it.
func (mc *ManagementCluster) installAppliedManifestWorkCRD(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), crdEstablishTimeout)
	defer cancel()
	crds := mc.Dynamic.Resource(crdResource)
	const name = "appliedmanifestworks.work.open-cluster-management.io"
	switch _, err := crds.Get(ctx, name, metav1.GetOptions{}); {
	case err == nil:
		return
	case !apierrors.IsNotFound(err):
		t.Fatal(err)
	}
	mc.CreateFromFile(t, filepath.Join(ocmModuleDir(t), appliedManifestWorkCRD))
	if err := waitForCRD(ctx, crds, name); err != nil {
		t.Fatalf("the CRD %s: %v", name, err)
	}
}

// ocmModuleDir returns where the module cache holds the work agent's module, at the version
// hack/ocm-agent pins.
func ocmModuleDir(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", ocmModule)
	cmd.Dir = filepath.Join(root, "hack", "ocm-agent")
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("%s is not in the module cache (%v): hack/build-test-tools.sh downloads it", ocmModule, err)
	}
	return dir
}
