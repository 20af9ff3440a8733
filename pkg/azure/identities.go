package azure

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/msi/armmsi"
)

// IdentitiesClient checks the customer's operator managed identities: that they exist, and that
// they hold the roles the cluster's operators need.
type IdentitiesClient struct {
	cred    azcore.TokenCredential
	options *arm.ClientOptions
	roles   *armauthorization.RoleAssignmentsClient

	mu             sync.Mutex
	bySubscription map[string]*armmsi.UserAssignedIdentitiesClient
}

// identityAPIVersion pins the managed-identity API to 2023-01-31, the contract this package is
// checked against; armmsi v1.3.0 would send 2024-11-30, whose identity has the same shape.
const identityAPIVersion = "2023-01-31"

func newIdentitiesClient(cred azcore.TokenCredential, options *arm.ClientOptions, roles *armauthorization.RoleAssignmentsClient) *IdentitiesClient {
	pinned := *options
	pinned.APIVersion = identityAPIVersion
	return &IdentitiesClient{cred: cred, options: &pinned, roles: roles, bySubscription: map[string]*armmsi.UserAssignedIdentitiesClient{}}
}

// IdentityNotFoundError says that a managed identity the customer named does not exist, or the
// service may not read it.
type IdentityNotFoundError struct {
	ResourceID string
	cause      error
}

func (e *IdentityNotFoundError) Error() string {
	return fmt.Sprintf("managed identity %s was not found: create it, or correct the cluster's identity reference", e.ResourceID)
}

func (e *IdentityNotFoundError) Unwrap() error { return e.cause }

func (c *IdentitiesClient) client(subscriptionID string) (*armmsi.UserAssignedIdentitiesClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.bySubscription[subscriptionID]; ok {
		return client, nil
	}
	client, err := armmsi.NewUserAssignedIdentitiesClient(subscriptionID, c.cred, c.options)
	if err != nil {
		return nil, err
	}
	c.bySubscription[subscriptionID] = client
	return client, nil
}

// GetIdentity returns the principal (object) ID that role assignments name and the client ID
// that tokens are requested with, of the user-assigned identity resourceID.
func (c *IdentitiesClient) GetIdentity(ctx context.Context, resourceID string) (principalID, clientID string, err error) {
	rid, err := arm.ParseResourceID(resourceID)
	if err != nil {
		return "", "", fmt.Errorf("managed identity %q: %w", resourceID, err)
	}
	if !strings.EqualFold(rid.ResourceType.String(), "Microsoft.ManagedIdentity/userAssignedIdentities") {
		return "", "", fmt.Errorf("%s names a %s, not a Microsoft.ManagedIdentity/userAssignedIdentities", resourceID, rid.ResourceType.String())
	}
	client, err := c.client(rid.SubscriptionID)
	if err != nil {
		return "", "", err
	}
	got, err := client.Get(ctx, rid.ResourceGroupName, rid.Name, nil)
	if err != nil {
		err = cloudError(err)
		if IsNotFound(err) {
			return "", "", &IdentityNotFoundError{ResourceID: resourceID, cause: err}
		}
		return "", "", err
	}
	if got.Properties == nil || got.Properties.PrincipalID == nil || got.Properties.ClientID == nil {
		return "", "", fmt.Errorf("managed identity %s has no principal or client ID yet", resourceID)
	}
	return *got.Properties.PrincipalID, *got.Properties.ClientID, nil
}

// MissingRoles returns those of roleDefinitionIDs that principalID holds neither at scope nor
// at a scope above it. Roles are matched by their GUID, since the same role's definition ID
// differs by the subscription it is read from.
func (c *IdentitiesClient) MissingRoles(ctx context.Context, scope, principalID string, roleDefinitionIDs []string) ([]string, error) {
	held := map[string]bool{}
	pager := c.roles.NewListForScopePager(strings.TrimPrefix(scope, "/"), &armauthorization.RoleAssignmentsClientListForScopeOptions{
		// assignedTo also lists assignments below the scope, and through groups; those below are
		// skipped here since they do not grant the role at the scope.
		Filter: ptr(fmt.Sprintf("assignedTo('%s')", principalID)),
	})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, cloudError(err)
		}
		for _, a := range page.Value {
			if a == nil || a.Properties == nil || a.Properties.RoleDefinitionID == nil || a.Properties.Scope == nil {
				continue
			}
			if scopeCovers(*a.Properties.Scope, scope) {
				held[roleGUID(*a.Properties.RoleDefinitionID)] = true
			}
		}
	}
	var missing []string
	for _, id := range roleDefinitionIDs {
		if !held[roleGUID(id)] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// roleGUID is the last segment of a role definition ID, the part that is the same everywhere.
func roleGUID(id string) string {
	id = strings.TrimSuffix(id, "/")
	return strings.ToLower(id[strings.LastIndex(id, "/")+1:])
}

// scopeCovers reports whether an assignment at outer applies at inner: the same scope, one of its
// parents, the root, or a management group (which can only be above a subscription).
func scopeCovers(outer, inner string) bool {
	outer = strings.ToLower(strings.TrimSuffix(outer, "/"))
	inner = strings.ToLower(strings.TrimSuffix(inner, "/"))
	if outer == "" || outer == inner || strings.HasPrefix(outer, "/providers/microsoft.management/managementgroups/") {
		return true
	}
	return strings.HasPrefix(inner, outer+"/")
}

func ptr[T any](v T) *T { return &v }
