// Command kubectl-hcp is a kubectl plugin for hcp-apiserver: it gets a break-glass kubeconfig for a
// hosted cluster and revokes them, and inspects a hosted control plane. See cmd/kubectl-hcp/app.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/component-base/cli"

	"github.com/aro-hcp/hcp-apiserver/cmd/kubectl-hcp/app"
)

func main() {
	// An interrupt cancels the wait, so that the command can clean up after itself before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := cli.RunNoErrOutput(app.NewCommand(ctx))
	stop()
	if err != nil {
		// As kubectl prints its errors: stdout may be a kubeconfig being written to a file.
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
