package render

import (
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apivalidation "github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
)

// armType is an ARM resource type in a resource group, in ARM's own casing, such as
// Microsoft.Network with virtualNetworks and subnets.
type armType struct {
	namespace string
	types     []string
}

var (
	subnetType               = armType{"Microsoft.Network", []string{"virtualNetworks", "subnets"}}
	networkSecurityGroupType = armType{"Microsoft.Network", []string{"networkSecurityGroups"}}
	diskEncryptionSetType    = armType{"Microsoft.Compute", []string{"diskEncryptionSets"}}
)

func (t armType) String() string {
	return t.namespace + "/" + strings.Join(t.types, "/")
}

// armID is a parsed ARM ID of a resource in a resource group.
type armID struct {
	subscriptionID, resourceGroup string
	typ                           armType
	// names are the names of the resource and its parents, one per type, the outermost first.
	names []string
}

// parseARMID parses id as the ID of a resource of type t. ARM takes IDs in any case, but the
// HyperShift CRDs match them case-sensitively, so the result prints back in ARM's casing.
func parseARMID(fldPath *field.Path, id string, t armType) (*armID, *field.Error) {
	invalid := func(msg string) *field.Error {
		return field.Invalid(fldPath, id, fmt.Sprintf("not the ARM ID of a %s: %s", t, msg))
	}
	parsed, err := arm.ParseResourceID(id)
	if err != nil {
		return nil, invalid(err.Error())
	}
	chain := []arm.ResourceType{arm.TenantResourceType, arm.SubscriptionResourceType, arm.ResourceGroupResourceType}
	for i := range t.types {
		chain = append(chain, arm.NewResourceType(t.namespace, strings.Join(t.types[:i+1], "/")))
	}
	if err := parsed.ValidateResourceTypeChain(chain); err != nil {
		return nil, invalid(err.Error())
	}
	// The parser skips empty segments; an ID that does not print back the same had some.
	if !strings.EqualFold(parsed.String(), id) {
		return nil, invalid("it has empty segments")
	}
	if !apivalidation.IsUUID(parsed.SubscriptionID) {
		return nil, invalid("the subscription must be a UUID")
	}
	a := &armID{subscriptionID: parsed.SubscriptionID, resourceGroup: parsed.ResourceGroupName, typ: t, names: make([]string, len(t.types))}
	for i, r := len(t.types)-1, parsed; i >= 0; i, r = i-1, r.Parent {
		a.names[i] = r.Name
	}
	return a, nil
}

func (a *armID) String() string {
	return a.ancestor(len(a.names))
}

// ancestor prints the ID of the resource's ancestor at depth (1 is the outermost resource in the
// resource group, len(names) the resource itself).
func (a *armID) ancestor(depth int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/subscriptions/%s/resourceGroups/%s/providers/%s", a.subscriptionID, a.resourceGroup, a.typ.namespace)
	for i := range depth {
		fmt.Fprintf(&b, "/%s/%s", a.typ.types[i], a.names[i])
	}
	return b.String()
}

// clusterResourceID is the ARM ID of the cluster resource an HCPCluster is. Kubernetes names are
// ARM names lowercased, and ARM IDs compare without case, so this is the same resource.
func clusterResourceID(subscriptionID, resourceGroup, name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/%s",
		subscriptionID, resourceGroup, name)
}
