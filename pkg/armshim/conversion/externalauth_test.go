package conversion

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

const testAuthID = testClusterID + "/externalAuths/Entra"

// fullExternalAuthBody sets every field of an external auth: a confidential client (the console) and
// a public one (the CLI), both among the audiences.
const fullExternalAuthBody = `{
  "properties": {
    "issuer": {
      "url": "https://login.microsoftonline.com/0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/v2.0",
      "audiences": ["console-app", "cli-app"],
      "ca": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    },
    "clients": [
      {"component": {"name": "console", "authClientNamespace": "openshift-console"}, "clientId": "console-app",
       "extraScopes": ["email", "profile"], "type": "Confidential"},
      {"component": {"name": "cli", "authClientNamespace": "openshift-console"}, "clientId": "cli-app", "type": "Public"}
    ],
    "claim": {
      "mappings": {
        "username": {"claim": "email", "prefix": "entra:", "prefixPolicy": "Prefix"},
        "groups": {"claim": "groups", "prefix": "entra:"}
      },
      "validationRules": [{"type": "RequiredClaim", "requiredClaim": {"claim": "tid", "requiredValue": "0b1e2c3d"}}]
    }
  }
}`

func createExternalAuth(t *testing.T, v APIVersion, body string) *hcpv1alpha1.ExternalAuth {
	t.Helper()
	ea, errs := ExternalAuthFromARM(Request{APIVersion: v, ResourceID: testAuthID, Body: []byte(body), SystemData: testSystemData}, nil)
	if len(errs) > 0 {
		t.Fatalf("creating the external auth in %s: %v", v, errs)
	}
	hcpv1alpha1.SetObjectDefaults_ExternalAuth(ea)
	return ea
}

// withExternalAuthStatus gives ea what the status of a provider waiting for its console's client
// secret reports.
func withExternalAuthStatus(ea *hcpv1alpha1.ExternalAuth) *hcpv1alpha1.ExternalAuth {
	ea.Status = hcpv1alpha1.ExternalAuthStatus{
		ProvisioningState: hcpv1alpha1.ProvisioningStateAwaitingSecret,
		Conditions: []metav1.Condition{
			{Type: hcpv1alpha1.ConditionDelivered, Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: testTime},
			{Type: hcpv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "AwaitingSecret", LastTransitionTime: testTime,
				Message: "Create the secret entra-console in namespace openshift-config of the hosted cluster"},
			{Type: hcpv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: testTime},
			{Type: hcpv1alpha1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: testTime},
		},
		ObservedGeneration: 1,
	}
	return ea
}

