// Package names maps ARM resource IDs of Microsoft.RedHatOpenShift clusters, node pools and external
// auths to the Kubernetes namespaces and names of HCPClusters, NodePools and ExternalAuths, and back.
//
// ARM compares resource IDs without regard to case, Kubernetes names are lowercase: so a namespace
// stands for one subscription and resource group whatever their casing, names are lowercased, and the
// ID as ARM first spelled it is kept in annotations, to be given back in responses.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// The ARM resource types served, as the OpenAPI documents spell them.
const (
	ProviderNamespace = "Microsoft.RedHatOpenShift"
	ClusterType       = ProviderNamespace + "/hcpOpenShiftClusters"
	NodePoolType      = ClusterType + "/nodePools"
	ExternalAuthType  = ClusterType + "/externalAuths"
)

// Annotations that keep what lowercase Kubernetes names lose.
const (
	// AnnotationResourceID is the object's ARM resource ID as ARM spelled it when the object was created.
	AnnotationResourceID = "hcp.aro.azure.com/arm-resource-id"
	// AnnotationSubscriptionID and AnnotationResourceGroup go on the namespace of a subscription and
	// resource group, as ARM spelled them when the namespace was made.
	AnnotationSubscriptionID = "hcp.aro.azure.com/arm-subscription-id"
	AnnotationResourceGroup  = "hcp.aro.azure.com/arm-resource-group"
)

// LabelSubscription is on every HCPCluster, NodePool, BreakglassCredential and ARMOperation the ARM
// shim creates: the lowercased subscription ID, so that a subscription's resources are one
// label-selected list across all namespaces.
// The API's controllers select on the same label, so it is the API's constant.
const LabelSubscription = hcpv1alpha1.ARMSubscriptionLabel

// SubscriptionLabels returns the labels that put an object in subscriptionID's lists.
func SubscriptionLabels(subscriptionID string) map[string]string {
	return map[string]string{LabelSubscription: strings.ToLower(subscriptionID)}
}

// SubscriptionSelector selects the objects of subscriptionID, for a list's LabelSelector.
func SubscriptionSelector(subscriptionID string) string {
	return LabelSubscription + "=" + strings.ToLower(subscriptionID)
}

// The name patterns of the OpenAPI documents (cluster: at most 54 characters, node pool and external
// auth: at most 15).
var (
	clusterNamePattern = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]{0,52}[a-zA-Z0-9])?$`)
	childNamePattern   = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]{0,13}[a-zA-Z0-9])?$`)
)

// Kind says which resource an ID names.
type Kind string

const (
	KindCluster      Kind = "HCPCluster"
	KindNodePool     Kind = "NodePool"
	KindExternalAuth Kind = "ExternalAuth"
)

// Object is where an ARM resource lives in the Kubernetes API.
type Object struct {
	Kind Kind
	// Namespace is the namespace of the ID's subscription and resource group.
	Namespace string
	// Name is the object's name: the cluster's lowercased, or <cluster>.<pool> (<cluster>.<auth>) lowercased.
	Name string
	// ClusterName is the HCPCluster's object name (for a cluster, Name again).
	ClusterName string
	// ID is the parsed resource ID, in the casing it was given.
	ID *arm.ResourceID
}

// Parse maps the resource ID of a cluster, node pool or external auth to its object. Errors say what is wrong with
// the ID, for a 400 or 404 to the caller.
func Parse(resourceID string) (Object, error) {
	id, err := arm.ParseResourceID(resourceID)
	if err != nil {
		return Object{}, fmt.Errorf("invalid resource ID %q: %w", resourceID, err)
	}
	switch {
	case strings.EqualFold(id.ResourceType.String(), ClusterType):
		if err := checkCluster(id); err != nil {
			return Object{}, fmt.Errorf("invalid resource ID %q: %w", resourceID, err)
		}
		name := ClusterName(id.Name)
		return Object{Kind: KindCluster, Namespace: Namespace(id.SubscriptionID, id.ResourceGroupName), Name: name, ClusterName: name, ID: id}, nil
	case strings.EqualFold(id.ResourceType.String(), NodePoolType):
		return parseChild(resourceID, id, KindNodePool, "node pool")
	case strings.EqualFold(id.ResourceType.String(), ExternalAuthType):
		return parseChild(resourceID, id, KindExternalAuth, "external auth")
	default:
		return Object{}, fmt.Errorf("invalid resource ID %q: resource type %q is none of %s, %s and %s", resourceID, id.ResourceType.String(), ClusterType, NodePoolType, ExternalAuthType)
	}
}

// parseChild maps the ID of a resource of a cluster (a node pool, an external auth) to its object,
// named <cluster>.<name> in the cluster's namespace.
func parseChild(resourceID string, id *arm.ResourceID, kind Kind, what string) (Object, error) {
	if err := checkCluster(id.Parent); err != nil {
		return Object{}, fmt.Errorf("invalid resource ID %q: %w", resourceID, err)
	}
	if !childNamePattern.MatchString(id.Name) {
		return Object{}, fmt.Errorf("invalid resource ID %q: %s name %q must be 1 to 15 letters, digits and '-', start with a letter and not end with '-'", resourceID, what, id.Name)
	}
	return Object{Kind: kind, Namespace: Namespace(id.SubscriptionID, id.ResourceGroupName), Name: ChildName(id.Parent.Name, id.Name),
		ClusterName: ClusterName(id.Parent.Name), ID: id}, nil
}

