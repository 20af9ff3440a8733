package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/aro-hcp/hcp-apiserver/test/armschema"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// armExternalAuthBody is an external auth with a confidential client (the console, whose secret the
// customer makes in the hosted cluster) and a public one (the CLI), both audiences of the issuer.
func armExternalAuthBody() map[string]any {
	return map[string]any{"properties": map[string]any{
		"issuer": map[string]any{"url": "https://login.microsoftonline.com/" + armTenant + "/v2.0", "audiences": []any{"console-app", "cli-app"}},
		"clients": []any{
			map[string]any{"component": map[string]any{"name": "console", "authClientNamespace": "openshift-console"},
				"clientId": "console-app", "type": "Confidential"},
			map[string]any{"component": map[string]any{"name": "cli", "authClientNamespace": "openshift-console"},
				"clientId": "cli-app", "extraScopes": []any{"email"}, "type": "Public"},
		},
		"claim": map[string]any{
			"mappings": map[string]any{
				"username": map[string]any{"claim": "email", "prefixPolicy": "NoPrefix"},
				"groups":   map[string]any{"claim": "groups", "prefix": "entra:"},
			},
			"validationRules": []any{map[string]any{"type": "RequiredClaim", "requiredClaim": map[string]any{"claim": "tid", "requiredValue": armTenant}}},
		},
	}}
}

// TestARMExternalAuths drives the shim's externalAuths as ARM does, with azcore's pipeline and
// poller, against hcp-apiserver, a management cluster and the HyperShift simulator. In each
// api-version at once, on a cluster of its own: an invalid body is refused with every mistake in one
// CloudError at ARM's paths; an external auth with a confidential and a public client is created and
// its operation polled to the end (the provider then waits for the console's client secret, which
// the customer makes in the hosted cluster: TestExternalAuthSignsInThroughTheHostedCluster covers
// that step, so the state is AwaitingSecret or Succeeded, and the state names the secret); a second
// one is refused with the API's reason; it is read, listed a page at a time, patched and deleted,
// each operation polled to the end. Every body is validated against the version's OpenAPI document.
func TestARMExternalAuths(t *testing.T) {
	armschema.Dir(t)
	st := startDeliveryStack(t, hypershiftsim.Options{})
	shim := framework.StartARMShim(t, st.server.Kubeconfig, armLocation)
	c := newARMClient(t, shim)
	c.mustDo(t, http.MethodPut, "/subscriptions/"+armSubscription, "2.0", map[string]any{
		"state": "Registered", "registrationDate": time.Now().UTC().Format(time.RFC1123),
		"properties": map[string]any{"tenantId": armTenant},
	}, http.StatusOK)

	// The four api-versions at once: they wait on the management cluster, not on the CPU, and go
	// test's -parallel would run two at a time.
	var versions sync.WaitGroup
	for i, v := range armAPIVersions {
		versions.Go(func() {
			t.Run(v, func(t *testing.T) { armExternalAuthLifecycle(t, c, v, i) })
		})
	}
	versions.Wait()
}

