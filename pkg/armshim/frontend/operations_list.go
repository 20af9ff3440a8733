package frontend

import "net/http"

// providerOperation is one entry of the resource provider's operations list.
type providerOperation struct {
	Name         string           `json:"name"`
	IsDataAction bool             `json:"isDataAction"`
	Display      operationDisplay `json:"display"`
	Origin       string           `json:"origin"`
	ActionType   string           `json:"actionType,omitempty"`
}

type operationDisplay struct {
	Provider    string `json:"provider"`
	Resource    string `json:"resource"`
	Operation   string `json:"operation"`
	Description string `json:"description"`
}

// providerOperations is the static list ARM shows for Microsoft.RedHatOpenShift's RBAC actions.
var providerOperations = func() []any {
	entry := func(name, resource, operation, description string) providerOperation {
		return providerOperation{
			Name:    "Microsoft.RedHatOpenShift/" + name,
			Origin:  "user,system",
			Display: operationDisplay{Provider: "Azure Red Hat OpenShift", Resource: resource, Operation: operation, Description: description},
		}
	}
	var ops []any
	for _, r := range []struct{ path, display string }{
		{"hcpOpenShiftClusters", "Clusters"},
		{"hcpOpenShiftClusters/nodePools", "Node Pools"},
		{"hcpOpenShiftClusters/externalAuths", "External Auths"},
	} {
		ops = append(ops,
			entry(r.path+"/read", r.display, "Read "+r.display, "Gets or lists "+r.display+"."),
			entry(r.path+"/write", r.display, "Write "+r.display, "Creates or updates "+r.display+"."),
			entry(r.path+"/delete", r.display, "Delete "+r.display, "Deletes "+r.display+"."),
		)
	}
	return append(ops,
		entry("hcpOpenShiftClusters/requestadmincredential/action", "Clusters", "Request Admin Credential", "Requests a break-glass admin credential of a cluster."),
		entry("hcpOpenShiftClusters/revokecredentials/action", "Clusters", "Revoke Credentials", "Revokes every break-glass credential of a cluster."),
		entry("locations/hcpOpenShiftVersions/read", "Versions", "Read Versions", "Lists the OpenShift versions offered in a location."),
		entry("locations/hcpOperationStatuses/read", "Operations", "Read Operation Status", "Reads the status of an asynchronous operation."),
		entry("locations/hcpOperationResults/read", "Operations", "Read Operation Result", "Reads the result of an asynchronous operation."),
		entry("operations/read", "Operations", "List Operations", "Lists the operations of the resource provider."),
	)
}()

func (f *Frontend) listProviderOperations(req *request) error {
	writeJSON(req.w, http.StatusOK, page{Value: providerOperations})
	return nil
}