func externalAuthJSON(t *testing.T, v APIVersion, ea *hcpv1alpha1.ExternalAuth) []byte {
	t.Helper()
	out, err := ExternalAuthToARM(v, ea)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestExternalAuthCrossVersionGolden writes an external auth in each api-version and reads it in all
// four: every body validates against its version's document, and PUT back changes nothing.
func TestExternalAuthCrossVersionGolden(t *testing.T) {
	full := withExternalAuthStatus(createExternalAuth(t, V20260901Preview, fullExternalAuthBody))
	for _, w := range APIVersions {
		created := withExternalAuthStatus(createExternalAuth(t, w, string(externalAuthJSON(t, w, full))))
		for _, r := range APIVersions {
			body := externalAuthJSON(t, r, created)
			checkGolden(t, filepath.Join("testdata", "externalauth", "written-"+string(w), "read-"+string(r)+".json"), body)
			if err := validateIfShared(t, r, "ExternalAuth", body); err != nil {
				t.Errorf("written in %s, read in %s: %v", w, r, err)
			}
			putBack, errs := ExternalAuthFromARM(Request{APIVersion: r, ResourceID: testAuthID, Body: body}, created)
			if len(errs) > 0 {
				t.Errorf("written in %s, PUT back in %s: %v", w, r, errs)
			} else {
				assertSameJSON(t, "written in "+string(w)+", PUT back in "+string(r), created, putBack)
			}
		}
	}
}

// TestExternalAuthState checks where each api-version reports the state: provisioningState as the
// status has it (AwaitingSecret too), the condition that tells of the missing secret as condition
// before 2026-06-30-preview, and every ARM condition as status.conditions from it on.
func TestExternalAuthState(t *testing.T) {
	ea := withExternalAuthStatus(createExternalAuth(t, V20260901Preview, fullExternalAuthBody))
	for _, v := range APIVersions {
		out, err := ExternalAuthToARM(v, ea)
		if err != nil {
			t.Fatal(err)
		}
		p := out.Properties
		if got := deref(p.ProvisioningState); got != "AwaitingSecret" {
			t.Errorf("%s: provisioningState = %q", v, got)
		}
		if v.hasStatusConditions() {
			if p.Condition != nil || p.Status == nil || len(p.Status.Conditions) != 3 {
				t.Errorf("%s: want status.conditions with Available, Progressing and Degraded only, got condition %+v, status %+v", v, p.Condition, p.Status)
			}
			continue
		}
		if p.Status != nil || p.Condition == nil {
			t.Fatalf("%s: want one condition and no status, got condition %+v, status %+v", v, p.Condition, p.Status)
		}
		if p.Condition.Type != "Available" || p.Condition.Status != "False" || !strings.Contains(p.Condition.Message, "entra-console") {
			t.Errorf("%s: condition = %+v, want the Available=False that names the secret", v, p.Condition)
		}
	}

	// No status yet: neither is shown.
	fresh := createExternalAuth(t, V20260901Preview, fullExternalAuthBody)
	for _, v := range APIVersions {
		out, _ := ExternalAuthToARM(v, fresh)
		if out.Properties.Condition != nil || out.Properties.Status != nil || out.Properties.ProvisioningState != nil {
			t.Errorf("%s: a new external auth shows a state: %+v", v, out.Properties)
		}
	}
}

func TestMostTellingCondition(t *testing.T) {
	c := func(typ, status string) Condition { return Condition{Type: typ, Status: status, Reason: typ + status} }
	tests := []struct {
		name string
		in   []Condition
		want string
	}{
		{"all well", []Condition{c("Progressing", "False"), c("Degraded", "False"), c("Available", "True")}, "AvailableTrue"},
		{"degraded first", []Condition{c("Available", "False"), c("Progressing", "True"), c("Degraded", "True")}, "DegradedTrue"},
		{"not available before progressing", []Condition{c("Progressing", "True"), c("Available", "False")}, "AvailableFalse"},
		{"progressing", []Condition{c("Progressing", "True"), c("Available", "True")}, "ProgressingTrue"},
		{"only one", []Condition{c("Degraded", "False")}, "DegradedFalse"},
	}
	for _, tt := range tests {
		if got := mostTelling(tt.in).Reason; got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestExternalAuthPutReplaces checks that a PUT replaces the whole spec, every field being
// updatable: clients and rules left out are gone, the cluster stays, and who created it too.
func TestExternalAuthPutReplaces(t *testing.T) {
	existing := withExternalAuthStatus(createExternalAuth(t, V20260901Preview, fullExternalAuthBody))
	existing.Annotations["other"] = "kept"
	body := `{"properties": {"issuer": {"url": "https://issuer.example.com", "audiences": ["a"]},
		"claim": {"mappings": {"username": {"claim": "sub"}}}}}`
	later := `{"lastModifiedBy":"bob@example.com","lastModifiedByType":"User","lastModifiedAt":"2026-12-02T10:00:00Z",` +
		`"createdBy":"bob@example.com","createdByType":"User","createdAt":"2026-12-02T10:00:00Z"}`
	got, errs := ExternalAuthFromARM(Request{APIVersion: V20240610Preview, ResourceID: testAuthID, Body: []byte(body), SystemData: later}, existing)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := hcpv1alpha1.ExternalAuthSpec{
		ClusterName: "dev-cluster",
		Issuer:      hcpv1alpha1.TokenIssuer{URL: "https://issuer.example.com", Audiences: []string{"a"}},
		Claim:       hcpv1alpha1.ExternalAuthClaim{Mappings: hcpv1alpha1.TokenClaimMappings{Username: hcpv1alpha1.UsernameClaim{Claim: "sub"}}},
	}
	assertSameJSON(t, "spec", want, got.Spec)
	if got.Annotations["other"] != "kept" || got.Status.ProvisioningState != hcpv1alpha1.ProvisioningStateAwaitingSecret {
		t.Errorf("the update lost what it does not set: %+v %+v", got.Annotations, got.Status)
	}
	sd := systemDataFrom(got.Annotations)
	if deref(sd.CreatedBy) != "alice@example.com" || deref(sd.LastModifiedBy) != "bob@example.com" {
		t.Errorf("systemData = %+v, want alice's creation and bob's change", sd)
	}
}

// TestExternalAuthRequestErrors: what the conversion itself refuses, at ARM paths; the values are
// the API's validation's (see TestExternalAuthInvalidBodies in the frontend).
func TestExternalAuthRequestErrors(t *testing.T) {
	for name, tt := range map[string]struct{ id, body, field string }{
		"no properties":            {testAuthID, `{}`, "properties"},
		"audiences not a list":     {testAuthID, `{"properties": {"issuer": {"audiences": "a"}}}`, "properties.issuer.audiences"},
		"client type not a string": {testAuthID, `{"properties": {"clients": [{"type": 1}]}}`, "properties.clients.type"},
		"a node pool's ID":         {testPoolID, fullExternalAuthBody, "id"},
		"not JSON":                 {testAuthID, `{`, "body"},
	} {
		_, errs := ExternalAuthFromARM(Request{APIVersion: V20260630Preview, ResourceID: tt.id, Body: []byte(tt.body)}, nil)
		if len(errs) != 1 || errs[0].Field != tt.field {
			t.Errorf("%s: errors %v, want one at %s", name, errs, tt.field)
		}
	}
}

// TestExternalAuthRemovals: a PATCH may remove what is optional (the CA, groups, clients) but not
// what a PUT needs.
func TestExternalAuthRemovals(t *testing.T) {
	current := jsonMap(t, externalAuthJSON(t, V20260901Preview, createExternalAuth(t, V20260901Preview, fullExternalAuthBody)))
	for patch, want := range map[string]string{
		`{"properties": {"issuer": {"ca": null}, "clients": null, "claim": {"mappings": {"groups": null}, "validationRules": null}}}`: "",
		`{"properties": {"issuer": {"audiences": null}}}`:                      "properties.issuer.audiences",
		`{"properties": {"claim": {"mappings": {"username": null}}}}`:          "properties.claim.mappings.username",
		`{"properties": {"claim": {"mappings": {"groups": {"claim": null}}}}}`: "properties.claim.mappings.groups.claim",
		`{"properties": null}`: "properties",
	} {
		errs := CheckRemovals(V20260901Preview, names.KindExternalAuth, current, jsonMap(t, []byte(patch)))
		switch {
		case want == "" && len(errs) > 0:
			t.Errorf("%s: refused: %v", patch, errs)
		case want != "" && (len(errs) != 1 || errs[0].Field != want):
			t.Errorf("%s: errors %v, want one at %s", patch, errs, want)
		}
	}
}

func FuzzExternalAuthRequest(f *testing.F) {
	for _, seed := range []string{
		fullExternalAuthBody,
		`{"properties":{"issuer":{"url":"http://x","audiences":[]},"claim":{"mappings":{"username":{"prefix":"p"}}}}}`,
		`{"properties":{"clients":[{},{"component":null}],"claim":{"validationRules":[{}]}}}`,
		`{"properties":{"condition":{"type":"Available"},"status":{"conditions":[]}}}`,
		`{}`,
	} {
		for v := range APIVersions {
			f.Add([]byte(seed), uint8(v), false)
			f.Add([]byte(seed), uint8(v), true)
		}
	}
	existing := withExternalAuthStatus(mustExternalAuth(fullExternalAuthBody))
	f.Fuzz(func(t *testing.T, body []byte, version uint8, update bool) {
		v := APIVersions[int(version)%len(APIVersions)]
		var current *hcpv1alpha1.ExternalAuth
		if update {
			current = existing
		}
		ea, errs := ExternalAuthFromARM(Request{APIVersion: v, ResourceID: testAuthID, Body: body}, current)
		if len(errs) > 0 {
			return
		}
		out, err := ExternalAuthToARM(v, ea)
		if err != nil {
			t.Fatalf("an accepted external auth cannot be shown: %v", err)
		}
		again, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		back, errs := ExternalAuthFromARM(Request{APIVersion: v, ResourceID: testAuthID, Body: again}, ea)
		if len(errs) > 0 {
			t.Fatalf("PUT of the GET body refused: %v\n%s", errs, again)
		}
		if a, b := mustMarshal(ea.Spec), mustMarshal(back.Spec); a != b {
			t.Fatalf("PUT of the GET body changed the spec:\n%s\n%s", a, b)
		}
	})
}

func mustExternalAuth(body string) *hcpv1alpha1.ExternalAuth {
	ea, errs := ExternalAuthFromARM(Request{APIVersion: V20260901Preview, ResourceID: testAuthID, Body: []byte(body), SystemData: testSystemData}, nil)
	if len(errs) > 0 {
		panic(errs.ToAggregate())
	}
	hcpv1alpha1.SetObjectDefaults_ExternalAuth(ea)
	return ea
}

func mustMarshal(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// TestExternalAuthHasNoCreateOnlyField reads each api-version's document: no field of an external auth
// is create-only, which is why ExternalAuthFromARM replaces the spec whole. A document that makes one
// create-only fails here, before the conversion lets it change.
func TestExternalAuthHasNoCreateOnlyField(t *testing.T) {
	for _, v := range APIVersions {
		var doc struct{ Definitions map[string]map[string]any }
		readJSON(t, filepath.Join(armDir(t), "openapi-"+string(v)+".json"), &doc)
		if _, ok := doc.Definitions["ExternalAuthProperties"]; !ok {
			t.Fatalf("%s: no ExternalAuthProperties", v)
		}
		if leaves := createOnlyLeaves(doc.Definitions, "ExternalAuthProperties", "properties", nil); len(leaves) > 0 {
			t.Errorf("%s: create-only external auth fields %v: the conversion must refuse their change", v, leaves)
		}
	}
}
