package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aro-hcp/hcp-apiserver/test/armschema"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// The ARM api-versions the shim serves, oldest first.
var armAPIVersions = []string{"2024-06-10-preview", "2025-12-23-preview", "2026-06-30-preview", "2026-09-01-preview"}

const (
	armSubscription = "6c2d8f0e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
	armTenant       = "7d3e9f1a-2b3c-4d5e-9f0a-1b2c3d4e5f6a"
	armCaller       = "8e4f0a2b-3c4d-4e5f-8a1b-2c3d4e5f6a7b"
	armLocation     = "eastus"
)

// TestARMClusterLifecycle drives the ARM shim as ARM does, with the Azure SDK's own request pipeline and
// long-running-operation poller, against hcp-apiserver, a management cluster and the HyperShift
// simulator: in each api-version a cluster is created and polled to Succeeded, read in every version and
// listed page by page; then, in its own api-version, each is upgraded with a PATCH (2024-06-10-preview,
// where version.id is create-only, refuses it with the field's path), gets node pools that
// are scaled and deleted, gets an admin credential (with a CSR in 2026-09-01-preview, without in older
// versions) whose kubeconfig is signed by the control plane's signer, has its credentials revoked, and is
// deleted and polled to the end. Every response body is validated against its api-version's OpenAPI
// document as it arrives.
func TestARMClusterLifecycle(t *testing.T) {
	armschema.Dir(t)
	st := startDeliveryStack(t, hypershiftsim.Options{UpgradeDelay: 2 * time.Second})
	shim := framework.StartARMShim(t, st.server.Kubeconfig, armLocation)
	c := newARMClient(t, shim)

	c.mustDo(t, http.MethodPut, "/subscriptions/"+armSubscription, "2.0", map[string]any{
		"state": "Registered", "registrationDate": time.Now().UTC().Format(time.RFC1123),
		"properties": map[string]any{"tenantId": armTenant},
	}, http.StatusOK)

	// One cluster per api-version, created in that version and polled to the end by the SDK's poller,
	// from the Azure-AsyncOperation header of the PUT's 201.
	var clusterIDs []string
	for i, v := range armAPIVersions {
		id := armClusterID("ARM-E2E-RG", fmt.Sprintf("Cluster-%d", i))
		resp := c.mustDo(t, http.MethodPut, id, v, armClusterBody(v, i), http.StatusCreated)
		if resp.Header.Get("Azure-AsyncOperation") == "" || resp.Header.Get("Location") != "" {
			t.Errorf("PUT %s answered Azure-AsyncOperation %q and Location %q; a PUT has only Azure-AsyncOperation",
				v, resp.Header.Get("Azure-AsyncOperation"), resp.Header.Get("Location"))
		}
		final := pollToEnd(t, c, resp, runtime.FinalStateViaAzureAsyncOp)
		if got := jsonString(t, final, "properties", "provisioningState"); got != "Succeeded" {
			t.Fatalf("cluster created in %s ended %s, want Succeeded:\n%s", v, got, final)
		}
		if got := jsonString(t, final, "id"); !strings.EqualFold(got, id) || !strings.Contains(got, "Cluster-") {
			t.Errorf("the created cluster's id is %q, want %q as ARM spelled it", got, id)
		}
		clusterIDs = append(clusterIDs, id)
	}

	// Read every cluster in every api-version: nothing is lost whichever version wrote it.
	for _, id := range clusterIDs {
		for _, v := range armAPIVersions {
			body := c.getJSON(t, id, v)
			if jsonString(t, body, "properties", "version", "id") != "4.20" || jsonString(t, body, "location") != armLocation {
				t.Errorf("GET %s in %s: version %q location %q, want 4.20 in %s", id, v,
					jsonString(t, body, "properties", "version", "id"), jsonString(t, body, "location"), armLocation)
			}
		}
	}

	// List by resource group two at a time: the pages' nextLinks cover every cluster once.
	listed := c.listAll(t, "/subscriptions/"+armSubscription+"/resourceGroups/arm-e2e-rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters", "2026-09-01-preview", 2)
	if len(listed) != len(clusterIDs) {
		t.Errorf("listing the resource group page by page gave %d clusters, want %d: %v", len(listed), len(clusterIDs), listed)
	}
	bySubscription := c.listAll(t, "/subscriptions/"+armSubscription+"/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters", "2024-06-10-preview", 0)
	if len(bySubscription) != len(clusterIDs) {
		t.Errorf("listing the subscription gave %d clusters, want %d", len(bySubscription), len(clusterIDs))
	}

	// In each api-version, its own cluster is upgraded, gets node pools, admin credentials and a revocation.
	for i, v := range armAPIVersions {
		t.Run(v, func(t *testing.T) { armClusterDayTwo(t, c, st, v, clusterIDs[i], i) })
	}

	// Delete everything, each polled to the end; a second delete finds nothing: 204.
	for i, id := range clusterIDs {
		resp := c.mustDo(t, http.MethodDelete, id, armAPIVersions[i], nil, http.StatusAccepted)
		if resp.Header.Get("Location") == "" || resp.Header.Get("Azure-AsyncOperation") == "" {
			t.Errorf("DELETE answered without Location or Azure-AsyncOperation: %v", resp.Header)
		}
		pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
		c.mustDo(t, http.MethodGet, id, armAPIVersions[i], nil, http.StatusNotFound)
		c.mustDo(t, http.MethodDelete, id, armAPIVersions[i], nil, http.StatusNoContent)
	}
	if left := c.listAll(t, "/subscriptions/"+armSubscription+"/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters", armAPIVersions[0], 0); len(left) != 0 {
		t.Errorf("clusters left after every delete: %v", left)
	}
}

