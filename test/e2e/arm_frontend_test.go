package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/google/uuid"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/armschema"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/hypershiftsim"
)

// The request sequences of TestARMFrontendSequences, as the public ARO HCP frontend answers them
// (github.com/Azure/ARO-HCP: frontend/, internal/validation, internal/admission): what it accepts is
// brought to Succeeded, what it refuses is refused with its codes, messages and targets.

// sequence is one scenario, replayed in every api-version with a subscription and cluster of its own,
// or on the api-version's shared cluster.
type sequence struct {
	name string
	// onBase runs the steps on the api-version's shared cluster, which is Succeeded, in its subscription.
	onBase bool
	// unregistered leaves the sequence's subscription unknown to the service.
	unregistered bool
	// versions limits the sequence to some api-versions; nil is all.
	versions []string
	steps    []step
}

// step is one request and what it must answer.
type step struct {
	method string
	// path is under the sequence's cluster ("" is the cluster itself, "/nodePools/np1" one of its pools);
	// sub is the sequence's subscription, as ARM's lifecycle notifications address it (api-version 2.0);
	// one starting with /subscriptions is used as it is.
	path   string
	body   func(r *seqRun) any
	header map[string]string
	// replica is the shim the request goes to: 0 or 1, two replicas on one hcp-apiserver.
	replica int
	status  int
	// errs are the CloudError's details: one is the error itself, several are MultipleErrorsOccurred's.
	// A message starting with "~" is a prefix of the message; the rest are the whole message.
	errs []detail
	// poll follows the operation the answer starts to its end, which must be Succeeded.
	poll bool
	// wait waits for the cluster's provisioningState to be this.
	wait  string
	check func(t *testing.T, r *seqRun, resp *http.Response, body []byte)
}

type detail struct{ code, message, target string }

// seqRun is a sequence being replayed in one api-version.
type seqRun struct {
	t       *testing.T
	v       string
	sub     string
	rg      string
	name    string
	cluster string
	shims   [2]*armClient
	st      *deliveryStack
	notify  *notifications
}

func (r *seqRun) subnet() string {
	return "/subscriptions/" + r.sub + "/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/" + r.name
}

func (r *seqRun) nsg() string {
	return "/subscriptions/" + r.sub + "/resourceGroups/net-rg/providers/Microsoft.Network/networkSecurityGroups/" + r.name
}

// minimal is the smallest cluster body the frontend accepts: identity without identities, no operator
// identities, no DNS prefix.
func (r *seqRun) minimal() map[string]any {
	return map[string]any{
		"location": armLocation,
		"identity": map[string]any{"type": "UserAssigned", "userAssignedIdentities": map[string]any{}},
		"properties": map[string]any{
			"version":  map[string]any{"id": "4.20"},
			"dns":      map[string]any{},
			"platform": map[string]any{"subnetId": r.subnet(), "networkSecurityGroupId": r.nsg()},
		},
	}
}

// minimalWith is minimal with the value at each dotted path set (nil removes it).
func minimalWith(kv ...any) func(r *seqRun) any {
	return func(r *seqRun) any { return withValues(r.minimal(), kv...) }
}

func withValues(body map[string]any, kv ...any) map[string]any {
	for i := 0; i+1 < len(kv); i += 2 {
		setDotted(body, kv[i].(string), kv[i+1])
	}
	return body
}

func setDotted(m map[string]any, path string, value any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	if value == nil {
		delete(m, parts[len(parts)-1])
		return
	}
	m[parts[len(parts)-1]] = value
}

// current is the cluster as a GET in the run's api-version shows it, with the value at each dotted path
// set: a PUT of it changes only those.
func current(kv ...any) func(r *seqRun) any {
	return func(r *seqRun) any {
		var body map[string]any
		if err := json.Unmarshal(r.shims[0].getJSON(r.t, r.cluster, r.v), &body); err != nil {
			r.t.Fatalf("the cluster's GET: %v", err)
		}
		for _, readOnly := range []string{"id", "name", "type", "systemData"} {
			delete(body, readOnly)
		}
		return withValues(body, kv...)
	}
}

func pool(kv ...any) func(r *seqRun) any {
	return func(r *seqRun) any {
		return withValues(map[string]any{
			"location": armLocation,
			"properties": map[string]any{
				"version":  map[string]any{"id": "4.20.8", "channelGroup": "stable"},
				"platform": map[string]any{"vmSize": "Standard_D8s_v3"},
				"replicas": 2,
			},
		}, kv...)
	}
}

// externalAuth is armExternalAuthBody with the value at each dotted path set.
func externalAuth(kv ...any) func(r *seqRun) any {
	return func(r *seqRun) any { return withValues(armExternalAuthBody(), kv...) }
}

