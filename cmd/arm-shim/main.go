// Command arm-shim serves the ARO HCP ARM REST contract (Microsoft.RedHatOpenShift) for one region on
// top of hcp-apiserver. See pkg/armshim/frontend.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/aro-hcp/hcp-apiserver/cmd/arm-shim/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