func armExternalAuthLifecycle(t *testing.T, c *armClient, v string, i int) {
	cluster := armClusterID("ARM-EA-RG", fmt.Sprintf("EA-Cluster-%d", i))
	resp := c.mustDo(t, http.MethodPut, cluster, v, armClusterBody(v, i), http.StatusCreated)
	if got := jsonString(t, pollToEnd(t, c, resp, runtime.FinalStateViaAzureAsyncOp), "properties", "provisioningState"); got != "Succeeded" {
		t.Fatalf("the cluster ended %s, want Succeeded", got)
	}
	auth := cluster + "/externalAuths/Entra"

	// Every mistake of a body at once, at its ARM path.
	bad := armExternalAuthBody()
	props := bad["properties"].(map[string]any)
	props["issuer"] = map[string]any{"url": "http://login.example.com/tenant", "audiences": []any{}}
	clients := props["clients"].([]any)
	clients[1].(map[string]any)["component"] = map[string]any{"name": "console", "authClientNamespace": "openshift-console"}
	props["claim"].(map[string]any)["mappings"].(map[string]any)["username"] = map[string]any{"claim": "email", "prefix": "entra:"}
	resp, raw := c.do(t, http.MethodPut, auth, v, bad)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an invalid external auth answered %d:\n%s", resp.StatusCode, raw)
	}
	checkDetailTargets(t, raw, []string{
		"properties.issuer.url",                     // http, not https
		"properties.issuer.audiences",               // empty
		"properties.clients[1].component",           // the console twice
		"properties.clients[0].clientId",            // not among the (no) audiences
		"properties.clients[1].clientId",            //
		"properties.claim.mappings.username.prefix", // without prefixPolicy Prefix
	})
	c.mustDo(t, http.MethodGet, auth, v, nil, http.StatusNotFound)

	resp = c.mustDo(t, http.MethodPut, auth, v, armExternalAuthBody(), http.StatusCreated)
	if resp.Header.Get("Azure-AsyncOperation") == "" || resp.Header.Get("Location") != "" {
		t.Errorf("the PUT answered Azure-AsyncOperation %q and Location %q; a PUT has only Azure-AsyncOperation",
			resp.Header.Get("Azure-AsyncOperation"), resp.Header.Get("Location"))
	}
	created := pollToEnd(t, c, resp, runtime.FinalStateViaAzureAsyncOp)
	checkAwaitingOrSucceeded(t, v, created)

	// One external auth per cluster: the API's reason, in ARM's terms.
	resp, raw = c.do(t, http.MethodPut, cluster+"/externalAuths/Okta", v, armExternalAuthBody())
	if resp.StatusCode != http.StatusConflict || jsonString(t, raw, "error", "code") != "Conflict" ||
		!strings.Contains(jsonString(t, raw, "error", "message"), "a cluster can have one external auth only") ||
		!strings.Contains(jsonString(t, raw, "error", "message"), auth) {
		t.Errorf("a second external auth answered %d, want 409 naming %s and the rule:\n%s", resp.StatusCode, auth, raw)
	}

	got := c.getJSON(t, strings.ToLower(auth), v)
	if jsonString(t, got, "id") != auth || jsonString(t, got, "name") != "Entra" ||
		jsonString(t, got, "type") != "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths" {
		t.Errorf("GET: id, name and type are not as ARM spelled them at create:\n%s", got)
	}
	if clients, _ := jsonValue(t, got, "properties", "clients").([]any); len(clients) != 2 {
		t.Errorf("GET: want both clients:\n%s", got)
	}

	// A cluster has one external auth, so its list is one item; listed a page of one at a time it
	// holds this cluster's only, though the resource group's three other clusters have theirs (the
	// list selects on the cluster), and each page's nextLink is followed to the end.
	if listed := c.listAll(t, cluster+"/externalAuths", v, 1); !slices.Equal(listed, []string{auth}) {
		t.Errorf("the cluster lists external auths %v, want only %s", listed, auth)
	}

	resp = c.mustDo(t, http.MethodPatch, auth, v, map[string]any{"properties": map[string]any{"claim": map[string]any{"mappings": map[string]any{
		"groups": map[string]any{"prefix": "aad:"},
	}}}}, http.StatusAccepted)
	if resp.Header.Get("Location") == "" || resp.Header.Get("Azure-AsyncOperation") == "" {
		t.Errorf("the PATCH answered without Location or Azure-AsyncOperation: %v", resp.Header)
	}
	patched := pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
	if err := armschema.Validate(t, v, "ExternalAuth", patched); err != nil {
		t.Errorf("the PATCH's result is not an ExternalAuth of %s: %v\n%s", v, err, patched)
	}
	checkAwaitingOrSucceeded(t, v, patched)
	got = c.getJSON(t, auth, v)
	if p := jsonString(t, got, "properties", "claim", "mappings", "groups", "prefix"); p != "aad:" ||
		jsonString(t, got, "properties", "claim", "mappings", "groups", "claim") != "groups" {
		t.Errorf("after the PATCH the groups mapping is not the merge of both:\n%s", got)
	}

	resp = c.mustDo(t, http.MethodDelete, auth, v, nil, http.StatusAccepted)
	if resp.Header.Get("Location") == "" || resp.Header.Get("Azure-AsyncOperation") == "" {
		t.Errorf("the DELETE answered without Location or Azure-AsyncOperation: %v", resp.Header)
	}
	pollToEnd(t, c, resp, runtime.FinalStateViaLocation)
	c.mustDo(t, http.MethodGet, auth, v, nil, http.StatusNotFound)
	c.mustDo(t, http.MethodDelete, auth, v, nil, http.StatusNoContent)
	if listed := c.listAll(t, cluster+"/externalAuths", v, 0); len(listed) != 0 {
		t.Errorf("external auths left after the delete: %v", listed)
	}
}

// checkAwaitingOrSucceeded checks an external auth's state once its operation ended: delivered, and
// waiting for the console's secret or past it. While it waits, its state names the secret and where
// to make it: in condition before 2026-06-30-preview, in status.conditions from it.
func checkAwaitingOrSucceeded(t *testing.T, v string, body []byte) {
	t.Helper()
	state := jsonString(t, body, "properties", "provisioningState")
	if state != "AwaitingSecret" && state != "Succeeded" {
		t.Fatalf("the external auth ended %s, want AwaitingSecret or Succeeded:\n%s", state, body)
	}
	t.Logf("the operation ended with the external auth %s", state)
	newer := v >= "2026-06-30-preview"
	if has := jsonValue(t, body, "properties", "status") != nil; has != newer {
		t.Errorf("%s: properties.status present = %v:\n%s", v, has, body)
	}
	if has := jsonValue(t, body, "properties", "condition") != nil; has == newer {
		t.Errorf("%s: properties.condition present = %v:\n%s", v, has, body)
	}
	if state != "AwaitingSecret" {
		return
	}
	var messages []string
	if newer {
		conditions, _ := jsonValue(t, body, "properties", "status", "conditions").([]any)
		for _, c := range conditions {
			m, _ := c.(map[string]any)["message"].(string)
			messages = append(messages, m)
		}
	} else {
		messages = append(messages, jsonString(t, body, "properties", "condition", "message"))
	}
	if !slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, "openshift-config") }) {
		t.Errorf("%s: the state of an external auth awaiting its secret does not say where to make it:\n%s", v, body)
	}
}

// checkDetailTargets checks that a 400 is one MultipleErrorsOccurred whose details are each an
// InvalidRequestContent at an ARM path, and that they include every target wanted.
func checkDetailTargets(t *testing.T, raw []byte, want []string) {
	t.Helper()
	var ce struct {
		Error struct {
			Code    string
			Details []struct{ Code, Message, Target string }
		}
	}
	if err := json.Unmarshal(raw, &ce); err != nil || ce.Error.Code != "MultipleErrorsOccurred" {
		t.Fatalf("want one MultipleErrorsOccurred:\n%s", raw)
	}
	var targets []string
	for _, d := range ce.Error.Details {
		targets = append(targets, d.Target)
		if d.Code != "InvalidRequestContent" || !strings.HasPrefix(d.Target, "properties.") || strings.Contains(d.Message, "spec.") {
			t.Errorf("detail %+v is not an InvalidRequestContent at an ARM path in ARM's terms", d)
		}
	}
	for _, w := range want {
		if !slices.Contains(targets, w) {
			t.Errorf("no detail at %s among %v:\n%s", w, targets, raw)
		}
	}
}
