package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestGetIdentity(t *testing.T) {
	const id = "/subscriptions/" + customerSub + "/resourceGroups/identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ingress"
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/ingress") {
			writeJSON(w, http.StatusOK, map[string]any{"id": id, "name": "ingress", "location": "eastus",
				"properties": map[string]string{"principalId": "p-1", "clientId": "c-1", "tenantId": testTenant}})
			return
		}
		writeCloudError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/gone' was not found.")
	})
	principal, client, err := c.Identities.GetIdentity(context.Background(), id)
	if err != nil || principal != "p-1" || client != "c-1" {
		t.Errorf("GetIdentity = %q, %q, %v; want p-1, c-1", principal, client, err)
	}
	wantRequests(t, f.sent(), "GET "+id+"?api-version=2023-01-31")

	gone := strings.Replace(id, "ingress", "gone", 1)
	_, _, err = c.Identities.GetIdentity(context.Background(), gone)
	var notFound *IdentityNotFoundError
	if !errors.As(err, &notFound) || notFound.ResourceID != gone || !IsNotFound(err) {
		t.Errorf("GetIdentity of a missing identity: %v, want an *IdentityNotFoundError naming it", err)
	}
	var ce *CloudError
	if !errors.As(err, &ce) || ce.Code != "ResourceNotFound" {
		t.Errorf("the missing identity's error does not carry Azure's: %v", err)
	}

	if _, _, err := c.Identities.GetIdentity(context.Background(), testZoneID); err == nil {
		t.Error("GetIdentity of a DNS zone's ID succeeded")
	}
}

func TestMissingRoles(t *testing.T) {
	const (
		scope       = "/subscriptions/" + customerSub + "/resourceGroups/c1-managed"
		contributor = "b24988ac-6180-42a0-ab88-20f7382dd24c"
		network     = "4d97b98b-1d4f-4787-a291-c67834d212e7"
		dnsZone     = "befefa01-2a29-4197-83a8-272ff33ce314"
		reader      = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
		storage     = "17d1049b-9a84-46fb-8f53-869881c3d3ab"
	)
	roleDef := func(sub, guid string) string {
		return "/subscriptions/" + sub + "/providers/Microsoft.Authorization/roleDefinitions/" + guid
	}
	assignment := func(at, role string) map[string]any {
		return map[string]any{"id": at + "/providers/Microsoft.Authorization/roleAssignments/x", "name": "x",
			"properties": map[string]string{"scope": at, "roleDefinitionId": role, "principalId": "p-1"}}
	}
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeJSON(w, http.StatusOK, map[string]any{"value": []any{
				// Held at the resource group, read through another subscription's definition ID.
				assignment(scope, roleDef(testSub, network)),
			}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"value": []any{
				assignment("/subscriptions/"+customerSub, roleDef(customerSub, contributor)),
				assignment("/providers/Microsoft.Management/managementGroups/root", roleDef(customerSub, reader)),
				// Below the scope: does not grant it there.
				assignment(scope+"/providers/Microsoft.Network/dnszones/z", roleDef(customerSub, dnsZone)),
				// A sibling whose name starts like the scope's.
				assignment(scope+"-other", roleDef(customerSub, storage)),
			},
			"nextLink": f.srv.URL + r.URL.Path + "?" + r.URL.RawQuery + "&page=2",
		})
	})
	want := []string{
		roleDef(customerSub, contributor), roleDef(customerSub, network), roleDef(customerSub, dnsZone),
		strings.ToUpper(reader), roleDef(customerSub, storage),
	}
	missing, err := c.Identities.MissingRoles(context.Background(), scope, "p-1", want)
	if err != nil {
		t.Fatalf("MissingRoles: %v", err)
	}
	if got, wantMissing := fmt.Sprint(missing), fmt.Sprint([]string{roleDef(customerSub, dnsZone), roleDef(customerSub, storage)}); got != wantMissing {
		t.Errorf("MissingRoles = %s, want %s", got, wantMissing)
	}
	sent := f.sent()
	if len(sent) != 2 {
		t.Fatalf("sent %d requests, want 2 pages", len(sent))
	}
	if sent[0].Path != scope+"/providers/Microsoft.Authorization/roleAssignments" ||
		!strings.Contains(sent[0].RawQuery, "api-version=2022-04-01") ||
		!strings.Contains(sent[0].RawQuery, "$filter=assignedTo('p-1')") {
		t.Errorf("first request %s?%s, want the scope's role assignments assigned to p-1", sent[0].Path, sent[0].RawQuery)
	}
}
