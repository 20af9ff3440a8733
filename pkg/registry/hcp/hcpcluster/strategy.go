// Package hcpcluster stores HCPClusters: how they are created, updated and
// validated, which fields clients can select on, and how kubectl prints them.
package hcpcluster

import (
	"github.com/google/uuid"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// kind tells the shared strategies where a HCPCluster's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.HCPCluster]{
	NamespaceScoped:      true,
	ClearStatus:          func(obj *hcp.HCPCluster) { obj.Status = hcp.HCPClusterStatus{} },
	CopyStatus:           func(obj, old *hcp.HCPCluster) { obj.Status = old.Status },
	CopySpec:             func(obj, old *hcp.HCPCluster) { obj.Spec = old.Spec },
	SpecChanged:          func(obj, old *hcp.HCPCluster) bool { return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) },
	Validate:             validation.ValidateHCPCluster,
	ValidateUpdate:       validation.ValidateHCPClusterUpdate,
	ValidateStatusUpdate: validation.ValidateHCPClusterStatusUpdate,
	// The create returns at once, Accepted; the controllers deliver the cluster, and the finalizer keeps
	// a deleted cluster until its control plane is gone from the management cluster.
	Created: func(obj *hcp.HCPCluster) {
		obj.Status.ProvisioningState = hcp.ProvisioningStateAccepted
		obj.Status.ClusterID = uuid.NewString()
		hcpregistry.AddFinalizer(obj, hcp.DeliveryFinalizer)
		// Unplaced, as placement says it: a cluster no management cluster can take costs no status write.
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{
			Type: hcp.ConditionPlaced, Status: metav1.ConditionFalse, Reason: hcp.ReasonNoManagementCluster,
			Message: clusterfacts.UnplacedMessage(obj.Spec.Location), ObservedGeneration: obj.Generation,
		})
	},
	SpecUpdated: func(obj, old *hcp.HCPCluster) {
		obj.Status.ProvisioningState = hcpregistry.StateAfterSpecChange(old.Status.ProvisioningState)
	},
	Deleting: func(obj *hcp.HCPCluster) { obj.Status.ProvisioningState = hcp.ProvisioningStateDeleting },
}

// NewStrategy returns the strategy for creating and updating HCPClusters. With a catalog, a new cluster,
// and one whose spec.version changes, is stored with its version resolved: the catalog is in memory, so
// the write that creates the cluster says what it runs, and no second write has to. With the service's
// settings, a new cluster is stored with its addresses (API, console, OIDC issuer), which follow from its
// ID: ARM shows them from the first answer on.
func NewStrategy(typer runtime.ObjectTyper, catalog *versioncatalog.Catalog, service *clusterfacts.Settings) hcpregistry.Strategy[*hcp.HCPCluster] {
	k := kind
	env := clusterfacts.DefaultEnvironment
	if service != nil {
		env = service.Complete().Environment
	}
	k.Created = func(obj *hcp.HCPCluster) {
		kind.Created(obj)
		if obj.Spec.DNS.BaseDomainPrefix == "" && obj.Name != "" {
			obj.Spec.DNS.BaseDomainPrefix = clusterfacts.DerivedBaseDomainPrefix(obj.Name, clusterfacts.PrefixRoom(env))
		}
		if catalog != nil {
			resolveVersion(obj, catalog)
		}
		if service != nil {
			setAddresses(obj, *service)
			if service.Azure {
				hcpregistry.AddFinalizer(obj, hcp.ManagedResourceGroupFinalizer)
				hcpregistry.AddFinalizer(obj, hcp.DNSFinalizer)
				awaitDNS(obj)
			} else {
				setAzureDisabled(obj)
			}
		}
	}
	k.Validate = func(obj *hcp.HCPCluster) field.ErrorList {
		return append(kind.Validate(obj), clusterfacts.ValidatePrefixRoom(field.NewPath("spec", "dns", "baseDomainPrefix"), obj.Spec.DNS.BaseDomainPrefix, env)...)
	}
	if catalog != nil {
		k.SpecUpdated = func(obj, old *hcp.HCPCluster) {
			kind.SpecUpdated(obj, old)
			if obj.Spec.Version != old.Spec.Version {
				resolveVersion(obj, catalog)
			}
		}
	}
	return hcpregistry.NewStrategy(typer, k)
}

// setAddresses writes the addresses of a new cluster; HyperShift's report of the API's address, the same,
// comes later.
func setAddresses(obj *hcp.HCPCluster, service clusterfacts.Settings) {
	name := clusterfacts.HostedClusterName(obj.Spec.DNS.BaseDomainPrefix, obj.Name)
	a, err := clusterfacts.AddressesOf(obj.Status.ClusterID, name, obj.Spec.Location, service)
	if err != nil {
		return // a cluster without addresses gets them from its controller
	}
	obj.Status.API.URL, obj.Status.Console.URL, obj.Status.IssuerURL = a.API, a.Console, a.Issuer
}

// setAzureDisabled says in a new cluster's conditions that the service provisions and checks nothing of
// its Azure side, in the create's own write: a server without Azure adds no write to a create.
func setAzureDisabled(obj *hcp.HCPCluster) {
	const message = "hcp-apiserver runs without --azure-config: the service neither checks nor provisions this cluster's Azure resources"
	for _, t := range []string{hcp.ConditionAzureIdentitiesValid, hcp.ConditionManagedResourceGroupReady, hcp.ConditionDNSReady} {
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{
			Type: t, Status: metav1.ConditionTrue, Reason: hcp.ReasonAzureDisabled, Message: message, ObservedGeneration: obj.Generation,
		})
	}
}

// awaitDNS says in a new cluster's conditions that its names do not resolve yet, so that nothing reads it as
// Succeeded before the DNS controller has looked at it.
func awaitDNS(obj *hcp.HCPCluster) {
	meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{
		Type: hcp.ConditionDNSReady, Status: metav1.ConditionFalse, Reason: hcp.ReasonAwaitingAddresses, ObservedGeneration: obj.Generation,
		Message: "the cluster's DNS records are written once its management cluster reports the addresses of its API and applications",
	})
}

// resolveVersion sets status.version.desired and VersionResolved, as the version controller does.
func resolveVersion(obj *hcp.HCPCluster, catalog *versioncatalog.Catalog) {
	r := clusterfacts.ResolveVersion(catalog, obj.Spec.Version.ChannelGroup, obj.Spec.Version.ID, obj.Status.Version.Desired)
	obj.Status.Version.Desired = r.Desired
	r.Condition.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&obj.Status.Conditions, r.Condition)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s hcpregistry.Strategy[*hcp.HCPCluster]) hcpregistry.StatusStrategy[*hcp.HCPCluster] {
	return hcpregistry.NewStatusStrategy(s)
}

// GetAttrs returns the labels and selectable fields of a HCPCluster.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.HCPCluster)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select HCPClusters on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.HCPCluster) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"status.managementCluster": obj.Status.ManagementCluster,
		"status.provisioningState": string(obj.Status.ProvisioningState),
	}, &obj.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
