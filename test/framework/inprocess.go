// Package framework starts the parts that tests and benchmarks run against:
// hcp-apiserver in the test process, and (in later files) real processes such
// as etcd, kube-apiserver and an MQTT broker on free loopback ports.
package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/cmd/hcp-apiserver/app"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

// InProcessServer is an hcp-apiserver running in this process in standalone mode on
// an embedded etcd, as `go run ./cmd/hcp-apiserver` runs it.
type InProcessServer struct {
	// DataDir holds its etcd data and admin.kubeconfig.
	DataDir string
	// Kubeconfig is the admin kubeconfig it wrote once ready.
	Kubeconfig string
	// Config is a client configuration for the admin user.
	Config *rest.Config
	// Client is the generated typed clientset for the admin user.
	Client versioned.Interface

	cancel context.CancelFunc
	done   chan error
}

// InProcessOptions adjust a server before it starts.
type InProcessOptions struct {
	// Args are extra command line flags, e.g. "--etcd-servers=...".
	Args []string
}

// StartInProcessServer starts a server whose data lives in dataDir (reused if it exists)
// and returns once it is ready.
func StartInProcessServer(ctx context.Context, dataDir string, opts InProcessOptions) (*InProcessServer, error) {
	kubeconfig := filepath.Join(dataDir, "admin.kubeconfig")
	// A kubeconfig left by an earlier run would make the wait below return at once.
	if err := os.Remove(kubeconfig); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	o := app.NewOptions()
	// The listener is handed over so that no other process can take the port meanwhile.
	o.RecommendedOptions.SecureServing.Listener = listener
	cmd := app.NewCommandWithOptions(ctx, o)
	args := append([]string{
		"--data-dir=" + dataDir,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", listener.Addr().(*net.TCPAddr).Port),
		"--mqtt-bind-address=127.0.0.1:0",
	}, opts.Args...)
	cmd.SetArgs(args)
	cmd.SilenceErrors = true
	s := &InProcessServer{DataDir: dataDir, Kubeconfig: kubeconfig, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- cmd.Execute() }()

	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(s.Kubeconfig); err == nil {
			break
		}
		select {
		case err := <-s.done:
			cancel()
			return nil, fmt.Errorf("hcp-apiserver exited before it was ready: %v", err)
		case <-deadline.C:
			s.Stop()
			return nil, errors.New("hcp-apiserver was not ready within 2 minutes")
		case <-tick.C:
		}
	}
	if s.Config, err = clientcmd.BuildConfigFromFlags("", s.Kubeconfig); err != nil {
		s.Stop()
		return nil, err
	}
	if s.Client, err = versioned.NewForConfig(s.Config); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop shuts the server down, API first and etcd last, and waits until it has.
func (s *InProcessServer) Stop() error {
	s.cancel()
	select {
	case err := <-s.done:
		return err
	case <-time.After(time.Minute):
		return errors.New("hcp-apiserver did not stop within a minute")
	}
}