// armClusterDayTwo drives what follows a create, in api-version v, on the i-th cluster: a minor upgrade
// with a PATCH where v allows it; two node pools created, one scaled, the other deleted (the last pool of a running cluster
// stays); an admin credential (2026-09-01-preview sends a CSR and merges its own key, older versions get
// a kubeconfig with a key the service made) signed by the control plane's signer; a revocation.
func armClusterDayTwo(t *testing.T, c *armClient, st *deliveryStack, v, cluster string, i int) {
	upgrade := map[string]any{"properties": map[string]any{"version": map[string]any{"id": "4.21"}}}
	poolVersion := "4.21.2"
	if v == "2024-06-10-preview" {
		// Its version.id is create-only: an upgrade cannot be asked for in this api-version.
		resp, body := c.do(t, http.MethodPatch, cluster, v, upgrade)
		if resp.StatusCode != http.StatusBadRequest || jsonString(t, body, "error", "target") != "properties.version.id" {
			t.Errorf("an upgrade in %s answered %d %s, want 400 with target properties.version.id", v, resp.StatusCode, body)
		}
		poolVersion = "4.20.8"
	} else {
		resp := c.mustDo(t, http.MethodPatch, cluster, v, upgrade, http.StatusAccepted)
		pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
		if got := jsonString(t, c.getJSON(t, cluster, v), "properties", "version", "id"); got != "4.21" {
			t.Errorf("after the PATCH the cluster's version is %q, want 4.21", got)
		}
	}
	var resp *http.Response

	pool, extra := cluster+"/nodePools/Workers", cluster+"/nodePools/Extra"
	for _, id := range []string{pool, extra} {
		resp = c.mustDo(t, http.MethodPut, id, v, map[string]any{
			"location": armLocation,
			"properties": map[string]any{
				"version":  map[string]any{"id": poolVersion, "channelGroup": "stable"},
				"platform": map[string]any{"vmSize": "Standard_D8s_v3", "subnetId": armSubnetID(i)},
				"replicas": 2,
			},
		}, http.StatusCreated)
		if got := jsonString(t, pollToEnd(t, c, resp, runtime.FinalStateViaAzureAsyncOp), "properties", "provisioningState"); got != "Succeeded" {
			t.Fatalf("node pool %s ended %s, want Succeeded", id, got)
		}
	}
	resp = c.mustDo(t, http.MethodPatch, pool, v, map[string]any{"properties": map[string]any{"replicas": 3}}, http.StatusAccepted)
	pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
	if got := jsonNumber(t, c.getJSON(t, pool, v), "properties", "replicas"); got != 3 {
		t.Errorf("after scaling, the node pool has replicas %v, want 3", got)
	}
	if pools := c.listAll(t, cluster+"/nodePools", v, 0); len(pools) != 2 {
		t.Errorf("the cluster lists node pools %v, want two", pools)
	}
	resp = c.mustDo(t, http.MethodDelete, extra, v, nil, http.StatusAccepted)
	pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
	c.mustDo(t, http.MethodGet, extra, v, nil, http.StatusNotFound)

	// The control plane makes its break-glass signer when the first certificate is asked for.
	var credential, kubeconfig []byte
	if v == "2026-09-01-preview" {
		key, csr := breakglassCSR(t)
		resp = c.mustDo(t, http.MethodPost, cluster+"/requestAdminCredential", v, map[string]any{"certificateSigningRequest": csr}, http.StatusAccepted)
		credential = pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
		kubeconfig = withClientKey(t, []byte(jsonString(t, credential, "kubeconfig")), key)
	} else {
		resp = c.mustDo(t, http.MethodPost, cluster+"/requestAdminCredential", v, nil, http.StatusAccepted)
		credential = pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
		kubeconfig = []byte(jsonString(t, credential, "kubeconfig"))
	}
	checkBreakglassKubeconfig(t, kubeconfig, signerCA(t, st.mc, controlPlaneNamespaceOf(t, st, cluster)))
	if err := armschema.Validate(t, v, "HcpOpenShiftClusterAdminCredential", credential); err != nil {
		t.Errorf("the credential is not a valid HcpOpenShiftClusterAdminCredential of %s: %v", v, err)
	}
	if _, err := time.Parse(time.RFC3339, jsonString(t, credential, "expirationTimestamp")); err != nil {
		t.Errorf("the credential's expirationTimestamp: %v", err)
	}

	resp = c.mustDo(t, http.MethodPost, cluster+"/revokeCredentials", v, nil, http.StatusAccepted)
	pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
}

