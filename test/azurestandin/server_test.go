package azurestandin

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/authorization/armauthorization/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/msi/armmsi"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/google/uuid"
)

const (
	subscription = "00000000-0000-0000-0000-000000000001"
	audience     = "https://management.core.windows.net/"
	clientID     = "11111111-1111-1111-1111-111111111111"
)

// start runs a server that, beyond refusing what Azure would refuse, must itself answer only what
// the documents describe.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	srv := Start(t, opts)
	t.Cleanup(func() {
		for _, p := range srv.responseProblems() {
			t.Errorf("the stand-in answered what Azure's documents do not describe: %s", p)
		}
	})
	return srv
}

func (s *Server) cloudConfig() cloud.Configuration {
	return cloud.Configuration{
		ActiveDirectoryAuthorityHost: s.URL + "/",
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: s.URL, Audience: audience},
		},
	}
}

func (s *Server) clientOptions() azcore.ClientOptions {
	return azcore.ClientOptions{Cloud: s.cloudConfig(), Transport: s.Client()}
}

func (s *Server) credential(t *testing.T) azcore.TokenCredential {
	t.Helper()
	cred, err := azidentity.NewClientSecretCredential(s.opts.TenantID, clientID, "secret", &azidentity.ClientSecretCredentialOptions{
		ClientOptions: s.clientOptions(), DisableInstanceDiscovery: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

func (s *Server) armOptions() *arm.ClientOptions {
	return &arm.ClientOptions{ClientOptions: s.clientOptions()}
}

func TestCredentialsGetTokens(t *testing.T) {
	srv := start(t, Options{})
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("eyJhbGciOiJub25lIn0.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ."), 0o600); err != nil {
		t.Fatal(err)
	}

	secret := srv.credential(t)
	certificate, err := azidentity.NewClientCertificateCredential(srv.opts.TenantID, clientID, []*x509.Certificate{cert}, key,
		&azidentity.ClientCertificateCredentialOptions{ClientOptions: srv.clientOptions(), DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	workload, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
		ClientOptions: srv.clientOptions(), DisableInstanceDiscovery: true,
		TenantID: srv.opts.TenantID, ClientID: clientID, TokenFilePath: tokenFile,
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, cred := range map[string]azcore.TokenCredential{"client secret": secret, "client certificate": certificate, "workload identity": workload} {
		t.Run(name, func(t *testing.T) {
			tok, err := cred.GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{audience + ".default"}})
			if err != nil {
				t.Fatal(err)
			}
			if tok.Token == "" || time.Until(tok.ExpiresOn) < 50*time.Minute {
				t.Errorf("token %q expires at %v, want one good for an hour", tok.Token, tok.ExpiresOn)
			}
		})
	}
}

func TestRequestWithoutIssuedTokenIsUnauthorized(t *testing.T) {
	srv := start(t, Options{})
	for name, header := range map[string]string{"no token": "", "a token it did not issue": "Bearer forged"} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/subscriptions/"+subscription+"/resourcegroups/rg?api-version=2021-04-01", nil)
			if err != nil {
				t.Fatal(err)
			}
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			err = runtime.NewResponseError(resp)
			var respErr *azcore.ResponseError
			if !errors.As(err, &respErr) || respErr.StatusCode != http.StatusUnauthorized || !strings.Contains(respErr.ErrorCode, "Authentication") {
				t.Errorf("got %v, want 401 with an ARM authentication error", err)
			}
		})
	}
}

