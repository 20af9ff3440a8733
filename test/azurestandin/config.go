package azurestandin

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

// WriteConfig writes, in dir, the Azure configuration (pkg/azure.Config, hcp-apiserver's --azure-config)
// a deployment would have to use this server: the server as a cloud with no name, a client secret as the
// credential, and the server's CA. It returns the configuration's path.
func (s *Server) WriteConfig(t testing.TB, dir, serviceSubscriptionID, dnsZoneResourceID string) string {
	t.Helper()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	secret := write("azure-client-secret", "stand-in-secret\n")
	ca := write("azure-ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.http.Certificate().Raw})))
	return write("azure.yaml", `activeDirectoryAuthorityHost: `+s.URL+`/
resourceManagerEndpoint: `+s.URL+`
resourceManagerAudience: https://management.core.windows.net/
tenantID: `+s.opts.TenantID+`
subscriptionID: `+serviceSubscriptionID+`
dnsZoneResourceID: `+dnsZoneResourceID+`
credential:
  kind: ClientSecret
  clientID: 33333333-3333-3333-3333-333333333333
  secretFile: `+secret+`
caFile: `+ca+`
userAgent: hcp-apiserver
`)
}
