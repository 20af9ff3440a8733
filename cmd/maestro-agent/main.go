// Command maestro-agent applies the manifest bundles a Maestro source sends over MQTT to the management
// cluster it runs on, and reports their status back. See pkg/maestro/agent.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/component-base/cli"

	"github.com/aro-hcp/hcp-apiserver/cmd/maestro-agent/app"
)

func main() {
	// The first SIGTERM or SIGINT stops the agent cleanly; once stop runs, a second one kills it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Run(app.NewCommand(ctx))
	stop()
	os.Exit(code)
}
