package validation

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// wantErr is an expected error: its type and field path.
type wantErr struct {
	typ   field.ErrorType
	field string
}

func required(path string) wantErr     { return wantErr{field.ErrorTypeRequired, path} }
func invalid(path string) wantErr      { return wantErr{field.ErrorTypeInvalid, path} }
func notSupported(path string) wantErr { return wantErr{field.ErrorTypeNotSupported, path} }
func forbidden(path string) wantErr    { return wantErr{field.ErrorTypeForbidden, path} }
func duplicate(path string) wantErr    { return wantErr{field.ErrorTypeDuplicate, path} }
func tooLong(path string) wantErr      { return wantErr{field.ErrorTypeTooLong, path} }
func tooMany(path string) wantErr      { return wantErr{field.ErrorTypeTooMany, path} }

// expectErrors fails unless got holds exactly the wanted errors, in any order.
func expectErrors(t *testing.T, got field.ErrorList, want ...wantErr) {
	t.Helper()
	gotKeys := make([]string, len(got))
	for i, e := range got {
		gotKeys[i] = fmt.Sprintf("%s %s", e.Type, e.Field)
	}
	wantKeys := make([]string, len(want))
	for i, w := range want {
		wantKeys[i] = fmt.Sprintf("%s %s", w.typ, w.field)
	}
	slices.Sort(gotKeys)
	slices.Sort(wantKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		var details []string
		for _, e := range got {
			details = append(details, "  "+e.Error())
		}
		t.Errorf("got errors\n%s\nwant\n  %s", strings.Join(details, "\n"), strings.Join(wantKeys, "\n  "))
	}
}

// expectDetail fails unless the only error's message contains every one of parts.
func expectDetail(t *testing.T, got field.ErrorList, parts ...string) {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(got), got.ToAggregate())
	}
	for _, part := range parts {
		if !strings.Contains(got[0].Error(), part) {
			t.Errorf("error %q does not mention %q", got[0].Error(), part)
		}
	}
}

const (
	testSubscription  = "6b690bec-0c16-4ecb-8f67-781caf40bba7"
	otherSubscription = "0b1f6f2e-4d3c-4a5b-9c8d-7e6f5a4b3c2d"
	testTenant        = "64dc2ff5-0c3c-4c2c-a1cb-6dcc6b3a7e6a"
)

func armID(subscription, resourceGroup, providerPath string) string {
	return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup + "/providers/" + providerPath
}

func subnetID(subscription, subnet string) string {
	return armID(subscription, "network-rg", "Microsoft.Network/virtualNetworks/vnet/subnets/"+subnet)
}

func identityID(name string) string {
	return armID(testSubscription, "identities-rg", "Microsoft.ManagedIdentity/userAssignedIdentities/"+name)
}

func condition(conditionType string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{
		Type:               conditionType,
		Status:             status,
		Reason:             "AsExpected",
		LastTransitionTime: metav1.Unix(1767225600, 0),
	}
}

