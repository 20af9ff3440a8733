package azure_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/test/azurestandin"
)

// TestClientsAgainstStandIn runs every client against a stand-in Azure that refuses any request
// the REST API documents would, from a configuration file as a deployment would write it.
func TestClientsAgainstStandIn(t *testing.T) {
	const (
		tenant      = "72f988bf-86f1-41af-91ab-2d7cd011db47"
		serviceSub  = "11111111-1111-1111-1111-111111111111"
		customerSub = "22222222-2222-2222-2222-222222222222"
		cluster     = "/subscriptions/" + customerSub + "/resourceGroups/prod/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
		zoneID      = "/subscriptions/" + serviceSub + "/resourceGroups/dns/providers/Microsoft.Network/dnszones/eastus.hcp.example.com"
		identityID  = "/subscriptions/" + customerSub + "/resourceGroups/identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ingress"
		contributor = "b24988ac-6180-42a0-ab88-20f7382dd24c"
		dnsZoneRole = "befefa01-2a29-4197-83a8-272ff33ce314"
	)
	srv := azurestandin.Start(t, azurestandin.Options{TenantID: tenant, ResourceGroupDeletePolls: 2})
	srv.AddZone(zoneID)
	seeded := srv.AddIdentity(identityID)
	srv.AddRoleAssignment("/subscriptions/"+customerSub, seeded.PrincipalID,
		"/subscriptions/"+customerSub+"/providers/Microsoft.Authorization/roleDefinitions/"+contributor)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "secret"), "dev-secret\n")
	writeFile(t, filepath.Join(dir, "ca.pem"), serverCertificatePEM(t, srv))
	writeFile(t, filepath.Join(dir, "azure.yaml"), `activeDirectoryAuthorityHost: `+srv.URL+`/
resourceManagerEndpoint: `+srv.URL+`
resourceManagerAudience: https://management.core.windows.net/
tenantID: `+tenant+`
subscriptionID: `+serviceSub+`
dnsZoneResourceID: `+zoneID+`
credential:
  kind: ClientSecret
  clientID: 33333333-3333-3333-3333-333333333333
  secretFile: `+filepath.Join(dir, "secret")+`
caFile: `+filepath.Join(dir, "ca.pem")+`
userAgent: hcp-apiserver
`)
	cfg, err := azure.Load(filepath.Join(dir, "azure.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := azure.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// The managed resource group: created once, ours after, deleted across a restart.
	tags := map[string]string{azure.OwnershipTag: cluster}
	if created, err := c.ResourceGroups.EnsureResourceGroup(ctx, customerSub, "c1-managed", "eastus", tags); err != nil || !created {
		t.Fatalf("EnsureResourceGroup: created=%v, %v", created, err)
	}
	if created, err := c.ResourceGroups.EnsureResourceGroup(ctx, customerSub, "c1-managed", "eastus", tags); err != nil || created {
		t.Fatalf("EnsureResourceGroup again: created=%v, %v", created, err)
	}
	groupID := "/subscriptions/" + customerSub + "/resourceGroups/c1-managed"
	if g, ok := srv.ResourceGroup(groupID); !ok || g.Tags[azure.OwnershipTag] != cluster || g.Location != "eastus" {
		t.Errorf("the stand-in holds %+v, want the group in eastus tagged for %s", g, cluster)
	}
	_, err = c.ResourceGroups.EnsureResourceGroup(ctx, customerSub, "c1-managed", "eastus", map[string]string{azure.OwnershipTag: cluster + "-other"})
	var notOurs *azure.NotOursError
	if !errors.As(err, &notOurs) {
		t.Errorf("EnsureResourceGroup for another cluster: %v, want a *NotOursError", err)
	}

	// The customer's identity and the roles it lacks on the managed resource group.
	principal, clientID, err := c.Identities.GetIdentity(ctx, identityID)
	if err != nil || principal != seeded.PrincipalID || clientID != seeded.ClientID {
		t.Errorf("GetIdentity = %q, %q, %v; want %q, %q", principal, clientID, err, seeded.PrincipalID, seeded.ClientID)
	}
	var notFound *azure.IdentityNotFoundError
	if _, _, err := c.Identities.GetIdentity(ctx, strings.Replace(identityID, "ingress", "gone", 1)); !errors.As(err, &notFound) {
		t.Errorf("GetIdentity of a missing identity: %v, want an *IdentityNotFoundError", err)
	}
	// The definitions are read through the service's subscription; the GUIDs still match.
	roleDef := func(guid string) string {
		return "/subscriptions/" + serviceSub + "/providers/Microsoft.Authorization/roleDefinitions/" + guid
	}
	missing, err := c.Identities.MissingRoles(ctx, groupID, principal, []string{roleDef(contributor), roleDef(dnsZoneRole)})
	if err != nil || len(missing) != 1 || missing[0] != roleDef(dnsZoneRole) {
		t.Errorf("MissingRoles = %v, %v; want only the DNS zone role", missing, err)
	}

	// The cluster's API record, written with etags, through one throttled answer.
	zone, err := c.DNS.GetZone(ctx, zoneID)
	if err != nil || zone.Name != "eastus.hcp.example.com" {
		t.Fatalf("GetZone = %+v, %v", zone, err)
	}
	srv.Throttle("PUT", zoneID+"/A/", 1, time.Second)
	record := azure.RecordSet{Properties: azure.RecordSetProperties{TTL: 300, ARecords: []azure.ARecord{{IPv4Address: "20.1.2.3"}},
		Metadata: map[string]string{azure.OwnershipTag: cluster}}}
	created, err := c.DNS.PutRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1", record, "", true)
	if err != nil || created.Etag == "" {
		t.Fatalf("PutRecordSet: %+v, %v", created, err)
	}
	throttled := 0
	for _, r := range srv.Requests() {
		if r.Status == 429 {
			throttled++
		}
	}
	if throttled != 1 {
		t.Errorf("the stand-in throttled %d requests, want the one PUT it was told to, then retried", throttled)
	}
	if _, err := c.DNS.PutRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1", record, "", true); !azure.IsPreconditionFailed(err) {
		t.Errorf("a second create-only PutRecordSet: %v, want a precondition failure", err)
	}
	record.Properties.ARecords[0].IPv4Address = "20.1.2.4"
	updated, err := c.DNS.PutRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1", record, created.Etag, false)
	if err != nil || updated.Etag == created.Etag {
		t.Fatalf("PutRecordSet at the etag read: %+v, %v", updated, err)
	}
	if _, err := c.DNS.PutRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1", record, created.Etag, false); !azure.IsPreconditionFailed(err) {
		t.Errorf("PutRecordSet at a stale etag: %v, want a precondition failure", err)
	}
	got, err := c.DNS.GetRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1")
	if err != nil || got.Etag != updated.Etag || len(got.Properties.ARecords) != 1 || got.Properties.ARecords[0].IPv4Address != "20.1.2.4" {
		t.Errorf("GetRecordSet = %+v, %v", got, err)
	}
	if sets, err := c.DNS.ListRecordSets(ctx, zoneID, azure.RecordTypeA); err != nil || len(sets) != 1 {
		t.Errorf("ListRecordSets = %+v, %v; want the API record", sets, err)
	}
	if err := c.DNS.DeleteRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1", updated.Etag); err != nil {
		t.Errorf("DeleteRecordSet: %v", err)
	}
	if _, err := c.DNS.GetRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1"); !azure.IsNotFound(err) {
		t.Errorf("GetRecordSet after the delete: %v, want not found", err)
	}
	if err := c.DNS.DeleteRecordSet(ctx, zoneID, azure.RecordTypeA, "api.c1", ""); err != nil {
		t.Errorf("DeleteRecordSet of a set already gone: %v", err)
	}

	op, err := c.ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", cluster, "")
	if err != nil {
		t.Fatalf("DeleteResourceGroup: %v", err)
	}
	token, err := op.ResumeToken()
	if err != nil || token == "" {
		t.Fatalf("ResumeToken = %q, %v", token, err)
	}
	restarted, err := azure.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deletesBefore := countRequests(srv, "DELETE")
	op, err = restarted.ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", cluster, token)
	if err != nil {
		t.Fatalf("DeleteResourceGroup with the resume token: %v", err)
	}
	if err := op.Wait(ctx, 10*time.Millisecond); err != nil {
		t.Fatalf("waiting for the deletion: %v", err)
	}
	if _, ok := srv.ResourceGroup(groupID); ok {
		t.Error("the group still exists after its deletion finished")
	}
	if n := countRequests(srv, "DELETE") - deletesBefore; n != 0 {
		t.Errorf("the restarted server sent %d more DELETEs, want it to follow the first", n)
	}
	if op, err := restarted.ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", cluster, ""); err != nil || !op.Done() {
		t.Errorf("DeleteResourceGroup of a group that is gone: %v", err)
	}
}

func countRequests(srv *azurestandin.Server, method string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// serverCertificatePEM is the stand-in's certificate as the CA file a deployment is given.
func serverCertificatePEM(t *testing.T, srv *azurestandin.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: srv.CertPool()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	certs := conn.ConnectionState().PeerCertificates
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certs[len(certs)-1].Raw}))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
