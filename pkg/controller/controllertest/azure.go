package controllertest

import (
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/test/azurestandin"
)

// AzureStandIn starts a stand-in Azure with opts and returns it with the service's clients of it, made
// as --azure-config makes them.
func AzureStandIn(t *testing.T, opts azurestandin.Options) (*azurestandin.Server, *azure.Clients) {
	t.Helper()
	const serviceSubscription = "11111111-1111-1111-1111-111111111111"
	az := azurestandin.Start(t, opts)
	zone := "/subscriptions/" + serviceSubscription + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/hcp.aro.example"
	az.AddZone(zone)
	cfg, err := azure.Load(az.WriteConfig(t, t.TempDir(), serviceSubscription, zone))
	if err != nil {
		t.Fatal(err)
	}
	clients, err := azure.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return az, clients
}