func TestValidateARMID(t *testing.T) {
	subnet := subnetID(testSubscription, "workers")
	tests := []struct {
		name           string
		id             string
		resourceType   string
		subscriptionID string
		want           []wantErr
	}{
		{name: "subnet", id: subnet, resourceType: subnetResourceType},
		{name: "in the subscription", id: subnet, resourceType: subnetResourceType, subscriptionID: testSubscription},
		{name: "subscription compared without case", id: subnet, resourceType: subnetResourceType, subscriptionID: strings.ToUpper(testSubscription)},
		{name: "segments in any case", id: strings.ToLower(subnet), resourceType: subnetResourceType},
		{name: "identity", id: identityID("a"), resourceType: userAssignedIdentityResourceType},
		{name: "name with a space in it", id: subnetID(testSubscription, "my workers"), resourceType: subnetResourceType},
		{name: "name not ASCII", id: subnetID(testSubscription, "arbeiter-ü"), resourceType: subnetResourceType},
		{name: "blank name", id: subnetID(testSubscription, " "), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "name with spaces around it", id: subnetID(testSubscription, " workers"), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "empty", id: "", resourceType: subnetResourceType, want: []wantErr{required("f")}},
		{name: "not an ID", id: "workers", resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "other type", id: armID(testSubscription, "rg", "Microsoft.Network/networkSecurityGroups/nsg"), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "parent without child", id: armID(testSubscription, "rg", "Microsoft.Network/virtualNetworks/vnet"), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "child without name", id: armID(testSubscription, "rg", "Microsoft.Network/virtualNetworks/vnet/subnets"), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "trailing slash", id: subnet + "/", resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "double slash", id: strings.Replace(subnet, "/subnets/", "/subnets//", 1), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{
			name:         "extension resource of the same type",
			id:           identityID("parent") + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/child",
			resourceType: userAssignedIdentityResourceType,
			want:         []wantErr{invalid("f")},
		},
		{name: "subscription not a UUID", id: subnetID("my-subscription", "workers"), resourceType: subnetResourceType, want: []wantErr{invalid("f")}},
		{name: "other subscription", id: subnetID(otherSubscription, "workers"), resourceType: subnetResourceType, subscriptionID: testSubscription, want: []wantErr{invalid("f")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectErrors(t, validateARMID(field.NewPath("f"), tc.id, tc.resourceType, tc.subscriptionID), tc.want...)
		})
	}
}

func TestValidateARMIDMessages(t *testing.T) {
	expectDetail(t, validateARMID(field.NewPath("f"), "workers", subnetResourceType, ""),
		"Microsoft.Network/virtualNetworks/subnets",
		"/subscriptions/<subscription>/resourceGroups/<resource-group>/providers/Microsoft.Network/virtualNetworks/<name>/subnets/<name>")
	expectDetail(t, validateARMID(field.NewPath("f"), subnetID(otherSubscription, "a"), subnetResourceType, testSubscription),
		"must be in the same Azure subscription: \""+testSubscription+"\"")
}

func TestValidateResourceGroupName(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []wantErr
	}{
		{name: "plain", value: "my-rg"},
		{name: "all allowed punctuation", value: "My_RG.(prod)-1"},
		{name: "unicode letters", value: "ressourcengruppe-ä"},
		{name: "90 characters", value: strings.Repeat("r", 90)},
		{name: "empty", value: "", want: []wantErr{required("f")}},
		{name: "91 characters", value: strings.Repeat("r", 91), want: []wantErr{tooLong("f")}},
		{name: "ends in a period", value: "rg.", want: []wantErr{invalid("f")}},
		{name: "slash", value: "rg/x", want: []wantErr{invalid("f")}},
		{name: "space", value: "my rg", want: []wantErr{invalid("f")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectErrors(t, validateResourceGroupName(field.NewPath("f"), tc.value), tc.want...)
		})
	}
}

func TestValidateCIDR(t *testing.T) {
	tests := []struct {
		value string
		want  []wantErr
	}{
		{value: "10.0.0.0/16"},
		{value: "0.0.0.0/0"},
		{value: "", want: []wantErr{required("f")}},
		{value: "10.0.0.0", want: []wantErr{invalid("f")}},
		{value: "10.0.0.0/33", want: []wantErr{invalid("f")}},
		{value: "fd00::/48", want: []wantErr{invalid("f")}},
		{value: "::ffff:10.0.0.0/112", want: []wantErr{invalid("f")}},
		{value: "010.0.0.0/16", want: []wantErr{invalid("f")}},
		{value: "10.0.0.1/16", want: []wantErr{invalid("f")}},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			_, errs := validateCIDR(field.NewPath("f"), tc.value)
			expectErrors(t, errs, tc.want...)
		})
	}
	_, errs := validateCIDR(field.NewPath("f"), "10.0.0.1/16")
	expectDetail(t, errs, "no host bits set, such as 10.0.0.0/16")
}

func TestValidateEnumMessages(t *testing.T) {
	expectDetail(t, validateEnum(field.NewPath("f"), "Sometimes", []string{"Always", "Never"}), `supported values: "Always", "Never"`)
	expectDetail(t, validateEnum(field.NewPath("f"), "", []string{"Always", "Never"}), `must be one of "Always", "Never"`)
}