func subscriptionState(state string) func(r *seqRun) any {
	return func(r *seqRun) any {
		return map[string]any{"state": state, "registrationDate": time.Now().UTC().Format(time.RFC1123),
			"properties": map[string]any{"tenantId": armTenant}}
	}
}

func invalid(target, message string) detail { return detail{"InvalidRequestContent", message, target} }

var immutableNetwork = []detail{
	invalid("properties.network", "Forbidden: field is immutable"),
}

func frontendSequences() []sequence {
	created := step{method: http.MethodPut, body: func(r *seqRun) any { return r.minimal() }, status: http.StatusCreated}
	succeeded := created
	succeeded.poll = true
	refused := func(body func(r *seqRun) any, errs ...detail) step {
		return step{method: http.MethodPut, body: body, status: http.StatusBadRequest, errs: errs}
	}
	conflict := func(method, path, message string) step {
		return step{method: method, path: path, status: http.StatusConflict, errs: []detail{{"Conflict", message, "{cluster}"}}}
	}
	network := func(pod, service, machine string, hostPrefix int) func(r *seqRun) any {
		return minimalWith("properties.network", map[string]any{"podCidr": pod, "serviceCidr": service, "machineCidr": machine, "hostPrefix": hostPrefix})
	}
	const pod, service, machine = "10.128.0.0/14", "172.30.0.0/16", "10.0.0.0/16"
	stateRefused := func(status int, message string) step {
		return step{method: http.MethodPut, body: func(r *seqRun) any { return r.minimal() }, replica: 1, status: status,
			errs: []detail{{"InvalidSubscriptionState", message, ""}}}
	}
	put := func(path string, body func(r *seqRun) any, status int, errs ...detail) step {
		return step{method: http.MethodPut, path: path, body: body, status: status, errs: errs}
	}

	return []sequence{
		// Accepted, and brought to Succeeded: an accepted create never fails later for what the PUT could know.
		{name: "minimal body", steps: []step{succeeded, {method: http.MethodGet, status: http.StatusOK,
			check: func(t *testing.T, r *seqRun, _ *http.Response, body []byte) {
				if got := jsonString(t, body, "properties", "dns", "baseDomainPrefix"); got != r.name {
					t.Errorf("derived DNS prefix %q, want the cluster's name %q", got, r.name)
				}
			}}}},
		{name: "minimal body with a name longer than a DNS prefix", steps: []step{
			{method: http.MethodPut, path: "/../long-cluster-name-of-thirty-six-chars", body: func(r *seqRun) any { return r.minimal() },
				status: http.StatusCreated, poll: true, check: func(t *testing.T, r *seqRun, _ *http.Response, body []byte) {
					prefix := jsonString(t, body, "properties", "dns", "baseDomainPrefix")
					if len(prefix) > 15 || !regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`).MatchString(prefix) {
						t.Errorf("derived DNS prefix %q is not a DNS label of at most 15 characters", prefix)
					}
				}}}},
		{name: "custom network", steps: []step{{method: http.MethodPut, body: network("10.132.0.0/14", "172.31.0.0/16", "10.1.0.0/16", 24),
			status: http.StatusCreated, poll: true}}},
		{name: "private API and autoscaling", steps: []step{{method: http.MethodPut, body: minimalWith("properties.api.visibility", "Private",
			"properties.autoscaling", map[string]any{"maxNodesTotal": 50}), status: http.StatusCreated, poll: true}}},
		{name: "PUT that changes nothing", steps: []step{succeeded,
			{method: http.MethodPut, body: func(r *seqRun) any { return r.minimal() }, status: http.StatusOK, poll: true}}},
		{name: "PATCH of tags", steps: []step{succeeded,
			{method: http.MethodPatch, body: func(*seqRun) any { return map[string]any{"tags": map[string]any{"team": "a"}} }, status: http.StatusAccepted, poll: true}}},

		// Field errors: every one, at its ARM path, in apimachinery's words.
		{name: "host prefix below 23", steps: []step{refused(network(pod, service, machine, 22),
			invalid("properties.network.hostPrefix", "Invalid value: 22: must be greater than or equal to 23"))}},
		{name: "host prefix above 26", steps: []step{refused(network(pod, service, machine, 27),
			invalid("properties.network.hostPrefix", "Invalid value: 27: must be less than or equal to 26"))}},
		{name: "machine and service CIDRs overlap", steps: []step{refused(network(pod, service, "172.30.0.0/16", 23),
			invalid("properties.network", `Invalid value: "172.30.0.0/16": machine CIDR '172.30.0.0/16' and service CIDR '172.30.0.0/16' overlap`))}},
		{name: "machine and pod CIDRs overlap", steps: []step{refused(network(pod, service, "10.128.0.0/16", 23),
			invalid("properties.network", `Invalid value: "10.128.0.0/16": machine CIDR '10.128.0.0/16' and pod CIDR '10.128.0.0/14' overlap`))}},
		{name: "service and pod CIDRs overlap", steps: []step{refused(network(pod, "10.130.0.0/16", machine, 23),
			invalid("properties.network", `Invalid value: "10.130.0.0/16": service CIDR '10.130.0.0/16' and pod CIDR '10.128.0.0/14' overlap`))}},
		{name: "two errors in one request", steps: []step{refused(network(pod, service, "172.30.0.0/16", 22),
			invalid("properties.network", `Invalid value: "172.30.0.0/16": machine CIDR '172.30.0.0/16' and service CIDR '172.30.0.0/16' overlap`),
			invalid("properties.network.hostPrefix", "Invalid value: 22: must be greater than or equal to 23"))}},
		{name: "subnet of another subscription", steps: []step{refused(func(r *seqRun) any {
			return withValues(r.minimal(), "properties.platform.subnetId", strings.Replace(r.subnet(), r.sub, armSubscription, 1))
		}, detail{"InvalidRequestContent", "~Invalid value: ", "properties.platform.subnetId"})}},
		{name: "managed resource group is the cluster's", steps: []step{refused(func(r *seqRun) any {
			return withValues(r.minimal(), "properties.platform.managedResourceGroup", r.rg)
		}, detail{"InvalidRequestContent", "{mrg-is-rg}", "properties.platform.managedResourceGroup"})}},
		{name: "subnet in the managed resource group", steps: []step{refused(minimalWith("properties.platform.managedResourceGroup", "net-rg"),
			invalid("properties.platform.subnetId", "{subnet-in-mrg}"))}},
		{name: "no subnet", steps: []step{refused(minimalWith("properties.platform.subnetId", nil),
			invalid("properties.platform.subnetId", "~Required value"))}},
		{name: "no network security group", steps: []step{refused(minimalWith("properties.platform.networkSecurityGroupId", nil),
			invalid("properties.platform.networkSecurityGroupId", "~Required value"))}},
		{name: "no version", steps: []step{refused(minimalWith("properties.version.id", nil),
			invalid("properties.version.id", "~Required value"))}},
		{name: "version with a patch", steps: []step{refused(minimalWith("properties.version.id", "4.20.1"),
			invalid("properties.version.id", `~Invalid value: "4.20.1": `))}},
		{name: "unknown channel group", steps: []step{refused(minimalWith("properties.version.channelGroup", "bogus"),
			invalid("properties.version.channelGroup", `~Unsupported value: "bogus": supported values: "stable"`))}},
		{name: "DNS prefix not a DNS label", steps: []step{refused(minimalWith("properties.dns.baseDomainPrefix", "Bad_Prefix"),
			invalid("properties.dns.baseDomainPrefix", `~Invalid value: "Bad_Prefix": `))}},
		{name: "DNS prefix too long", steps: []step{refused(minimalWith("properties.dns.baseDomainPrefix", "sixteen-letters1"),
			invalid("properties.dns.baseDomainPrefix", "~Too long: may not be more than 15"))}},
		{name: "unknown API visibility", steps: []step{refused(minimalWith("properties.api.visibility", "Sideways"),
			invalid("properties.api.visibility", `~Unsupported value: "Sideways": supported values: "Public", "Private"`))}},

		// Create-only fields: the field and each immutable parent.
		{name: "pod CIDR changed", onBase: true, steps: []step{refused(current("properties.network.podCidr", "10.136.0.0/14"),
			append(immutableNetwork, invalid("properties.network.podCidr", "Forbidden: field is immutable"))...)}},
		{name: "host prefix changed", onBase: true, steps: []step{refused(current("properties.network.hostPrefix", 25),
			append(immutableNetwork, invalid("properties.network.hostPrefix", "Forbidden: field is immutable"))...)}},
		{name: "subnet changed", onBase: true, steps: []step{refused(func(r *seqRun) any {
			return current("properties.platform.subnetId", r.subnet()+"-other")(r)
		}, invalid("properties.platform", "Forbidden: field is immutable"), invalid("properties.platform.subnetId", "Forbidden: field is immutable"))}},
		{name: "DNS prefix changed", onBase: true, steps: []step{refused(current("properties.dns.baseDomainPrefix", "other"),
			invalid("properties.dns.baseDomainPrefix", "Forbidden: field is immutable"))}},
		{name: "API visibility changed", onBase: true, steps: []step{refused(current("properties.api.visibility", "Private"),
			invalid("properties.api.visibility", "Forbidden: field is immutable"))}},

		// Node pools, on a Succeeded cluster.
		{name: "node pool accepted and deleted", onBase: true, steps: []step{
			{method: http.MethodPut, path: "/nodePools/np1", body: pool(), status: http.StatusCreated, poll: true},
			{method: http.MethodDelete, path: "/nodePools/np1", status: http.StatusAccepted, poll: true},
		}},
		{name: "node pool autoscaled", onBase: true, steps: []step{
			{method: http.MethodPut, path: "/nodePools/np2", body: pool("properties.replicas", 0, "properties.autoScaling", map[string]any{"min": 1, "max": 3}),
				status: http.StatusCreated, poll: true},
		}},
		{name: "node pool with replicas and autoscaling", onBase: true, steps: []step{put("/nodePools/bad1",
			pool("properties.autoScaling", map[string]any{"min": 1, "max": 3}), http.StatusBadRequest,
			invalid("properties.replicas", "Invalid value: 2: must be equal to 0"))}},
		{name: "node pool autoscaling max below min", onBase: true, steps: []step{put("/nodePools/bad2",
			pool("properties.replicas", nil, "properties.autoScaling", map[string]any{"min": 3, "max": 2}), http.StatusBadRequest,
			invalid("properties.autoScaling.max", "Invalid value: 2: must be greater than or equal to 3"))}},
		{name: "node pool of 201 nodes", onBase: true, steps: []step{put("/nodePools/bad3", pool("properties.replicas", 201), http.StatusBadRequest,
			invalid("properties.replicas", "Invalid value: 201: must be less than or equal to 200"))}},
		{name: "node pool OS disk below 64 GiB", onBase: true, versions: armAPIVersions[1:], steps: []step{put("/nodePools/bad4",
			pool("properties.platform.osDisk", map[string]any{"sizeGiB": 63}), http.StatusBadRequest,
			invalid("properties.platform.osDisk.sizeGiB", "Invalid value: 63: must be greater than or equal to 64"))}},
		{name: "node pool without a VM size", onBase: true, steps: []step{put("/nodePools/bad5", pool("properties.platform.vmSize", nil),
			http.StatusBadRequest, invalid("properties.platform.vmSize", "~Required value"))}},
		{name: "node pool of another channel group", onBase: true, steps: []step{put("/nodePools/bad6",
			pool("properties.version", map[string]any{"channelGroup": "fast"}), http.StatusBadRequest,
			invalid("properties.version.channelGroup", `Invalid value: "fast": must be the same as control plane channel group 'stable'`))}},
		{name: "node pool newer than its control plane", onBase: true, steps: []step{put("/nodePools/bad7",
			pool("properties.version.id", "4.21.2"), http.StatusBadRequest, invalid("properties.version.id", `~Invalid value: "4.21.2": `))}},
		// External auths, on a Succeeded cluster: the one valid create of the base cluster, since a cluster
		// has one.
		// Only its public client: no secret to wait for, so the create ends Succeeded.
		{name: "external auth accepted and deleted", onBase: true, steps: []step{
			{method: http.MethodPut, path: "/externalAuths/ea1", body: externalAuth("properties.clients", []any{
				map[string]any{"component": map[string]any{"name": "cli", "authClientNamespace": "openshift-console"},
					"clientId": "cli-app", "type": "Public"}}), status: http.StatusCreated, poll: true},
			{method: http.MethodDelete, path: "/externalAuths/ea1", status: http.StatusAccepted, poll: true},
		}},
		{name: "external auth issuer over http", onBase: true, steps: []step{put("/externalAuths/bad1",
			externalAuth("properties.issuer.url", "http://login.example.com/tenant"), http.StatusBadRequest,
			invalid("properties.issuer.url", "~Invalid value: "))}},
		{name: "external auth client not among the audiences", onBase: true, steps: []step{put("/externalAuths/bad2",
			externalAuth("properties.issuer.audiences", []any{"cli-app"}), http.StatusBadRequest,
			invalid("properties.clients[0].clientId", "~Invalid value: "))}},
		{name: "external auth prefix without its policy", onBase: true, steps: []step{put("/externalAuths/bad3",
			externalAuth("properties.claim.mappings.username.prefix", "entra:"), http.StatusBadRequest,
			invalid("properties.claim.mappings.username.prefix", "~Invalid value: "))}},
		{name: "external auth of a missing cluster", steps: []step{put("/externalAuths/ea1", externalAuth(), http.StatusNotFound,
			detail{"ResourceNotFound", "~The resource 'hcpOpenShiftClusters/", "{cluster}"})}},
		{name: "node pool of a missing cluster", steps: []step{put("/nodePools/np1", pool(), http.StatusNotFound,
			detail{"ResourceNotFound", "~The resource 'hcpOpenShiftClusters/", "{cluster}"})}},

		// A busy resource answers 409 and names itself.
		{name: "credential while the cluster is being created", steps: []step{created,
			conflict(http.MethodPost, "/requestAdminCredential", "~Cannot request credential while resource is "), {wait: "Succeeded"}}},
		{name: "revocation while the cluster is being created", steps: []step{created,
			conflict(http.MethodPost, "/revokeCredentials", "~Cannot revoke credentials while resource is "), {wait: "Succeeded"}}},
		{name: "update while the cluster is being created", steps: []step{created,
			{method: http.MethodPut, body: minimalWith("tags", map[string]any{"a": "b"}), status: http.StatusConflict,
				errs: []detail{{"Conflict", "~Cannot update resource while resource is ", "{cluster}"}}}, {wait: "Succeeded"}}},
		{name: "second delete while the first runs", steps: []step{succeeded,
			{method: http.MethodDelete, status: http.StatusAccepted},
			conflict(http.MethodDelete, "", "Resource is already deleting"),
			{wait: "gone"}}},

		// Subscription states, the write that follows the notification on the other shim replica.
		{name: "suspended subscription", steps: []step{
			{method: http.MethodPut, path: "sub", body: subscriptionState("Suspended"), status: http.StatusOK},
			stateRefused(http.StatusConflict, "Request is not allowed in subscription in state 'Suspended'."),
			{method: http.MethodGet, path: "list", replica: 1, status: http.StatusOK},
			{method: http.MethodPut, path: "sub", body: subscriptionState("Registered"), replica: 1, status: http.StatusOK},
			{method: http.MethodPut, body: func(r *seqRun) any { return r.minimal() }, status: http.StatusCreated, poll: true},
		}},
		{name: "warned subscription", steps: []step{
			{method: http.MethodPut, path: "sub", body: subscriptionState("Warned"), status: http.StatusOK},
			stateRefused(http.StatusConflict, "Request is not allowed in subscription in state 'Warned'."),
		}},
		{name: "unregistered subscription", steps: []step{
			{method: http.MethodPut, path: "sub", body: subscriptionState("Unregistered"), status: http.StatusOK},
			stateRefused(http.StatusBadRequest, "Request is not allowed in unregistered subscription '{sub}'."),
		}},
		{name: "deleted subscription", steps: []step{
			{method: http.MethodPut, path: "sub", body: subscriptionState("Deleted"), status: http.StatusOK},
			stateRefused(http.StatusBadRequest, "Request is not allowed in subscription in state 'Deleted'."),
		}},
		{name: "subscription ARM never registered", unregistered: true, steps: []step{
			stateRefused(http.StatusBadRequest, "Request is not allowed in unregistered subscription '{sub}'."),
		}},
		{name: "subscription notification with a tenant that is not a GUID", steps: []step{
			{method: http.MethodPut, path: "sub", body: func(*seqRun) any {
				return map[string]any{"state": "Registered", "registrationDate": "2026-12-01T00:00:00Z", "properties": map[string]any{"tenantId": "not-a-guid"}}
			}, status: http.StatusOK},
		}},
		{name: "subscription notification without a registration date", steps: []step{
			{method: http.MethodPut, path: "sub", body: func(*seqRun) any { return map[string]any{"state": "Registered"} },
				status: http.StatusBadRequest, errs: []detail{invalid("registrationDate", "Required value")}},
		}},

		// What ARM's headers ask for.
		{name: "identity URL kept", steps: []step{{method: http.MethodPut, body: func(r *seqRun) any { return r.minimal() },
			header: map[string]string{"X-Ms-Identity-Url": "https://identity.example.com/subscriptions/x/identities"}, status: http.StatusCreated,
			check: func(t *testing.T, r *seqRun, _ *http.Response, _ []byte) {
				out := r.st.server.mustKubectl(t, "get", "hcpclusters", "-A", "-o",
					`jsonpath={range .items[?(@.metadata.name=="`+r.name+`")]}{.spec.platform.operatorsAuthentication.managedIdentitiesDataPlaneIdentityURL}{end}`)
				if out != "https://identity.example.com/subscriptions/x/identities" {
					t.Errorf("the cluster keeps identity URL %q, want the X-Ms-Identity-Url of its create", out)
				}
			}}, {wait: "Succeeded"}}},
		{name: "notification when the operation ends", steps: []step{{method: http.MethodPut, body: func(r *seqRun) any { return r.minimal() },
			header: map[string]string{"Azure-AsyncNotificationUri": "{notify}"}, status: http.StatusCreated, poll: true,
			check: func(t *testing.T, r *seqRun, resp *http.Response, _ []byte) {
				if resp.Header.Get("Azure-AsyncNotification") != "Enabled" {
					t.Errorf("Azure-AsyncNotification %q, want Enabled", resp.Header.Get("Azure-AsyncNotification"))
				}
				op := resp.Header.Get("Azure-AsyncOperation")
				op = op[strings.LastIndex(op, "/")+1:]
				if i := strings.Index(op, "?"); i >= 0 {
					op = op[:i]
				}
				r.notify.await(t, r.name, op)
			}}}},
		{name: "versions", steps: []step{{method: http.MethodGet, path: "/subscriptions/{sub}/providers/Microsoft.RedHatOpenShift/locations/" + armLocation + "/hcpOpenShiftVersions",
			status: http.StatusOK, check: checkVersions}}},
	}
}

// armVersion is what an hcpOpenShiftVersion says of a version.
type armVersion struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Properties struct {
		ChannelGroup       string `json:"channelGroup"`
		Enabled            bool   `json:"enabled"`
		EndOfLifeTimestamp string `json:"endOfLifeTimestamp"`
	} `json:"properties"`
}

// checkVersions checks that the shim lists the OpenShiftVersions hcp-apiserver holds, each as it holds
// it, leaving out those the api-version's document cannot show: a version with no end of life (required
// there) and a name its URL's pattern refuses. The shim's cache follows the API, so the list is read
// again until it agrees; the other replica answers a GET of each the same.
func checkVersions(t *testing.T, r *seqRun, _ *http.Response, body []byte) {
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Parameters []struct{ Name, Pattern string }
			}
		}
	}
	armschema.ReadJSON(t, filepath.Join(armschema.Dir(t), "openapi-"+r.v+".json"), &doc)
	var pattern *regexp.Regexp
	for _, p := range doc.Paths["/subscriptions/{subscriptionId}/providers/Microsoft.RedHatOpenShift/locations/{location}/hcpOpenShiftVersions/{hcpOpenShiftVersionName}"].Get.Parameters {
		if p.Name == "hcpOpenShiftVersionName" {
			pattern = regexp.MustCompile(p.Pattern)
		}
	}
	if pattern == nil {
		t.Fatalf("the %s document gives no pattern of a version's name", r.v)
	}
	held := func() map[string]string {
		var list v1alpha1.OpenShiftVersionList
		if err := json.Unmarshal([]byte(r.st.server.mustKubectl(t, "get", "openshiftversions", "-o", "json")), &list); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, v := range list.Items {
			if v.Spec.EndOfLifeTimestamp != nil && pattern.MatchString(v.Name) {
				want[v.Name] = fmt.Sprintf("%s %v %s", v.Spec.ChannelGroup, v.Spec.Enabled, v.Spec.EndOfLifeTimestamp.UTC().Format(time.RFC3339))
			}
		}
		return want
	}
	path := "/subscriptions/" + r.sub + "/providers/Microsoft.RedHatOpenShift/locations/" + armLocation + "/hcpOpenShiftVersions"
	listed := func(body []byte) map[string]armVersion {
		var page struct {
			Value    []armVersion `json:"value"`
			NextLink string       `json:"nextLink"`
		}
		if err := json.Unmarshal(body, &page); err != nil || page.NextLink != "" {
			t.Fatalf("versions: %v, nextLink %q: %s", err, page.NextLink, body)
		}
		got := map[string]armVersion{}
		for _, v := range page.Value {
			got[v.Name] = v
		}
		return got
	}
	same := func(got map[string]armVersion, want map[string]string) bool {
		if len(want) == 0 || len(got) != len(want) {
			return false
		}
		for name, v := range got {
			if want[name] != fmt.Sprintf("%s %v %s", v.Properties.ChannelGroup, v.Properties.Enabled, v.Properties.EndOfLifeTimestamp) ||
				!strings.EqualFold(v.ID, path+"/"+name) {
				return false
			}
		}
		return true
	}
	got, want := listed(body), held()
	for deadline := time.Now().Add(30 * time.Second); !same(got, want) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		_, body = r.shims[0].do(t, http.MethodGet, path, r.v, nil)
		got, want = listed(body), held()
	}
	if !same(got, want) {
		t.Fatalf("the shim lists %+v; hcp-apiserver holds %v (none is no version ARM can be shown)", got, want)
	}
	for name, v := range got {
		var one armVersion
		if err := json.Unmarshal(r.shims[1].getJSON(t, path+"/"+strings.ToUpper(name), r.v), &one); err != nil || one != v {
			t.Errorf("GET %s from the other replica: %+v %v, want %+v", name, one, err, v)
		}
	}
}

// notifications is ARM's endpoint for Azure-AsyncNotificationUri: it records what each sequence is told.
type notifications struct {
	server *httptest.Server
	mu     sync.Mutex
	got    map[string][]map[string]any // by the sequence's cluster name, from the URL's path
}

func startNotifications(t *testing.T) *notifications {
	n := &notifications{got: map[string][]map[string]any{}}
	n.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		var doc map[string]any
		if req.Method != http.MethodPost || json.Unmarshal(raw, &doc) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		n.mu.Lock()
		n.got[strings.TrimPrefix(req.URL.Path, "/")] = append(n.got[strings.TrimPrefix(req.URL.Path, "/")], doc)
		n.mu.Unlock()
	}))
	t.Cleanup(n.server.Close)
	return n
}

// await waits for the notification that operation ended Succeeded.
func (n *notifications) await(t *testing.T, key, operation string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n.mu.Lock()
		docs := slices.Clone(n.got[key])
		n.mu.Unlock()
		for _, d := range docs {
			if d["name"] == operation && d["status"] == "Succeeded" {
				if len(docs) != 1 {
					t.Errorf("ARM was notified %d times of one operation: %v", len(docs), docs)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notification that operation %s succeeded within a minute; got %v", operation, docs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestARMFrontendSequences replays, in every api-version, request sequences whose answers the public ARO
// HCP frontend's code gives, through two replicas of the shim on one hcp-apiserver, with azcore's
// pipeline; every answer is validated against its api-version's OpenAPI document as it arrives.
// Accepted creates are brought to Succeeded by the management cluster and the HyperShift simulator.
func TestARMFrontendSequences(t *testing.T) {
	armschema.Dir(t)
	st := startDeliveryStack(t, hypershiftsim.Options{ProvisionDelay: 2 * time.Second, DeletionDelay: 3 * time.Second})
	shims := [2]*armClient{
		newARMClient(t, framework.StartARMShim(t, st.server.Kubeconfig, armLocation)),
		newARMClient(t, framework.StartARMShim(t, st.server.Kubeconfig, armLocation)),
	}
	notify := startNotifications(t)
	// Room for every cluster the sequences create at once.
	st.server.mustKubectl(t, "patch", "managementcluster", "mc-eastus-1", "--type=merge", "-p", `{"spec":{"capacity":200}}`)
	sequences := frontendSequences()
	counted := map[string]int{}
	for _, v := range armAPIVersions {
		for _, s := range sequences {
			if s.versions == nil || slices.Contains(s.versions, v) {
				counted[v]++
			}
		}
	}
	t.Logf("sequences per api-version: %v", counted)
	for v, n := range counted {
		if n < 40 {
			t.Errorf("%d sequences in %s, want at least 40", n, v)
		}
	}

	// Every sequence at once, but for a bound: they mostly wait on the management cluster, and go test's
	// -parallel (GOMAXPROCS) would run two at a time.
	slots := make(chan struct{}, frontendConcurrency)
	var versions sync.WaitGroup
	for vi, v := range armAPIVersions {
		versions.Go(func() {
			t.Run(v, func(t *testing.T) {
				base := &seqRun{v: v, sub: uuid.NewString(), rg: "Base-RG", name: fmt.Sprintf("base-%d", vi), shims: shims, st: st, notify: notify}
				base.cluster = armClusterIDIn(base.sub, base.rg, base.name)
				registerSubscription(t, shims[0], base.sub)
				resp := shims[0].mustDo(t, http.MethodPut, base.cluster, v, base.minimal(), http.StatusCreated)
				pollToEnd(t, shims[0], resp, runtime.FinalStateViaAzureAsyncOp)
				var all sync.WaitGroup
				for si, s := range sequences {
					if s.versions != nil && !slices.Contains(s.versions, v) {
						continue
					}
					all.Go(func() {
						slots <- struct{}{}
						defer func() { <-slots }()
						t.Run(s.name, func(t *testing.T) {
							r := *base
							r.t = t
							if !s.onBase {
								r = seqRun{t: t, v: v, sub: uuid.NewString(), rg: "Seq-RG", name: fmt.Sprintf("seq-%d-%d", vi, si), shims: shims, st: st, notify: notify}
								r.cluster = armClusterIDIn(r.sub, r.rg, r.name)
								if !s.unregistered {
									registerSubscription(t, shims[0], r.sub)
								}
							}
							for i, stp := range s.steps {
								replay(t, &r, i, stp)
							}
						})
					})
				}
				all.Wait()
			})
		})
	}
	versions.Wait()
}

// frontendConcurrency is how many sequences run at once.
const frontendConcurrency = 24

func armClusterIDIn(sub, rg, name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

func registerSubscription(t *testing.T, c *armClient, sub string) {
	t.Helper()
	c.mustDo(t, http.MethodPut, "/subscriptions/"+sub, "2.0", subscriptionState("Registered")(nil), http.StatusOK)
}

// replay sends step i of a sequence and checks its answer.
func replay(t *testing.T, r *seqRun, i int, s step) {
	t.Helper()
	c := r.shims[s.replica]
	if s.wait != "" {
		waitProvisioningState(t, c, r, s.wait)
		return
	}
	path, v := r.cluster+s.path, r.v
	switch {
	case s.path == "sub":
		path, v = "/subscriptions/"+r.sub, "2.0"
	case strings.HasPrefix(s.path, "/subscriptions/"):
		path = strings.ReplaceAll(s.path, "{sub}", r.sub)
	case s.path == "list":
		path = r.cluster[:strings.LastIndex(r.cluster, "/")]
	case strings.HasPrefix(s.path, "/../"):
		// Another cluster of the resource group.
		path = r.cluster[:strings.LastIndex(r.cluster, "/")] + "/" + strings.TrimPrefix(s.path, "/../")
	}
	var body any
	if s.body != nil {
		body = s.body(r)
	}
	headers := map[string]string{}
	for k, val := range s.header {
		headers[k] = strings.ReplaceAll(val, "{notify}", r.notify.server.URL+"/"+r.name)
	}
	resp, raw := c.doWith(t, s.method, path, v, body, headers)
	if resp.StatusCode != s.status {
		t.Fatalf("step %d: %s %s?api-version=%s answered %d, want %d:\n%s", i, s.method, path, v, resp.StatusCode, s.status, raw)
	}
	if len(s.errs) > 0 {
		checkCloudError(t, r, i, raw, s.errs)
	}
	if s.poll {
		via := runtime.FinalStateViaLocation
		if s.method == http.MethodPut {
			via = runtime.FinalStateViaAzureAsyncOp
		}
		final := pollToEnd(t, c, resp, via)
		if s.method != http.MethodDelete && final != nil && len(final) > 0 {
			if got := jsonString(t, final, "properties", "provisioningState"); got != "Succeeded" {
				t.Fatalf("step %d: %s %s ended %s, want Succeeded:\n%s", i, s.method, path, got, final)
			}
			raw = final
		}
	}
	if s.check != nil {
		s.check(t, r, resp, raw)
	}
}

// checkCloudError compares a CloudError with the details wanted, whatever their order.
func checkCloudError(t *testing.T, r *seqRun, i int, raw []byte, want []detail) {
	t.Helper()
	var ce struct {
		Error struct {
			Code, Message, Target string
			Details               []struct{ Code, Message, Target string }
		}
	}
	if err := json.Unmarshal(raw, &ce); err != nil {
		t.Fatalf("step %d: not a CloudError: %v\n%s", i, err, raw)
	}
	got := []detail{{ce.Error.Code, ce.Error.Message, ce.Error.Target}}
	if len(want) > 1 {
		if ce.Error.Code != "MultipleErrorsOccurred" || ce.Error.Message != fmt.Sprintf("%d errors occurred", len(want)) {
			t.Errorf("step %d: error %s %q, want MultipleErrorsOccurred %q", i, ce.Error.Code, ce.Error.Message, fmt.Sprintf("%d errors occurred", len(want)))
		}
		got = nil
		for _, d := range ce.Error.Details {
			got = append(got, detail{d.Code, d.Message, d.Target})
		}
	}
	replacer := strings.NewReplacer("{cluster}", r.cluster, "{sub}", r.sub,
		"{mrg-is-rg}", fmt.Sprintf(`Invalid value: %q: must not be the same resource group name: %q`, r.rg, r.rg),
		"{subnet-in-mrg}", fmt.Sprintf(`Invalid value: %q: must not be the same resource group name: "net-rg"`, r.subnet()))
	unmatched := slices.Clone(got)
	for _, w := range want {
		w.message, w.target = replacer.Replace(w.message), replacer.Replace(w.target)
		found := slices.IndexFunc(unmatched, func(g detail) bool {
			if g.code != w.code || !strings.EqualFold(g.target, w.target) {
				return false
			}
			if prefix, ok := strings.CutPrefix(w.message, "~"); ok {
				return strings.HasPrefix(g.message, prefix)
			}
			return g.message == w.message
		})
		if found < 0 {
			t.Errorf("step %d: no error {%s, %q, %s} among %v", i, w.code, w.message, w.target, got)
			continue
		}
		unmatched = slices.Delete(unmatched, found, found+1)
	}
	if len(unmatched) > 0 {
		t.Errorf("step %d: errors not expected: %v", i, unmatched)
	}
}

// waitProvisioningState polls the cluster until its provisioningState is state, or until it is gone.
func waitProvisioningState(t *testing.T, c *armClient, r *seqRun, state string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, body := c.do(t, http.MethodGet, r.cluster, r.v, nil)
		switch {
		case state == "gone" && resp.StatusCode == http.StatusNotFound:
			return
		case resp.StatusCode == http.StatusOK && jsonString(t, body, "properties", "provisioningState") == state:
			return
		case time.Now().After(deadline):
			t.Fatalf("the cluster is not %s after 3 minutes: %d %s", state, resp.StatusCode, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