// armClient sends requests through azcore's pipeline, the one every Azure SDK client is built on.
type armClient struct {
	base string
	pl   runtime.Pipeline
}

func newARMClient(t *testing.T, shim *framework.ARMShim) *armClient {
	t.Helper()
	return newARMClientFor(t, shim.URL, shim.HTTPClient(t))
}

// newARMClientFor is an ARM client of the shim at base, which hc reaches with ARM's client certificate.
func newARMClientFor(t *testing.T, base string, hc *http.Client) *armClient {
	t.Helper()
	pl := runtime.NewPipeline("hcp-apiserver-e2e", "v0.0.0", runtime.PipelineOptions{
		PerCall:  []policy.Policy{armCallerHeaders{}},
		PerRetry: []policy.Policy{&openAPIValidation{t: t}},
	}, &policy.ClientOptions{Transport: hc})
	return &armClient{base: base, pl: pl}
}

// armCallerHeaders adds what ARM adds to every call it forwards: the caller's tenant and object ID (an
// operation is visible to them only), the caller's system data, and the Referer the shim builds links from.
type armCallerHeaders struct{}

func (armCallerHeaders) Do(req *policy.Request) (*http.Response, error) {
	h := req.Raw().Header
	h.Set("X-Ms-Home-Tenant-Id", armTenant)
	h.Set("X-Ms-Client-Object-Id", armCaller)
	h.Set("Referer", req.Raw().URL.String())
	if m := req.Raw().Method; m == http.MethodPut || m == http.MethodPatch {
		now := time.Now().UTC().Format(time.RFC3339)
		h.Set("X-Ms-Arm-Resource-System-Data", fmt.Sprintf(
			`{"createdBy":"e2e@example.com","createdByType":"User","createdAt":%q,"lastModifiedBy":"e2e@example.com","lastModifiedByType":"User","lastModifiedAt":%q}`, now, now))
	}
	return req.Next()
}

