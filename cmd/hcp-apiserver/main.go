// Command hcp-apiserver serves the hcp.aro.azure.com API. See the README.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/aro-hcp/hcp-apiserver/cmd/hcp-apiserver/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
