// Package azureidentities checks a cluster's managed identities in Azure before it is delivered: every
// operator and service identity the cluster names exists, and the identities of its control plane hold the
// roles the service requires on the cluster's subnet, network security group and virtual network
// (RequiredRoles). The result is the cluster's AzureIdentitiesValid condition; pkg/controller/hcpcluster
// delivers nothing before it is True, so a cluster whose identities are wrong fails at once, naming the
// identity and the role, instead of failing later inside its control plane.
package azureidentities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "azure-identities"

// Reasons of AzureIdentitiesValid.
const (
	ReasonValid           = "IdentitiesValid"
	ReasonIdentityMissing = "IdentityNotFound"
	ReasonRoleMissing     = "RoleAssignmentMissing"
	// ReasonAzureRefused: Azure refused the service's question for good (it may not read the identity,
	// say); the check is tried again, as for a missing identity.
	ReasonAzureRefused = "AzureRefused"
	// ReasonAzureError: Azure could not be asked (throttled, unavailable); the check is tried again.
	ReasonAzureError = "AzureError"
)

// NetworkContributor is Azure's built-in Network Contributor role: it may join a subnet, attach to a
// network security group and read and write a virtual network's subnets, which is what the control
// plane's operators do with the customer's network. Contributor and Owner grant all of that too.
const (
	NetworkContributor = "/providers/Microsoft.Authorization/roleDefinitions/4d97b98b-1d4f-4787-a291-c67834d212e7"
	Contributor        = "/providers/Microsoft.Authorization/roleDefinitions/b24988ac-6180-42a0-ab88-20f7382dd24c"
	Owner              = "/providers/Microsoft.Authorization/roleDefinitions/8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
)

// Scope is a resource of the customer's network a role is required on.
type Scope string

const (
	ScopeSubnet               Scope = "subnet"
	ScopeNetworkSecurityGroup Scope = "network security group"
	ScopeVirtualNetwork       Scope = "virtual network"
)

// Requirement is a role one identity of a cluster must hold on some of its network's resources.
type Requirement struct {
	// Operator is the control plane operator (a key of controlPlaneOperators), or ServiceIdentity.
	Operator string
	// Role is the role required; Alternatives are roles that grant all it does.
	Role         string
	Alternatives []string
	Scopes       []Scope
}

// networkRole is Network Contributor, or a built-in role above it.
var networkRole = struct {
	role         string
	alternatives []string
}{NetworkContributor, []string{Contributor, Owner}}

// ServiceIdentity names the cluster's service managed identity in RequiredRoles.
const ServiceIdentity = "serviceManagedIdentity"

// RequiredRoles are the roles the service requires before it delivers a cluster: the operators that
// place load balancers and nodes in the customer's network, and the service's own identity, which
// manages the control plane's private endpoint. A cluster that names no identity for an operator is
// not asked for its roles. The README's "The Azure side" section lists this table.
var RequiredRoles = []Requirement{
	{Operator: "control-plane", Role: networkRole.role, Alternatives: networkRole.alternatives, Scopes: []Scope{ScopeSubnet, ScopeNetworkSecurityGroup, ScopeVirtualNetwork}},
	{Operator: "cloud-controller-manager", Role: networkRole.role, Alternatives: networkRole.alternatives, Scopes: []Scope{ScopeSubnet, ScopeNetworkSecurityGroup}},
	{Operator: "ingress", Role: networkRole.role, Alternatives: networkRole.alternatives, Scopes: []Scope{ScopeSubnet}},
	{Operator: "cluster-api-azure", Role: networkRole.role, Alternatives: networkRole.alternatives, Scopes: []Scope{ScopeSubnet}},
	{Operator: ServiceIdentity, Role: networkRole.role, Alternatives: networkRole.alternatives, Scopes: []Scope{ScopeNetworkSecurityGroup, ScopeVirtualNetwork}},
}

// Identities is what the controller asks Azure (pkg/azure.IdentitiesClient).
type Identities interface {
	GetIdentity(ctx context.Context, resourceID string) (principalID, clientID string, err error)
	MissingRoles(ctx context.Context, scope, principalID string, roleDefinitionIDs []string) ([]string, error)
}

// Controller keeps AzureIdentitiesValid of every live cluster.
type Controller struct {
	client     versioned.Interface
	clusters   listers.HCPClusterLister
	identities Identities
	queue      *queue.Queue
	synced     cache.InformerSynced
	// recheck is how soon a refused cluster is checked again: the customer may fix the identity.
	recheck time.Duration
}

// New returns the controller; recheck is how soon a refused cluster is checked again.
func New(client versioned.Interface, clusters informers.HCPClusterInformer, identities Identities, recheck time.Duration) (*Controller, error) {
	c := &Controller{client: client, clusters: clusters.Lister(), identities: identities, synced: clusters.Informer().HasSynced, recheck: recheck}
	c.queue = queue.New(Name, c.sync)
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	return c, nil
}