// openAPIValidation checks every response body the pipeline receives, pollers' included, against the
// definition its api-version's document names for that route and status code.
type openAPIValidation struct {
	t  *testing.T
	mu sync.Mutex
}

func (v *openAPIValidation) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || resp.Body == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	u := req.Raw().URL
	apiVersion := u.Query().Get("api-version")
	definition := responseDefinition(req.Raw().Method, u.Path, resp.StatusCode)
	if definition == "" || len(bytes.TrimSpace(body)) == 0 || apiVersion == "2.0" {
		return resp, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := armschema.Validate(v.t, apiVersion, definition, body); err != nil {
		v.t.Errorf("%s %s answered %d with a body that is not a valid %s of %s: %v\n%s",
			req.Raw().Method, u.Path, resp.StatusCode, definition, apiVersion, err, body)
	}
	return resp, nil
}

var (
	clusterPath   = regexp.MustCompile(`(?i)/hcpOpenShiftClusters/[^/]+$`)
	clustersPath  = regexp.MustCompile(`(?i)/hcpOpenShiftClusters$`)
	nodePoolPath  = regexp.MustCompile(`(?i)/nodePools/[^/]+$`)
	nodePoolsPath = regexp.MustCompile(`(?i)/nodePools$`)
	authPath      = regexp.MustCompile(`(?i)/externalAuths/[^/]+$`)
	authsPath     = regexp.MustCompile(`(?i)/externalAuths$`)
	operationPath = regexp.MustCompile(`(?i)/hcpOperationStatuses/[^/]+$`)
	resultPath    = regexp.MustCompile(`(?i)/hcpOperationResults/[^/]+$`)
	versionsPath  = regexp.MustCompile(`(?i)/hcpOpenShiftVersions$`)
	versionPath   = regexp.MustCompile(`(?i)/hcpOpenShiftVersions/[^/]+$`)
)

// responseDefinition names the definition a response body must be: ErrorResponse for any error, the
// resource for a resource route, OperationStatusResult for an operation's status. A result is the
// resource, or the admin credential.
func responseDefinition(method, path string, status int) string {
	switch {
	case status >= 400:
		return "common.ErrorResponse"
	case status == http.StatusNoContent:
		return ""
	case operationPath.MatchString(path):
		return "common.OperationStatusResult"
	case resultPath.MatchString(path):
		return "" // checked by the caller, which knows what the operation was for
	case nodePoolsPath.MatchString(path):
		return "NodePoolListResult"
	case nodePoolPath.MatchString(path):
		return "NodePool"
	case authsPath.MatchString(path):
		return "ExternalAuthListResult"
	case authPath.MatchString(path):
		return "ExternalAuth"
	case clustersPath.MatchString(path):
		return "HcpOpenShiftClusterListResult"
	case clusterPath.MatchString(path):
		return "HcpOpenShiftCluster"
	case versionsPath.MatchString(path):
		return "HcpOpenShiftVersionListResult"
	case versionPath.MatchString(path):
		return "HcpOpenShiftVersion"
	}
	return ""
}

func (c *armClient) do(t *testing.T, method, path, apiVersion string, body any) (*http.Response, []byte) {
	t.Helper()
	return c.doWith(t, method, path, apiVersion, body, nil)
}