func TestResourceGroupLifecycle(t *testing.T) {
	srv := start(t, Options{ResourceGroupDeletePolls: 2})
	ctx := t.Context()
	groups, err := armresources.NewResourceGroupsClient(subscription, srv.credential(t), srv.armOptions())
	if err != nil {
		t.Fatal(err)
	}
	group := armresources.ResourceGroup{Location: to.Ptr("East US"), Tags: map[string]*string{"cluster": to.Ptr("c1")}}
	created, err := groups.CreateOrUpdate(ctx, "managed-c1", group, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *created.Location != "eastus" || *created.Properties.ProvisioningState != "Succeeded" || *created.Tags["cluster"] != "c1" {
		t.Errorf("created %+v", created.ResourceGroup)
	}
	if _, err := groups.CreateOrUpdate(ctx, "managed-c1", group, nil); err != nil {
		t.Fatal(err)
	}
	got, err := groups.Get(ctx, "MANAGED-C1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "/subscriptions/" + subscription + "/resourceGroups/managed-c1"; *got.ID != want {
		t.Errorf("ID %s, want %s", *got.ID, want)
	}
	if exists, err := groups.CheckExistence(ctx, "managed-c1", nil); err != nil || !exists.Success {
		t.Errorf("CheckExistence = %v, %v; want true", exists.Success, err)
	}

	poller, err := groups.BeginDelete(ctx, "managed-c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if exists, err := groups.CheckExistence(ctx, "managed-c1", nil); err != nil || exists.Success {
		t.Errorf("CheckExistence after the deletion = %v, %v; want false", exists.Success, err)
	}
	_, err = groups.Get(ctx, "managed-c1", nil)
	if code := errorCode(err); code != "ResourceGroupNotFound" {
		t.Errorf("Get after the deletion: %v, want ResourceGroupNotFound", err)
	}

	var puts, polls []int
	for _, r := range srv.Requests() {
		switch {
		case r.Method == http.MethodPut:
			puts = append(puts, r.Status)
		case strings.Contains(r.Path, "/operationresults/"):
			polls = append(polls, r.Status)
		}
	}
	if len(puts) != 2 || puts[0] != http.StatusCreated || puts[1] != http.StatusOK {
		t.Errorf("PUT answers %v, want [201 200]", puts)
	}
	if len(polls) != 3 || polls[0] != http.StatusAccepted || polls[1] != http.StatusAccepted || polls[2] != http.StatusOK {
		t.Errorf("deletion polls answered %v, want [202 202 200]", polls)
	}
}

func errorCode(err error) string {
	var respErr *azcore.ResponseError
	if errors.As(err, &respErr) {
		return respErr.ErrorCode
	}
	return ""
}

func TestUserAssignedIdentity(t *testing.T) {
	srv := start(t, Options{})
	identityID := "/subscriptions/" + subscription + "/resourceGroups/customer/providers/Microsoft.ManagedIdentity/userAssignedIdentities/cp-identity"
	seeded := srv.AddIdentity(identityID)
	// armmsi v1.3.0 sends api-version 2024-11-30, newer than the shared document (2023-01-31), which
	// the stand-in holds callers to; the identity's shape is the same in both.
	opts := srv.armOptions()
	opts.APIVersion = "2023-01-31"
	identities, err := armmsi.NewUserAssignedIdentitiesClient(subscription, srv.credential(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := identities.Get(t.Context(), "customer", "cp-identity", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *got.ID != identityID || *got.Properties.PrincipalID != seeded.PrincipalID || *got.Properties.ClientID != seeded.ClientID || *got.Properties.TenantID != srv.opts.TenantID {
		t.Errorf("got %+v, want %+v", got.Properties, seeded)
	}
	_, err = identities.Get(t.Context(), "customer", "missing", nil)
	if code := errorCode(err); code != "ResourceNotFound" {
		t.Errorf("Get of an identity never made: %v, want ResourceNotFound", err)
	}
}

func TestRoleAssignmentsAtParentScopesApply(t *testing.T) {
	srv := start(t, Options{})
	ctx := t.Context()
	sub := "/subscriptions/" + subscription
	rg := sub + "/resourceGroups/customer"
	identity := rg + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/cp-identity"
	principal, other := uuid.NewString(), uuid.NewString()
	reader := sub + "/providers/Microsoft.Authorization/roleDefinitions/acdd72a7-3385-48ef-bd42-f606fba81ae7"
	operator := sub + "/providers/Microsoft.Authorization/roleDefinitions/f1a07417-d97a-45cb-824c-7a7467783830"
	atSub := srv.AddRoleAssignment(sub, principal, reader)
	atRG := srv.AddRoleAssignment(rg, principal, operator)
	srv.AddRoleAssignment(rg, other, operator)
	below := srv.AddRoleAssignment(identity, principal, reader)

	assignments, err := armauthorization.NewRoleAssignmentsClient(subscription, srv.credential(t), srv.armOptions())
	if err != nil {
		t.Fatal(err)
	}
	list := func(scope, filter string) []string {
		t.Helper()
		var ids []string
		pager := assignments.NewListForScopePager(scope, &armauthorization.RoleAssignmentsClientListForScopeOptions{Filter: to.Ptr(filter)})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range page.Value {
				ids = append(ids, *a.ID)
			}
		}
		return ids
	}
	for _, tc := range []struct {
		scope, filter string
		want          []string
	}{
		{identity, "assignedTo('" + principal + "')", []string{atRG.ID, below.ID, atSub.ID}},
		// The SDK sends $filter as given (x-ms-skip-url-encoding): the caller escapes its spaces.
		{rg, "principalId%20eq%20'" + principal + "'", []string{atRG.ID, below.ID, atSub.ID}},
		{rg, "atScope()%20and%20assignedTo('" + principal + "')", []string{atRG.ID, atSub.ID}},
	} {
		got := list(tc.scope, tc.filter)
		if strings.Join(got, "\n") != strings.Join(sortedIDs(tc.want), "\n") {
			t.Errorf("at %s with %s: got\n%s\nwant\n%s", tc.scope, tc.filter, strings.Join(got, "\n"), strings.Join(sortedIDs(tc.want), "\n"))
		}
	}

	name := uuid.NewString()
	create := armauthorization.RoleAssignmentCreateParameters{Properties: &armauthorization.RoleAssignmentProperties{
		PrincipalID: to.Ptr(other), RoleDefinitionID: to.Ptr(reader), PrincipalType: to.Ptr(armauthorization.PrincipalTypeServicePrincipal),
	}}
	created, err := assignments.Create(ctx, identity, name, create, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *created.Properties.Scope != identity {
		t.Errorf("created at %s, want %s", *created.Properties.Scope, identity)
	}
	_, err = assignments.Create(ctx, identity, uuid.NewString(), create, nil)
	if code := errorCode(err); code != "RoleAssignmentExists" {
		t.Errorf("assigning the same role again: %v, want RoleAssignmentExists", err)
	}
	if _, err := assignments.Get(ctx, identity, name, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := assignments.Delete(ctx, identity, name, nil); err != nil {
		t.Fatal(err)
	}
	_, err = assignments.Get(ctx, identity, name, nil)
	if code := errorCode(err); code != "RoleAssignmentNotFound" {
		t.Errorf("Get after Delete: %v, want RoleAssignmentNotFound", err)
	}
}

func sortedIDs(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

func TestThrottledCreateIsRetriedAndHappensOnce(t *testing.T) {
	srv := start(t, Options{})
	groups, err := armresources.NewResourceGroupsClient(subscription, srv.credential(t), srv.armOptions())
	if err != nil {
		t.Fatal(err)
	}
	path := "/subscriptions/" + subscription + "/resourcegroups/managed-c1"
	srv.Throttle(http.MethodPut, path, 2, time.Second)
	start := time.Now()
	if _, err := groups.CreateOrUpdate(t.Context(), "managed-c1", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 2*time.Second {
		t.Errorf("the SDK retried after %v, sooner than the two Retry-After: 1 answers asked", waited)
	}
	var puts []int
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPut {
			puts = append(puts, r.Status)
		}
	}
	if len(puts) != 3 || puts[0] != http.StatusTooManyRequests || puts[1] != http.StatusTooManyRequests || puts[2] != http.StatusCreated {
		t.Errorf("PUT answers %v, want [429 429 201]: two throttled, then one create", puts)
	}
}
