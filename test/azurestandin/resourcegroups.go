package azurestandin

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ResourceGroup is a resource group as the server holds it.
type ResourceGroup struct {
	ID        string
	Name      string
	Location  string
	Tags      map[string]string
	ManagedBy string
	// Deleting is set from the deletion's start until the group is gone.
	Deleting bool
}

// deletion is an asynchronous deletion of a resource group, polled at its operation result.
type deletion struct {
	groupKey string
	started  time.Time
	polls    int
}

// ResourceGroup returns the group of that ID, if it exists (or is being deleted).
func (s *Server) ResourceGroup(id string) (ResourceGroup, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[strings.ToLower(id)]
	if !ok {
		return ResourceGroup{}, false
	}
	out := *g
	out.Tags = maps.Clone(g.Tags)
	return out, true
}

func resourceGroupID(p map[string]string) string {
	return "/subscriptions/" + p["subscriptionId"] + "/resourceGroups/" + p["resourceGroupName"]
}

func (g *ResourceGroup) body() map[string]any {
	state := "Succeeded"
	if g.Deleting {
		state = "Deleting"
	}
	out := map[string]any{
		"id":         g.ID,
		"name":       g.Name,
		"type":       "Microsoft.Resources/resourceGroups",
		"location":   g.Location,
		"properties": map[string]any{"provisioningState": state},
	}
	if g.Tags != nil {
		out["tags"] = g.Tags
	}
	if g.ManagedBy != "" {
		out["managedBy"] = g.ManagedBy
	}
	return out
}

func (s *Server) putResourceGroup(w http.ResponseWriter, r *http.Request, p map[string]string, body []byte) {
	var in struct {
		Location  string            `json:"location"`
		Tags      map[string]string `json:"tags"`
		ManagedBy string            `json:"managedBy"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContent", "", err.Error())
		return
	}
	id := resourceGroupID(p)
	key := strings.ToLower(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	g, exists := s.groups[key]
	switch {
	case exists && g.Deleting:
		writeError(w, http.StatusConflict, "ResourceGroupBeingDeleted",
			"", fmt.Sprintf("The resource group '%s' is in deprovisioning state and cannot perform this operation.", g.Name))
		return
	case exists && !strings.EqualFold(normalizeLocation(g.Location), normalizeLocation(in.Location)):
		writeError(w, http.StatusConflict, "InvalidResourceGroupLocation", "",
			fmt.Sprintf("Invalid resource group location '%s'. The Resource group already exists in location '%s'.", in.Location, g.Location))
		return
	case exists:
		g.Tags, g.ManagedBy = in.Tags, in.ManagedBy
		writeJSON(w, http.StatusOK, g.body())
	default:
		g = &ResourceGroup{ID: id, Name: p["resourceGroupName"], Location: normalizeLocation(in.Location), Tags: in.Tags, ManagedBy: in.ManagedBy}
		s.groups[key] = g
		writeJSON(w, http.StatusCreated, g.body())
	}
}

// normalizeLocation writes a location as ARM answers it: "East US" is "eastus".
func normalizeLocation(l string) string {
	return strings.ToLower(strings.ReplaceAll(l, " ", ""))
}

func (s *Server) getResourceGroup(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[strings.ToLower(resourceGroupID(p))]
	if !ok {
		writeResourceGroupNotFound(w, p)
		return
	}
	writeJSON(w, http.StatusOK, g.body())
}

func (s *Server) headResourceGroup(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[strings.ToLower(resourceGroupID(p))]; !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeResourceGroupNotFound(w http.ResponseWriter, p map[string]string) {
	writeError(w, http.StatusNotFound, "ResourceGroupNotFound", "", fmt.Sprintf("Resource group '%s' could not be found.", p["resourceGroupName"]))
}

// deleteResourceGroup starts the deletion and answers 202 with the operation result to poll, as
// ARM does; deleting a group again while it is being deleted answers the same way.
func (s *Server) deleteResourceGroup(w http.ResponseWriter, r *http.Request, p map[string]string, _ []byte) {
	key := strings.ToLower(resourceGroupID(p))
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[key]
	if !ok {
		writeResourceGroupNotFound(w, p)
		return
	}
	g.Deleting = true
	token := "RESOURCEGROUPDELETIONJOB-" + strings.ToUpper(randomHex(8))
	s.deletions[token] = &deletion{groupKey: key, started: time.Now()}
	w.Header().Set("Location", fmt.Sprintf("%s/subscriptions/%s/operationresults/%s?api-version=%s", s.URL, p["subscriptionId"], token, r.URL.Query().Get("api-version")))
	s.setPollRetryAfter(w)
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) setPollRetryAfter(w http.ResponseWriter) {
	if s.opts.PollRetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((s.opts.PollRetryAfter+time.Second-1)/time.Second)))
	}
}

// serveOperationResult answers a poll of an asynchronous operation: 202 while it runs, 200 once
// done. These URLs are the server's own (ARM's operationresults), not in the documents.
func (s *Server) serveOperationResult(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 4 || !strings.EqualFold(parts[0], "subscriptions") || !strings.EqualFold(parts[2], "operationresults") {
		return false
	}
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "", "operation results are read with GET")
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deletions[parts[3]]
	if !ok {
		writeError(w, http.StatusNotFound, "NotFound", "", fmt.Sprintf("no operation %s", parts[3]))
		return true
	}
	d.polls++
	if d.polls <= s.opts.ResourceGroupDeletePolls || time.Since(d.started) < s.opts.ResourceGroupDeleteDuration {
		w.Header().Set("Location", s.URL+r.URL.RequestURI())
		s.setPollRetryAfter(w)
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	delete(s.groups, d.groupKey)
	w.WriteHeader(http.StatusOK)
	return true
}