// Run checks clusters until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	c.queue.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	cluster, err := c.clusters.HCPClusters(namespace).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && cluster.DeletionTimestamp != nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// Identities are checked once per generation: operatorsAuthentication is what may change. A cluster
	// created while the service provisioned no Azure was never checked.
	if cond := clusterstatus.AzureChecked(cluster, v1alpha1.ConditionAzureIdentitiesValid); cond != nil && cond.ObservedGeneration == cluster.Generation {
		return 0, nil
	}
	problem, checkErr := c.check(ctx, cluster)
	if refused := refusal(checkErr); refused != nil {
		problem, checkErr = refused, nil
	}
	// Only a cluster not delivered yet is held back, so only such a one fails; a delivered one keeps its
	// control plane, and the condition says what is wrong with its identities now.
	published := clusterstatus.Published(cluster)
	_, err = clusterstatus.Update(ctx, c.client, Name, cluster, func(cluster *v1alpha1.HCPCluster) {
		switch {
		case checkErr != nil:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionAzureIdentitiesValid, metav1.ConditionUnknown, ReasonAzureError,
				"the cluster's managed identities could not be checked yet: "+checkErr.Error())
		case problem != nil:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionAzureIdentitiesValid, metav1.ConditionFalse, problem.reason, problem.message)
			if !published {
				cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateFailed
			}
		default:
			// A cluster failed before its first delivery, now valid, is provisioned again: the customer
			// fixed what was refused, or another check will say what is wrong.
			if !published && cluster.Status.ProvisioningState == v1alpha1.ProvisioningStateFailed {
				cluster.Status.ProvisioningState = v1alpha1.ProvisioningStateAccepted
			}
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionAzureIdentitiesValid, metav1.ConditionTrue, ReasonValid,
				"every managed identity the cluster names exists, and its control plane's identities hold the roles the service requires")
		}
	})
	switch {
	case err != nil:
		return 0, err
	case checkErr != nil:
		return 0, checkErr // retried with the queue's backoff
	case problem != nil:
		return clusterstatus.RecheckAfter(cluster, v1alpha1.ConditionAzureIdentitiesValid, c.recheck, time.Now()), nil
	}
	return 0, nil
}

// problem is why a cluster's identities are refused.
type problem struct{ reason, message string }

// refusal is the problem an error of Azure's is when Azure will give the same answer to the same question
// (a 4xx other than throttling and timeouts), nil when asking again may help.
func refusal(err error) *problem {
	if !azure.IsRefusal(err) {
		return nil
	}
	return &problem{ReasonAzureRefused, "Azure refused the service's check of the cluster's managed identities: " + err.Error()}
}

// check returns why the cluster's identities are refused, nil when they are not, or the error that kept
// Azure from answering.
func (c *Controller) check(ctx context.Context, cluster *v1alpha1.HCPCluster) (*problem, error) {
	ids := cluster.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities
	type named struct{ what, operator, id string }
	var all []named
	for _, op := range sortedKeys(ids.ControlPlaneOperators) {
		all = append(all, named{fmt.Sprintf("control plane operator %q", op), op, ids.ControlPlaneOperators[op]})
	}
	for _, op := range sortedKeys(ids.DataPlaneOperators) {
		all = append(all, named{fmt.Sprintf("data plane operator %q", op), "", ids.DataPlaneOperators[op]})
	}
	if ids.ServiceManagedIdentity != "" {
		all = append(all, named{"the service managed identity", ServiceIdentity, ids.ServiceManagedIdentity})
	}

	principals := map[string]string{} // by operator, of those RequiredRoles may ask about
	for _, n := range all {
		principalID, _, err := c.identities.GetIdentity(ctx, n.id)
		var notFound *azure.IdentityNotFoundError
		switch {
		case errors.As(err, &notFound):
			return &problem{ReasonIdentityMissing, fmt.Sprintf("the managed identity %s of %s does not exist", n.id, n.what)}, nil
		case err != nil:
			return nil, fmt.Errorf("%s: %w", n.what, err)
		}
		if n.operator != "" {
			principals[n.operator] = principalID
		}
	}

	scopes, err := networkScopes(cluster)
	if err != nil {
		return &problem{ReasonRoleMissing, err.Error()}, nil
	}
	for _, req := range RequiredRoles {
		principalID, ok := principals[req.Operator]
		if !ok {
			continue
		}
		who := fmt.Sprintf("control plane operator %q", req.Operator)
		id := ids.ControlPlaneOperators[req.Operator]
		if req.Operator == ServiceIdentity {
			who, id = "the service managed identity", ids.ServiceManagedIdentity
		}
		roles := append([]string{req.Role}, req.Alternatives...)
		for _, s := range req.Scopes {
			missing, err := c.identities.MissingRoles(ctx, scopes[s], principalID, roles)
			if err != nil {
				return nil, fmt.Errorf("role assignments of %s: %w", who, err)
			}
			if len(missing) == len(roles) { // none of them held
				return &problem{ReasonRoleMissing, fmt.Sprintf("the managed identity %s of %s (principal %s) lacks the role %s (or %s) on the %s %s",
					id, who, principalID, req.Role, strings.Join(req.Alternatives, " or "), s, scopes[s])}, nil
			}
		}
	}
	return nil, nil
}

// networkScopes are the resource IDs of the cluster's subnet, its network security group and the
// subnet's virtual network.
func networkScopes(cluster *v1alpha1.HCPCluster) (map[Scope]string, error) {
	subnet, err := arm.ParseResourceID(cluster.Spec.Platform.SubnetID)
	if err != nil || subnet.Parent == nil {
		return nil, fmt.Errorf("spec.platform.subnetID %q is not a subnet's resource ID", cluster.Spec.Platform.SubnetID)
	}
	return map[Scope]string{
		ScopeSubnet:               cluster.Spec.Platform.SubnetID,
		ScopeNetworkSecurityGroup: cluster.Spec.Platform.NetworkSecurityGroupID,
		ScopeVirtualNetwork:       subnet.Parent.String(),
	}, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
