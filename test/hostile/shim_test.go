package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
)

// armAPIVersions are the ARM api-versions the shim serves, oldest first.
var armAPIVersions = func() []string {
	versions := make([]string, len(conversion.APIVersions))
	for i, v := range conversion.APIVersions {
		versions[i] = string(v)
	}
	return versions
}()

const (
	armSub           = "6c2d8f0e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
	armTenant        = "7d3e9f1a-2b3c-4d5e-9f0a-1b2c3d4e5f6a"
	armLocation      = "eastus"
	armRG            = "hostile-rg"
	armTargetCluster = "target"
	armTargetPool    = "pool1"
	armTargetAuth    = "idp"
)

func armClusterPath(name string) string {
	return "/subscriptions/" + armSub + "/resourceGroups/" + armRG + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

func armNodePoolPath(cluster, pool string) string {
	return armClusterPath(cluster) + "/nodePools/" + pool
}

func armExternalAuthPath(cluster, auth string) string {
	return armClusterPath(cluster) + "/externalAuths/" + auth
}

func armResourceID(rg, kind, name string) string {
	return "/subscriptions/" + armSub + "/resourceGroups/" + rg + "/providers/" + kind + "/" + name
}

// armClusterBody is a valid cluster PUT body in api-version v, the i-th cluster's own network and DNS prefix.
func armClusterBody(v string, i int) map[string]any {
	identity := func(name string) string {
		return armResourceID("identities", "Microsoft.ManagedIdentity/userAssignedIdentities", fmt.Sprintf("%s-%d", name, i))
	}
	controlPlane, service := identity("cp"), identity("service")
	platform := map[string]any{
		"subnetId":               armResourceID("network", "Microsoft.Network/virtualNetworks", fmt.Sprintf("vnet-%d/subnets/workers", i)),
		"networkSecurityGroupId": armResourceID("network", "Microsoft.Network/networkSecurityGroups", fmt.Sprintf("nsg-%d", i)),
		"operatorsAuthentication": map[string]any{"userAssignedIdentities": map[string]any{
			"controlPlaneOperators":  map[string]any{"control-plane": controlPlane},
			"dataPlaneOperators":     map[string]any{"disk-csi-driver": identity("disk")},
			"serviceManagedIdentity": service,
		}},
	}
	if v != "2024-06-10-preview" {
		platform["vnetIntegrationSubnetId"] = armResourceID("network", "Microsoft.Network/virtualNetworks", fmt.Sprintf("vnet-%d/subnets/integration", i))
	}
	return map[string]any{
		"location": armLocation,
		"tags":     map[string]any{"api-version": v},
		"identity": map[string]any{"type": "UserAssigned", "userAssignedIdentities": map[string]any{controlPlane: map[string]any{}, service: map[string]any{}}},
		"properties": map[string]any{
			"version":  map[string]any{"id": "4.20", "channelGroup": "stable"},
			"dns":      map[string]any{"baseDomainPrefix": fmt.Sprintf("host%d", i)},
			"platform": platform,
		},
	}
}

func armNodePoolBody() map[string]any {
	return map[string]any{
		"location": armLocation,
		"properties": map[string]any{
			"version":  map[string]any{"id": "4.20.8", "channelGroup": "stable"},
			"platform": map[string]any{"vmSize": "Standard_D8s_v3", "subnetId": armResourceID("network", "Microsoft.Network/virtualNetworks", "vnet-0/subnets/workers")},
			"replicas": 2,
		},
	}
}

// armExternalAuthBody is a valid external auth: a confidential and a public client of an https issuer.
func armExternalAuthBody() map[string]any {
	return map[string]any{"properties": map[string]any{
		"issuer": map[string]any{"url": "https://login.microsoftonline.com/" + armTenant + "/v2.0", "audiences": []any{"console-app", "cli-app"}},
		"clients": []any{
			map[string]any{"component": map[string]any{"name": "console", "authClientNamespace": "openshift-console"}, "clientId": "console-app", "type": "Confidential"},
			map[string]any{"component": map[string]any{"name": "cli", "authClientNamespace": "openshift-console"}, "clientId": "cli-app", "type": "Public"},
		},
		"claim": map[string]any{"mappings": map[string]any{"username": map[string]any{"claim": "email"}}},
	}}
}

// armDo sends one request as ARM would and returns the answer's status and body.
func armDo(t *testing.T, client *http.Client, base, method, path string, body any) (int, []byte) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range armHeaders() {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// armHeaders are the headers ARM adds to what it forwards.
func armHeaders() http.Header {
	now := time.Now().UTC().Format(time.RFC3339)
	return http.Header{
		"Content-Type":                  {"application/json"},
		"X-Ms-Home-Tenant-Id":           {armTenant},
		"X-Ms-Client-Object-Id":         {"8e4f0a2b-3c4d-4e5f-8a1b-2c3d4e5f6a7b"},
		"X-Ms-Arm-Resource-System-Data": {fmt.Sprintf(`{"createdBy":"h@example.com","createdByType":"User","createdAt":%q}`, now)},
	}
}

func registerARMSubscription(t *testing.T, base string, client *http.Client) {
	t.Helper()
	status, body := armDo(t, client, base, http.MethodPut, "/subscriptions/"+armSub+"?api-version=2.0", map[string]any{
		"state": "Registered", "registrationDate": time.Now().UTC().Format(time.RFC1123),
		"properties": map[string]any{"tenantId": armTenant},
	})
	if status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("registering the subscription answered %d: %s", status, body)
	}
}

// createARMTargets creates the cluster and external auth the shim's probes update and patch. With its
// external auth in place, a create of another one is refused whatever its body.
func createARMTargets(t *testing.T, base string, client *http.Client) {
	t.Helper()
	v := armAPIVersions[len(armAPIVersions)-1]
	status, body := armDo(t, client, base, http.MethodPut, armClusterPath(armTargetCluster)+"?api-version="+v, armClusterBody(v, 0))
	if status != http.StatusCreated {
		t.Fatalf("creating the target cluster answered %d: %s", status, body)
	}
	status, body = armDo(t, client, base, http.MethodPut, armExternalAuthPath(armTargetCluster, armTargetAuth)+"?api-version="+v, armExternalAuthBody())
	if status != http.StatusCreated {
		t.Fatalf("creating the target external auth answered %d: %s", status, body)
	}
}

// shimProbes are the probes of the ARM shim.
func shimProbes() []probe {
	var probes []probe
	add := func(p probe) {
		h := armHeaders()
		for k, vs := range p.header {
			h[k] = vs
		}
		p.header = h
		probes = append(probes, p)
	}
	newest := armAPIVersions[len(armAPIVersions)-1]
	cluster := armClusterPath(armTargetCluster)

	// IDs in the path that no ARM resource can have.
	badSegments := []string{".", "..", "%25", "%2E%2E", "a%2Fb", "%00", strings.Repeat("x", 300), "%E2%80%AE", "a%20b", "a.", "%3Cscript%3E"}
	for _, seg := range badSegments {
		short := seg[:min(len(seg), 12)]
		paths := map[string]string{
			"subscription":          "/subscriptions/" + seg + "/resourceGroups/" + armRG + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/x",
			"resource group":        "/subscriptions/" + armSub + "/resourceGroups/" + seg + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/x",
			"cluster":               armClusterPath(seg),
			"node pool":             armNodePoolPath(armTargetCluster, seg),
			"external auth":         armExternalAuthPath(armTargetCluster, seg),
			"operation status":      "/subscriptions/" + armSub + "/providers/Microsoft.RedHatOpenShift/locations/" + armLocation + "/hcpOperationStatuses/" + seg,
			"operation result":      "/subscriptions/" + armSub + "/providers/Microsoft.RedHatOpenShift/locations/" + armLocation + "/hcpOperationResults/" + seg,
			"version":               "/subscriptions/" + armSub + "/providers/Microsoft.RedHatOpenShift/locations/" + armLocation + "/hcpOpenShiftVersions/" + seg,
			"location":              "/subscriptions/" + armSub + "/providers/Microsoft.RedHatOpenShift/locations/" + seg + "/hcpOpenShiftVersions",
			"subscription document": "/subscriptions/" + seg,
		}
		for what, path := range paths {
			apiVersion := newest
			if what == "subscription document" {
				apiVersion = "2.0"
			}
			add(probe{name: "GET " + what + " " + short, method: http.MethodGet, path: path + "?api-version=" + apiVersion})
			if what == "cluster" || what == "node pool" || what == "external auth" || what == "subscription" || what == "resource group" {
				add(probe{name: "PUT " + what + " " + short, method: http.MethodPut, path: path + "?api-version=" + newest,
					body: mustMarshal(armClusterBody(newest, 9))})
				add(probe{name: "DELETE " + what + " " + short, method: http.MethodDelete, path: path + "?api-version=" + newest})
			}
		}
	}

	// api-versions.
	for _, v := range []string{"", "bogus", "2.0", "2024-01-01", "2026-09-01", "2026-09-01-PREVIEW%00", strings.Repeat("9", 200)} {
		add(probe{name: "GET cluster api-version " + v[:min(len(v), 20)], method: http.MethodGet, path: cluster + "?api-version=" + v})
	}
	add(probe{name: "GET cluster api-version twice", method: http.MethodGet, path: cluster + "?api-version=bogus&api-version=" + newest, accept: notServerError})
	add(probe{name: "PUT subscription api-version of resources", method: http.MethodPut, path: "/subscriptions/" + armSub + "?api-version=" + newest,
		body: []byte(`{"state":"Registered"}`)})

	// Methods a route does not take.
	for _, m := range []string{http.MethodPost, "PROPFIND", http.MethodPut + "X"} {
		add(probe{name: m + " on a cluster", method: m, path: cluster + "?api-version=" + newest})
	}
	add(probe{name: "DELETE on a cluster list", method: http.MethodDelete, path: "/subscriptions/" + armSub + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters?api-version=" + newest})
	add(probe{name: "PUT on the operations list", method: http.MethodPut, path: "/providers/Microsoft.RedHatOpenShift/operations", body: []byte(`{}`)})

	// Bodies, in every api-version, on a new cluster, the target cluster (PUT and PATCH) and a node pool.
	for i, v := range armAPIVersions {
		fresh := armClusterPath(fmt.Sprintf("fresh-%d", i)) + "?api-version=" + v
		target := cluster + "?api-version=" + v
		pool := armNodePoolPath(armTargetCluster, "fresh") + "?api-version=" + v
		for _, b := range armRawBodies() {
			add(probe{name: v + " PUT cluster " + b.name, method: http.MethodPut, path: fresh, header: contentType(b.contentType), body: []byte(b.body)})
			add(probe{name: v + " PATCH cluster " + b.name, method: http.MethodPatch, path: target, header: contentType(b.contentType), body: []byte(b.body)})
			add(probe{name: v + " PUT node pool " + b.name, method: http.MethodPut, path: pool, header: contentType(b.contentType), body: []byte(b.body)})
		}
		// Each spoiled body creates a cluster of its own, with its own network, so that one the shim
		// accepts does not turn the next into an update.
		for j, s := range armClusterSpoilings() {
			body := armClusterBody(v, 100+100*i+j)
			s.change(body)
			add(probe{name: v + " PUT cluster " + s.name, method: http.MethodPut, body: mustMarshal(body), accept: s.accept,
				path: armClusterPath(fmt.Sprintf("spoiled-%d-%d", i, j)) + "?api-version=" + v})
		}
		for _, p := range armClusterPatches() {
			add(probe{name: v + " PATCH cluster " + p.name, method: http.MethodPatch, path: target, body: []byte(p.body)})
		}
		for j, s := range armNodePoolSpoilings() {
			body := armNodePoolBody()
			s.change(body)
			add(probe{name: v + " PUT node pool " + s.name, method: http.MethodPut, body: mustMarshal(body), accept: s.accept,
				path: armNodePoolPath(armTargetCluster, fmt.Sprintf("p%d-%d", i, j)) + "?api-version=" + v})
		}
		// External auths: spoiled bodies under new names (refused as invalid, or as a second external
		// auth of the cluster), raw bodies, and patches of the target's.
		targetAuth := armExternalAuthPath(armTargetCluster, armTargetAuth) + "?api-version=" + v
		for _, b := range armRawBodies() {
			add(probe{name: v + " PUT external auth " + b.name, method: http.MethodPut, path: armExternalAuthPath(armTargetCluster, "fresh") + "?api-version=" + v,
				header: contentType(b.contentType), body: []byte(b.body)})
			add(probe{name: v + " PATCH external auth " + b.name, method: http.MethodPatch, path: targetAuth, header: contentType(b.contentType), body: []byte(b.body)})
		}
		for j, s := range armExternalAuthSpoilings() {
			body := armExternalAuthBody()
			s.change(body)
			add(probe{name: v + " PUT external auth " + s.name, method: http.MethodPut, body: mustMarshal(body), accept: s.accept,
				path: armExternalAuthPath(armTargetCluster, fmt.Sprintf("e%d-%d", i, j)) + "?api-version=" + v})
		}
		for _, p := range armExternalAuthPatches() {
			add(probe{name: v + " PATCH external auth " + p.name, method: http.MethodPatch, path: targetAuth, body: []byte(p.body)})
		}
	}

	// Subscription documents, as ARM sends them (2.0).
	sub := "/subscriptions/" + armSub + "?api-version=2.0"
	for _, b := range armRawBodies() {
		add(probe{name: "PUT subscription " + b.name, method: http.MethodPut, path: sub, header: contentType(b.contentType), body: []byte(b.body)})
	}
	for _, b := range []struct{ name, body string }{
		{"state unknown", `{"state":"Exploded"}`}, {"state a number", `{"state":5}`},
		{"properties a string", `{"state":"Registered","properties":"x"}`},
		{"features not a list", `{"state":"Registered","properties":{"registeredFeatures":{}}}`},
		{"feature without a name", `{"state":"Registered","properties":{"registeredFeatures":[{"state":"Registered"}]}}`},
	} {
		add(probe{name: "PUT subscription " + b.name, method: http.MethodPut, path: sub, body: []byte(b.body)})
	}

	// Preflight.
	preflight := "/subscriptions/" + armSub + "/resourceGroups/" + armRG + "/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version=" + newest
	// A body nested too deep is refused as it is read, before preflight looks at it.
	add(probe{name: "POST preflight nested 10000 levels", method: http.MethodPost, path: preflight, body: []byte(`{"resources":` + deepJSON(10_000) + `}`)})
	// A deployment preflight cannot read is answered 200 with the error, as the public frontend answers
	// every content error of a preflight.
	for _, b := range []struct{ name, body string }{
		{"resources not a list", `{"resources":{}}`},
		{"2200 resources", `{"resources":[` + strings.TrimSuffix(strings.Repeat(preflightResource()+",", 2200), ",") + `]}`},
		{"truncated", `{"resources":[`},
	} {
		add(probe{name: "POST preflight " + b.name, method: http.MethodPost, path: preflight, body: []byte(b.body), accept: answeredOK})
	}
	// A resource preflight cannot read is skipped, as the public frontend skips it.
	for _, b := range []struct{ name, body string }{{"null", `null`}, {"resource a string", `{"resources":["x"]}`}} {
		add(probe{name: "POST preflight " + b.name, method: http.MethodPost, path: preflight, body: []byte(b.body), accept: notServerError})
	}
	for _, action := range []string{"requestAdminCredential", "revokeCredentials"} {
		add(probe{name: "POST " + action + " on a missing cluster", method: http.MethodPost,
			path: armClusterPath("missing") + "/" + action + "?api-version=" + newest})
		add(probe{name: "POST " + action + " with a garbage body", method: http.MethodPost,
			path: cluster + "/" + action + "?api-version=" + newest, body: []byte(`{"csr":` + deepJSON(10_000) + `}`)})
	}
	return probes
}

func preflightResource() string {
	raw := mustMarshal(map[string]any{"type": "Microsoft.RedHatOpenShift/hcpOpenShiftClusters", "name": "pf", "apiVersion": "2026-09-01-preview",
		"location": armLocation, "properties": map[string]any{}})
	return string(raw)
}

func contentType(ct string) http.Header {
	if ct == "" {
		return http.Header{"Content-Type": nil}
	}
	return http.Header{"Content-Type": {ct}}
}

func mustMarshal(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

func armRawBodies() []struct{ name, contentType, body string } {
	return []struct{ name, contentType, body string }{
		{"empty body", "application/json", ""},
		{"null", "application/json", "null"},
		{"array", "application/json", "[]"},
		{"string", "application/json", `"x"`},
		{"truncated", "application/json", `{"location":`},
		{"trailing garbage", "application/json", `{}}`},
		{"not UTF-8", "application/json", "{\"location\":\"\xff\xfe\"}"},
		{"nested 10000 levels", "application/json", `{"properties":` + deepJSON(10_000) + `}`},
		{"nested 101 levels", "application/json", `{"tags":{"a":` + deepJSON(100) + `}}`},
		{"plain text", "text/plain", "hello"},
		{"no content type", "", `{}`},
		{"body of 3.5 MiB", "application/json", `{"tags":{"a":"` + strings.Repeat("x", 3584<<10) + `"}}`},
		{"body of 5 MiB", "application/json", `{"tags":{"a":"` + strings.Repeat("x", 5<<20) + `"}}`},
		{"number 1e400", "application/json", `{"properties":{"replicas":1e400}}`},
	}
}

type armSpoiled struct {
	name   string
	change func(map[string]any)
	accept func(int) bool
}

func props(m map[string]any) map[string]any { return m["properties"].(map[string]any) }

func armClusterSpoilings() []armSpoiled {
	tags := func(n int, key, value string) map[string]any {
		t := map[string]any{}
		for i := range n {
			t[fmt.Sprintf("%s%d", key, i)] = value
		}
		return t
	}
	platform := func(m map[string]any) map[string]any { return props(m)["platform"].(map[string]any) }
	return []armSpoiled{
		{name: "no location", change: func(m map[string]any) { delete(m, "location") }},
		{name: "location of another region", change: func(m map[string]any) { m["location"] = "westeurope" }},
		{name: "location a number", change: func(m map[string]any) { m["location"] = 5 }},
		{name: "properties a string", change: func(m map[string]any) { m["properties"] = "x" }},
		{name: "properties null", change: func(m map[string]any) { m["properties"] = nil }},
		{name: "version id a number", change: func(m map[string]any) { props(m)["version"] = map[string]any{"id": 4.2} }},
		{name: "version id garbage", change: func(m map[string]any) { props(m)["version"] = map[string]any{"id": "../../x"} }},
		{name: "channel group unknown", change: func(m map[string]any) { props(m)["version"].(map[string]any)["channelGroup"] = "nightly!" }},
		{name: "subnet not a resource ID", change: func(m map[string]any) { platform(m)["subnetId"] = "subnet" }},
		{name: "subnet ID with dot dot", change: func(m map[string]any) {
			platform(m)["subnetId"] = "/subscriptions/" + armSub + "/resourceGroups/../providers/Microsoft.Network/virtualNetworks/v/subnets/s"
		}, accept: notServerError},
		{name: "subnet of the target cluster", change: func(m map[string]any) {
			platform(m)["subnetId"] = armResourceID("network", "Microsoft.Network/virtualNetworks", "vnet-0/subnets/workers")
		}},
		{name: "NSG a number", change: func(m map[string]any) { platform(m)["networkSecurityGroupId"] = 1 }},
		{name: "identity type unknown", change: func(m map[string]any) { m["identity"].(map[string]any)["type"] = "Magic" }},
		{name: "identity a list", change: func(m map[string]any) { m["identity"] = []any{} }},
		{name: "DNS prefix too long", change: func(m map[string]any) { props(m)["dns"] = map[string]any{"baseDomainPrefix": strings.Repeat("d", 100)} }},
		{name: "DNS prefix garbage", change: func(m map[string]any) { props(m)["dns"] = map[string]any{"baseDomainPrefix": "a..b%"} }},
		{name: "network pod CIDR garbage", change: func(m map[string]any) { props(m)["network"] = map[string]any{"podCidr": "10.0.0.0/99"} }},
		{name: "network host prefix a float", change: func(m map[string]any) { props(m)["network"] = map[string]any{"hostPrefix": 23.5} }},
		{name: "network host prefix huge", change: func(m map[string]any) { props(m)["network"] = map[string]any{"hostPrefix": 1e12} }},
		{name: "60 tags", change: func(m map[string]any) { m["tags"] = tags(60, "k", "v") }},
		{name: "tag value of 300 characters", change: func(m map[string]any) { m["tags"] = map[string]any{"k": strings.Repeat("v", 300)} }},
		{name: "tag name of 600 characters", change: func(m map[string]any) { m["tags"] = map[string]any{strings.Repeat("k", 600): "v"} }},
		{name: "tag name empty", change: func(m map[string]any) { m["tags"] = map[string]any{"": "v"} }},
		{name: "tag name with a slash", change: func(m map[string]any) { m["tags"] = map[string]any{"a/b": "v"} }},
		{name: "tag value a number", change: func(m map[string]any) { m["tags"] = map[string]any{"a": 1} }},
		{name: "50 tags of the longest", change: func(m map[string]any) { m["tags"] = tags(50, strings.Repeat("k", 500), strings.Repeat("v", 256)) },
			accept: notServerError},
		{name: "unknown property", change: func(m map[string]any) { props(m)["surprise"] = map[string]any{"a": 1} }, accept: notServerError},
		{name: "read-only provisioning state", change: func(m map[string]any) { props(m)["provisioningState"] = "Succeeded" }, accept: notServerError},
	}
}

func armClusterPatches() []struct{ name, body string } {
	return []struct{ name, body string }{
		{"version null", `{"properties":{"version":null}}`},
		{"version id null", `{"properties":{"version":{"id":null}}}`},
		{"subnet null", `{"properties":{"platform":{"subnetId":null}}}`},
		{"properties null", `{"properties":null}`},
		{"properties a number", `{"properties":7}`},
		{"tags a list", `{"tags":["a"]}`},
		{"60 tags", `{"tags":{` + strings.TrimPrefix(manyTags(60), ",") + `}}`},
		{"tag value of 300 characters", `{"tags":{"k":"` + strings.Repeat("v", 300) + `"}}`},
		{"location changed", `{"location":"westeurope"}`},
		{"node drain a float", `{"properties":{"nodeDrainTimeoutMinutes":10.5}}`},
		{"node drain 1e1", `{"properties":{"nodeDrainTimeoutMinutes":1e1}}`},
		{"node drain 10.0", `{"properties":{"nodeDrainTimeoutMinutes":10.0}}`},
		{"node drain a string", `{"properties":{"nodeDrainTimeoutMinutes":"10"}}`},
		{"immutable subnet changed", `{"properties":{"platform":{"subnetId":"` + armResourceID("network", "Microsoft.Network/virtualNetworks", "other/subnets/x") + `"}}}`},
		{"identity type unknown", `{"identity":{"type":"Magic"}}`},
	}
}

func manyTags(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`,"t%d":"v"`, i)
	}
	return strings.Join(parts, "")
}

func armNodePoolSpoilings() []armSpoiled {
	platform := func(m map[string]any) map[string]any { return props(m)["platform"].(map[string]any) }
	return []armSpoiled{
		{name: "replicas 10.0", change: func(m map[string]any) { props(m)["replicas"] = json.Number("10.0") }},
		{name: "replicas 1e1", change: func(m map[string]any) { props(m)["replicas"] = json.Number("1e1") }},
		{name: "replicas negative", change: func(m map[string]any) { props(m)["replicas"] = -3 }},
		{name: "replicas past int32", change: func(m map[string]any) { props(m)["replicas"] = json.Number("4294967296") }},
		{name: "replicas a string", change: func(m map[string]any) { props(m)["replicas"] = "3" }},
		{name: "replicas and autoscaling", change: func(m map[string]any) { props(m)["autoScaling"] = map[string]any{"min": 5, "max": 1} }},
		{name: "VM size garbage", change: func(m map[string]any) { platform(m)["vmSize"] = "../x" }},
		{name: "OS disk tiny", change: func(m map[string]any) { platform(m)["osDisk"] = map[string]any{"sizeGiB": 1} }},
		{name: "OS disk a float", change: func(m map[string]any) { platform(m)["osDisk"] = map[string]any{"sizeGiB": 64.5} }},
		{name: "labels garbage", change: func(m map[string]any) { props(m)["labels"] = map[string]any{"a b": "c d"} }},
		{name: "taints garbage", change: func(m map[string]any) { props(m)["taints"] = []any{map[string]any{"key": "", "effect": "Boom"}} }},
		{name: "version of the future", change: func(m map[string]any) { props(m)["version"] = map[string]any{"id": "9.99.0"} }},
		{name: "60 tags", change: func(m map[string]any) {
			t := map[string]any{}
			for i := range 60 {
				t[fmt.Sprint("t", i)] = "v"
			}
			m["tags"] = t
		}},
	}
}

func armExternalAuthSpoilings() []armSpoiled {
	issuer := func(m map[string]any) map[string]any { return props(m)["issuer"].(map[string]any) }
	clients := func(m map[string]any) []any { return props(m)["clients"].([]any) }
	username := func(m map[string]any) map[string]any {
		return props(m)["claim"].(map[string]any)["mappings"].(map[string]any)["username"].(map[string]any)
	}
	return []armSpoiled{
		{name: "valid, a second of the cluster", change: func(map[string]any) {}},
		{name: "audiences empty", change: func(m map[string]any) { issuer(m)["audiences"] = []any{} }},
		{name: "11 audiences", change: func(m map[string]any) {
			issuer(m)["audiences"] = []any{"console-app", "cli-app", "3", "4", "5", "6", "7", "8", "9", "10", "11"}
		}},
		{name: "issuer over http", change: func(m map[string]any) { issuer(m)["url"] = "http://issuer.example.com" }},
		{name: "issuer not a URL", change: func(m map[string]any) { issuer(m)["url"] = "%zz" }},
		{name: "issuer a string", change: func(m map[string]any) { props(m)["issuer"] = "https://x" }},
		{name: "CA garbage", change: func(m map[string]any) { issuer(m)["ca"] = "-----BEGIN CERTIFICATE-----\nx\n" }},
		{name: "duplicate components", change: func(m map[string]any) {
			clients(m)[1].(map[string]any)["component"] = clients(m)[0].(map[string]any)["component"]
		}},
		{name: "client ID not an audience", change: func(m map[string]any) { clients(m)[0].(map[string]any)["clientId"] = "stranger" }},
		{name: "client type unknown", change: func(m map[string]any) { clients(m)[0].(map[string]any)["type"] = "Secret" }},
		{name: "clients not a list", change: func(m map[string]any) { props(m)["clients"] = map[string]any{} }},
		{name: "21 clients", change: func(m map[string]any) {
			var many []any
			for i := range 21 {
				many = append(many, map[string]any{"component": map[string]any{"name": fmt.Sprint("c", i), "authClientNamespace": "ns"},
					"clientId": "console-app", "type": "Public"})
			}
			props(m)["clients"] = many
		}},
		{name: "prefix without the Prefix policy", change: func(m map[string]any) { username(m)["prefix"] = "p:" }},
		{name: "Prefix policy without a prefix", change: func(m map[string]any) { username(m)["prefixPolicy"] = "Prefix" }},
		{name: "prefix policy unknown", change: func(m map[string]any) { username(m)["prefixPolicy"] = "Sometimes" }},
		{name: "username claim of 300 characters", change: func(m map[string]any) { username(m)["claim"] = strings.Repeat("c", 300) }},
		{name: "claim null", change: func(m map[string]any) { props(m)["claim"] = nil }},
		{name: "required claim empty", change: func(m map[string]any) {
			props(m)["claim"].(map[string]any)["validationRules"] = []any{map[string]any{"requiredClaim": map[string]any{}}}
		}},
		{name: "read-only state", change: func(m map[string]any) {
			props(m)["provisioningState"] = "Succeeded"
			props(m)["condition"] = map[string]any{"type": "Available", "status": "True"}
		}},
	}
}

func armExternalAuthPatches() []struct{ name, body string } {
	return []struct{ name, body string }{
		{"issuer null", `{"properties":{"issuer":null}}`},
		{"audiences null", `{"properties":{"issuer":{"audiences":null}}}`},
		{"audiences empty", `{"properties":{"issuer":{"audiences":[]}}}`},
		{"username claim null", `{"properties":{"claim":{"mappings":{"username":{"claim":null}}}}}`},
		{"clients a string", `{"properties":{"clients":"x"}}`},
		{"issuer over http", `{"properties":{"issuer":{"url":"http://issuer.example.com"}}}`},
		{"audiences of numbers", `{"properties":{"issuer":{"audiences":[1,2]}}}`},
	}
}
