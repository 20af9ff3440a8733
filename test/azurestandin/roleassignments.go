package azurestandin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// RoleAssignment is an Azure RBAC role assignment.
type RoleAssignment struct {
	ID               string
	Name             string
	Scope            string
	PrincipalID      string
	PrincipalType    string
	RoleDefinitionID string
}

const roleAssignmentsPath = "/providers/Microsoft.Authorization/roleAssignments/"

// AddRoleAssignment assigns a role to a principal at a scope (a resource ID, such as a
// subscription's, a resource group's or an identity's), as the customer would have.
func (s *Server) AddRoleAssignment(scope, principalID, roleDefinitionID string) RoleAssignment {
	name := uuid.NewString()
	a := RoleAssignment{
		ID:               strings.TrimSuffix(scope, "/") + roleAssignmentsPath + name,
		Name:             name,
		Scope:            strings.TrimSuffix(scope, "/"),
		PrincipalID:      principalID,
		PrincipalType:    "ServicePrincipal",
		RoleDefinitionID: roleDefinitionID,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roleAssignments[strings.ToLower(a.ID)] = a
	return a
}

// RoleAssignments returns every role assignment, sorted by ID.
func (s *Server) RoleAssignments() []RoleAssignment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RoleAssignment, 0, len(s.roleAssignments))
	for _, a := range s.roleAssignments {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (a RoleAssignment) body() map[string]any {
	return map[string]any{
		"id":   a.ID,
		"name": a.Name,
		"type": "Microsoft.Authorization/roleAssignments",
		"properties": map[string]any{
			"scope":            a.Scope,
			"roleDefinitionId": a.RoleDefinitionID,
			"principalId":      a.PrincipalID,
			"principalType":    a.PrincipalType,
		},
	}
}

// requestScope is the scope that a role-assignment operation's path names, whichever of the
// documents' paths it took.
func requestScope(p map[string]string) string {
	if scope, ok := p["scope"]; ok {
		return "/" + strings.Trim(scope, "/")
	}
	scope := "/subscriptions/" + p["subscriptionId"]
	if rg, ok := p["resourceGroupName"]; ok {
		scope += "/resourceGroups/" + rg
	}
	if ns, ok := p["resourceProviderNamespace"]; ok {
		scope += "/providers/" + ns + "/" + p["resourceType"] + "/" + p["resourceName"]
	}
	return scope
}

// within reports whether scope is parent or below it, whatever their case, as ARM compares IDs.
func within(scope, parent string) bool {
	return strings.HasPrefix(strings.ToLower(scope)+"/", strings.ToLower(parent)+"/")
}

var (
	filterAssignedTo  = regexp.MustCompile(`(?i)^assignedTo\('([^']*)'\)$`)
	filterPrincipalID = regexp.MustCompile(`(?i)^principalId\s+eq\s+'([^']*)'$`)
)

// listRoleAssignments lists, as Azure does, the assignments at the scope, above it (which apply to
// it) and below it; with atScope() only those at or above it. The $filter terms the SDK's callers
// send are served: atScope(), assignedTo('id') and principalId eq 'id', joined by "and".
func (s *Server) listRoleAssignments(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	scope := requestScope(p)
	atScope := false
	principal := ""
	if filter := strings.TrimSpace(r.URL.Query().Get("$filter")); filter != "" {
		for _, term := range regexp.MustCompile(`(?i)\s+and\s+`).Split(filter, -1) {
			term = strings.TrimSpace(term)
			if strings.EqualFold(term, "atScope()") {
				atScope = true
			} else if m := filterAssignedTo.FindStringSubmatch(term); m != nil {
				principal = m[1]
			} else if m := filterPrincipalID.FindStringSubmatch(term); m != nil {
				principal = m[1]
			} else {
				writeError(w, http.StatusBadRequest, "UnsupportedQuery", "$filter", fmt.Sprintf("The filter '%s' is not supported.", filter))
				return
			}
		}
	}
	value := []any{}
	for _, a := range s.RoleAssignments() {
		if principal != "" && !strings.EqualFold(a.PrincipalID, principal) {
			continue
		}
		above := within(scope, a.Scope)
		if !above && (atScope || !within(a.Scope, scope)) {
			continue
		}
		value = append(value, a.body())
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": value})
}

func (s *Server) getRoleAssignment(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	id := requestScope(p) + roleAssignmentsPath + p["roleAssignmentName"]
	s.mu.Lock()
	a, ok := s.roleAssignments[strings.ToLower(id)]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "RoleAssignmentNotFound", "", fmt.Sprintf("The role assignment '%s' is not found.", p["roleAssignmentName"]))
		return
	}
	writeJSON(w, http.StatusOK, a.body())
}

// putRoleAssignment creates an assignment. As in Azure, its name is a GUID, an assignment cannot be
// changed, and the same role for the same principal at the same scope cannot be assigned twice.
func (s *Server) putRoleAssignment(w http.ResponseWriter, r *http.Request, p map[string]string, body []byte) {
	var in struct {
		Properties struct {
			RoleDefinitionID string `json:"roleDefinitionId"`
			PrincipalID      string `json:"principalId"`
			PrincipalType    string `json:"principalType"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContent", "", err.Error())
		return
	}
	name := p["roleAssignmentName"]
	if _, err := uuid.Parse(name); err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRoleAssignmentId", "", fmt.Sprintf("The role assignment ID '%s' is not valid. The role assignment ID must be a GUID.", name))
		return
	}
	scope := requestScope(p)
	a := RoleAssignment{
		ID: scope + roleAssignmentsPath + name, Name: name, Scope: scope,
		PrincipalID: in.Properties.PrincipalID, PrincipalType: in.Properties.PrincipalType, RoleDefinitionID: in.Properties.RoleDefinitionID,
	}
	if a.PrincipalType == "" {
		a.PrincipalType = "User"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, old := range s.roleAssignments {
		same := strings.EqualFold(old.Scope, a.Scope) && strings.EqualFold(old.PrincipalID, a.PrincipalID) && strings.EqualFold(old.RoleDefinitionID, a.RoleDefinitionID)
		switch {
		case same:
			writeError(w, http.StatusConflict, "RoleAssignmentExists", "", "The role assignment already exists.")
			return
		case key == strings.ToLower(a.ID):
			writeError(w, http.StatusBadRequest, "RoleAssignmentUpdateNotPermitted", "", "Tenant ID, application ID, principal ID, and scope are not allowed to be updated.")
			return
		}
	}
	s.roleAssignments[strings.ToLower(a.ID)] = a
	writeJSON(w, http.StatusCreated, a.body())
}

func (s *Server) deleteRoleAssignment(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	key := strings.ToLower(requestScope(p) + roleAssignmentsPath + p["roleAssignmentName"])
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.roleAssignments[key]
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	delete(s.roleAssignments, key)
	writeJSON(w, http.StatusOK, a.body())
}