// doWith is do with more request headers.
func (c *armClient) doWith(t *testing.T, method, path, apiVersion string, body any, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := runtime.NewRequest(t.Context(), method, c.base+path)
	if err != nil {
		t.Fatal(err)
	}
	q := req.Raw().URL.Query()
	q.Set("api-version", apiVersion)
	req.Raw().URL.RawQuery = q.Encode()
	req.Raw().Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Raw().Header.Set(k, v)
	}
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(raw)), "application/json"); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := c.pl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	raw, err := runtime.Payload(resp)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// mustDo sends a request and fails the test unless it is answered with status.
func (c *armClient) mustDo(t *testing.T, method, path, apiVersion string, body any, status int) *http.Response {
	t.Helper()
	resp, raw := c.do(t, method, path, apiVersion, body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s?api-version=%s answered %d, want %d:\n%s", method, path, apiVersion, resp.StatusCode, status, raw)
	}
	if resp.Header.Get("X-Ms-Request-Id") == "" {
		t.Errorf("%s %s answered without x-ms-request-id", method, path)
	}
	return resp
}

func (c *armClient) getJSON(t *testing.T, path, apiVersion string) []byte {
	t.Helper()
	resp, raw := c.do(t, http.MethodGet, path, apiVersion, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s?api-version=%s answered %d:\n%s", path, apiVersion, resp.StatusCode, raw)
	}
	return raw
}

// listAll follows a list's nextLinks to the end, top items a page (0: the server's page size), and
// returns the ids listed.
func (c *armClient) listAll(t *testing.T, path, apiVersion string, top int) []string {
	t.Helper()
	next := c.base + path + "?api-version=" + apiVersion
	if top > 0 {
		// $top sizes the pages that follow a $skipToken only, as in the public frontend; an empty one
		// asks for the first page in pages of $top.
		next += "&$skipToken=&$top=" + strconv.Itoa(top)
	}
	var ids []string
	for pages := 0; next != ""; pages++ {
		if pages > 50 {
			t.Fatalf("listing %s: more than 50 pages", path)
		}
		req, err := runtime.NewRequest(t.Context(), http.MethodGet, next)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.pl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := runtime.Payload(resp)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s answered %d:\n%s", next, resp.StatusCode, raw)
		}
		var page struct {
			Value    []struct{ ID string }
			NextLink string
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		if top > 0 && len(page.Value) > top {
			t.Errorf("a page of $top=%d held %d items", top, len(page.Value))
		}
		for _, item := range page.Value {
			ids = append(ids, item.ID)
		}
		if page.NextLink != "" {
			u, err := url.Parse(page.NextLink)
			if err != nil || !strings.HasPrefix(page.NextLink, c.base) || u.Query().Get("api-version") != apiVersion {
				t.Fatalf("nextLink %q is not a link to the shim with the same api-version", page.NextLink)
			}
		}
		next = page.NextLink
	}
	return ids
}

// pollToEnd follows a long-running operation with azcore's poller to its end and returns the final
// body; the operation must succeed.
func pollToEnd(t *testing.T, c *armClient, resp *http.Response, via runtime.FinalStateVia) []byte {
	t.Helper()
	poller, err := runtime.NewPoller[json.RawMessage](resp, c.pl, &runtime.NewPollerOptions[json.RawMessage]{FinalStateVia: via})
	if err != nil {
		t.Fatalf("azcore cannot follow %s %s: %v", resp.Request.Method, resp.Request.URL, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	final, err := poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: time.Second})
	if err != nil {
		t.Fatalf("polling %s %s: %v", resp.Request.Method, resp.Request.URL, err)
	}
	return final
}

