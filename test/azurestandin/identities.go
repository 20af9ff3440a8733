package azurestandin

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// Identity is a user-assigned managed identity.
type Identity struct {
	ID          string
	Name        string
	Location    string
	PrincipalID string
	ClientID    string
	TenantID    string
}

// AddIdentity makes the user-assigned identity of that resource ID exist, with new principal and
// client IDs, as the customer would have made it.
func (s *Server) AddIdentity(resourceID string) Identity {
	parts := strings.Split(strings.Trim(resourceID, "/"), "/")
	id := Identity{
		ID:          resourceID,
		Name:        parts[len(parts)-1],
		Location:    "eastus",
		PrincipalID: uuid.NewString(),
		ClientID:    uuid.NewString(),
		TenantID:    s.opts.TenantID,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identities[strings.ToLower(resourceID)] = id
	return id
}

func (s *Server) getIdentity(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	id := resourceGroupID(p) + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/" + p["resourceName"]
	s.mu.Lock()
	identity, ok := s.identities[strings.ToLower(id)]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceNotFound", "", fmt.Sprintf(
			"The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/%s' under resource group '%s' was not found.",
			p["resourceName"], p["resourceGroupName"]))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":       identity.ID,
		"name":     identity.Name,
		"type":     "Microsoft.ManagedIdentity/userAssignedIdentities",
		"location": identity.Location,
		"properties": map[string]any{
			"tenantId":    identity.TenantID,
			"principalId": identity.PrincipalID,
			"clientId":    identity.ClientID,
		},
	})
}

// Identity returns the user-assigned identity of that resource ID, as AddIdentity made it.
func (s *Server) Identity(resourceID string) (Identity, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.identities[strings.ToLower(resourceID)]
	return id, ok
}