// checkCluster checks that id is a cluster directly in a resource group with a valid name.
func checkCluster(id *arm.ResourceID) error {
	if id == nil || !strings.EqualFold(id.ResourceType.String(), ClusterType) {
		return fmt.Errorf("not a %s ID", ClusterType)
	}
	if id.SubscriptionID == "" || id.ResourceGroupName == "" {
		return fmt.Errorf("a cluster ID names a subscription and a resource group")
	}
	if id.Parent == nil || !strings.EqualFold(id.Parent.ResourceType.Type, "resourceGroups") {
		return fmt.Errorf("a cluster must be a resource of its resource group, not of another resource")
	}
	if !clusterNamePattern.MatchString(id.Name) {
		return fmt.Errorf("cluster name %q must be 1 to 54 letters, digits and '-', start with a letter and not end with '-'", id.Name)
	}
	return nil
}

// namespacePrefix and the hash length keep a namespace a DNS-1123 label: 4 + 40 + 1 + 16 <= 63.
const (
	namespacePrefix       = "arm-"
	namespaceReadableMax  = 40
	namespaceHashHexChars = 16
)

// Namespace returns the namespace of a subscription and resource group: "arm-", the resource group
// made into a DNS label and cut short, "-", then a hash of the lowercased subscription and resource
// group, which alone tells namespaces apart (ARM treats names that differ only in case as one).
func Namespace(subscriptionID, resourceGroup string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(subscriptionID) + "/" + strings.ToLower(resourceGroup)))
	hash := hex.EncodeToString(sum[:])[:namespaceHashHexChars]
	readable := dnsLabelish(resourceGroup, namespaceReadableMax)
	if readable == "" {
		return namespacePrefix + hash
	}
	return namespacePrefix + readable + "-" + hash
}

// dnsLabelish lowercases s, turns every run of characters a DNS label may not hold ('.', '_', '(' ...)
// into one '-', and cuts it to at most max characters without a '-' at either end.
func dnsLabelish(s string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := b.String()
	if len(out) > max {
		out = out[:max]
	}
	return strings.Trim(out, "-")
}

// ClusterName returns the HCPCluster name of an ARM cluster name.
func ClusterName(armName string) string { return strings.ToLower(armName) }

// ChildName returns the object name of an ARM node pool or external auth of an ARM cluster:
// <cluster>.<name>.
func ChildName(armCluster, armName string) string {
	return strings.ToLower(armCluster) + "." + strings.ToLower(armName)
}

// ObjectAnnotations returns the annotations an object keeps its ARM ID in.
func ObjectAnnotations(o Object) map[string]string {
	return map[string]string{AnnotationResourceID: o.ID.String()}
}

// NamespaceAnnotations returns the annotations of the namespace of o's subscription and resource group.
func NamespaceAnnotations(o Object) map[string]string {
	return map[string]string{
		AnnotationSubscriptionID: o.ID.SubscriptionID,
		AnnotationResourceGroup:  o.ID.ResourceGroupName,
	}
}

// ARMName is how ARM names a resource in a response body.
type ARMName struct {
	ID   string
	Name string
	Type string
}

// FromAnnotations gives back the id, name and type of an object's ARM resource, as ARM spelled them
// when the object was created.
func FromAnnotations(annotations map[string]string) (ARMName, error) {
	raw, ok := annotations[AnnotationResourceID]
	if !ok {
		return ARMName{}, fmt.Errorf("the object has no annotation %s: it was not created through ARM", AnnotationResourceID)
	}
	o, err := Parse(raw)
	if err != nil {
		return ARMName{}, fmt.Errorf("annotation %s: %w", AnnotationResourceID, err)
	}
	return ARMName{ID: o.ID.String(), Name: o.ID.Name, Type: o.ID.ResourceType.String()}, nil
}

// Rules ARM applies to the parts of a path before a resource provider sees them; a request that breaks
// one never reaches the API, whose names take fewer characters.
var (
	// guidPattern is a GUID in the one form ARM sends (subscription IDs) and the shim issues (operation
	// IDs): 8-4-4-4-12 hex digits.
	guidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// resourceGroupPattern is ARM's ^[-\w._()]+$ (its \w takes Unicode letters and digits) at 1 to 90
	// characters, not ending in '.', as hcp-apiserver checks spec.azure.resourceGroup.
	resourceGroupPattern = regexp.MustCompile(`^[-\p{L}\p{N}_().]{0,89}[-\p{L}\p{N}_()]$`)
	// deploymentNamePattern: 1 to 64 letters, digits, '_', '(', ')', '-' and '.'.
	deploymentNamePattern = regexp.MustCompile(`^[-a-zA-Z0-9_().]{1,64}$`)
)

// IsGUID tells whether s is a GUID as ARM writes subscription IDs and the shim its operation IDs.
func IsGUID(s string) bool { return guidPattern.MatchString(s) }

// ValidResourceGroup tells whether s is a resource group name ARM accepts.
func ValidResourceGroup(s string) bool { return resourceGroupPattern.MatchString(s) }

// ValidDeploymentName tells whether s is a deployment name ARM accepts.
func ValidDeploymentName(s string) bool { return deploymentNamePattern.MatchString(s) }