func armClusterID(resourceGroup, name string) string {
	return "/subscriptions/" + armSubscription + "/resourceGroups/" + resourceGroup + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

func armNetworkID(kind, name string) string {
	return "/subscriptions/" + armSubscription + "/resourceGroups/arm-e2e-network/providers/Microsoft.Network/" + kind + "/" + name
}

func armSubnetID(i int) string {
	return armNetworkID("virtualNetworks", fmt.Sprintf("vnet-%d/subnets/workers", i))
}

func armIdentityID(name string) string {
	return "/subscriptions/" + armSubscription + "/resourceGroups/arm-e2e-identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/" + name
}

// armClusterBody is a cluster's PUT body in api-version v, the i-th cluster's own network and DNS prefix.
func armClusterBody(v string, i int) map[string]any {
	controlPlane, service := armIdentityID(fmt.Sprintf("cp-%d", i)), armIdentityID(fmt.Sprintf("service-%d", i))
	platform := map[string]any{
		"subnetId":               armSubnetID(i),
		"networkSecurityGroupId": armNetworkID("networkSecurityGroups", fmt.Sprintf("nsg-%d", i)),
		"operatorsAuthentication": map[string]any{"userAssignedIdentities": map[string]any{
			"controlPlaneOperators":  map[string]any{"control-plane": controlPlane},
			"dataPlaneOperators":     map[string]any{"disk-csi-driver": armIdentityID(fmt.Sprintf("disk-%d", i))},
			"serviceManagedIdentity": service,
		}},
	}
	if v != "2024-06-10-preview" {
		platform["vnetIntegrationSubnetId"] = armNetworkID("virtualNetworks", fmt.Sprintf("vnet-%d/subnets/integration", i))
	}
	return map[string]any{
		"location": armLocation,
		"tags":     map[string]any{"api-version": v},
		"identity": map[string]any{"type": "UserAssigned", "userAssignedIdentities": map[string]any{controlPlane: map[string]any{}, service: map[string]any{}}},
		"properties": map[string]any{
			"version":  map[string]any{"id": "4.20", "channelGroup": "stable"},
			"dns":      map[string]any{"baseDomainPrefix": fmt.Sprintf("arm%d", i)},
			"platform": platform,
		},
	}
}

// controlPlaneNamespaceOf returns the namespace the control plane of an ARM cluster runs in on the
// management cluster: its HostedCluster's namespace (ocm-dev-<clusterID>, as exampleClusterUp finds it)
// and name (the DNS prefix) joined.
func controlPlaneNamespaceOf(t *testing.T, st *deliveryStack, armID string) string {
	t.Helper()
	parts := strings.Split(armID, "/")
	name := strings.ToLower(parts[len(parts)-1])
	out := st.server.mustKubectl(t, "get", "hcpclusters", "-A", "-o",
		`jsonpath={range .items[?(@.metadata.name=="`+name+`")]}{.status.clusterID} {.spec.dns.baseDomainPrefix}{end}`)
	clusterID, prefix, ok := strings.Cut(out, " ")
	if !ok || clusterID == "" {
		t.Fatalf("no placed HCPCluster %s: %q", name, out)
	}
	return hypershiftsim.ControlPlaneNamespace("ocm-dev-"+clusterID, prefix)
}

// breakglassCSR makes a key and a CSR for the customer break-glass user, as an ARM client does for
// requestAdminCredential in 2026-09-01-preview.
func breakglassCSR(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// withClientKey adds the client's own key to a kubeconfig the service returned without one.
func withClientKey(t *testing.T, kubeconfig []byte, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("the credential's kubeconfig does not load: %v\n%s", err, kubeconfig)
	}
	for _, user := range cfg.AuthInfos {
		if len(user.ClientKeyData) > 0 {
			t.Errorf("the kubeconfig of a CSR credential holds a key: the key never leaves the client")
		}
		user.ClientKeyData = keyPEM
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonValue(t *testing.T, raw []byte, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

func jsonString(t *testing.T, raw []byte, path ...string) string {
	t.Helper()
	s, _ := jsonValue(t, raw, path...).(string)
	return s
}

func jsonNumber(t *testing.T, raw []byte, path ...string) float64 {
	t.Helper()
	n, _ := jsonValue(t, raw, path...).(float64)
	return n
}
