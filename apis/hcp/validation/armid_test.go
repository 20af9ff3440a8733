package validation

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var armResourceTypes = []string{subnetResourceType, networkSecurityGroupResourceType, userAssignedIdentityResourceType, diskEncryptionSetResourceType}

// The IDs clients send are read without azcore's parser, and so without allocating: a create checks
// several of them.
func TestPlainIDsAreCheckedWithoutAllocating(t *testing.T) {
	for _, tc := range []struct{ id, resourceType string }{
		{subnetID(testSubscription, "workers"), subnetResourceType},
		{strings.ToLower(subnetID(testSubscription, "workers")), subnetResourceType},
		{armID(testSubscription, "network-rg", "Microsoft.Network/networkSecurityGroups/nsg"), networkSecurityGroupResourceType},
		{identityID("ingress"), userAssignedIdentityResourceType},
		{armID(testSubscription, "rg", "Microsoft.Compute/diskEncryptionSets/des"), diskEncryptionSetResourceType},
	} {
		path := field.NewPath("f")
		var errs field.ErrorList
		allocs := testing.AllocsPerRun(100, func() { errs = validateARMID(path, tc.id, tc.resourceType, testSubscription) })
		if len(errs) > 0 {
			t.Errorf("%s: %v", tc.id, errs)
		}
		if allocs > 0 {
			t.Errorf("checking %s allocated %v times, want none", tc.id, allocs)
		}
	}
	if got, ok := subnetResourceGroup(subnetID(testSubscription, "workers")); !ok || got != "network-rg" {
		t.Errorf("the subnet's resource group is %q (read: %v), want network-rg", got, ok)
	}
	if got, ok := subnetResourceGroup(subnetID(testSubscription, "my workers")); !ok || got != "network-rg" {
		t.Errorf("the resource group of a subnet with a space in its name is %q (read: %v), want network-rg", got, ok)
	}
}

// FuzzPlainARMID checks that an ID plainARMID accepts is one azcore's parser accepts too, as the same
// resource in the same subscription and resource group: the parser is what says which IDs are valid, the
// plain reading only spares parsing the common ones.
func FuzzPlainARMID(f *testing.F) {
	for _, id := range []string{
		subnetID(testSubscription, "workers"),
		strings.ToUpper(subnetID(testSubscription, "workers")),
		subnetID(testSubscription, "my workers"),
		subnetID(testSubscription, "providers"),
		armID(testSubscription, "providers", "Microsoft.Network/virtualNetworks/providers/subnets/s"),
		armID(testSubscription, "network-rg", "Microsoft.Network/networkSecurityGroups/nsg"),
		identityID("ingress"),
		identityID("parent") + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/child",
		armID(testSubscription, "rg", "Microsoft.Compute/diskEncryptionSets/des"),
		"/subscriptions/" + testSubscription + "/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
		"/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
	} {
		for i := range armResourceTypes {
			f.Add(id, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, id string, typeIndex uint8) {
		resourceType := armResourceTypes[int(typeIndex)%len(armResourceTypes)]
		subscription, resourceGroup, ok := plainARMID(id, resourceType)
		if !ok {
			return
		}
		parsed, err := arm.ParseResourceID(id)
		if err != nil {
			t.Fatalf("%q read plainly, but the parser says: %v", id, err)
		}
		if err := parsed.ValidateResourceTypeChain(resourceTypeChain(resourceType)); err != nil {
			t.Errorf("%q read plainly as a %s, but the parser says: %v", id, resourceType, err)
		}
		if !strings.EqualFold(parsed.String(), id) || hasEmptyName(parsed) {
			t.Errorf("%q read plainly, but the parser reads %q", id, parsed.String())
		}
		if parsed.SubscriptionID != subscription || parsed.ResourceGroupName != resourceGroup {
			t.Errorf("%q read plainly in subscription %q and resource group %q, by the parser in %q and %q",
				id, subscription, resourceGroup, parsed.SubscriptionID, parsed.ResourceGroupName)
		}
	})
}
