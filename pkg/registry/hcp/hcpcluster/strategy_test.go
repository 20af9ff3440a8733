package hcpcluster

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

func TestCreateAcceptsAndStartsGeneration(t *testing.T) {
	c := validCluster(t)
	c.Status.ProvisioningState = hcp.ProvisioningStateSucceeded
	c.Status.ManagementCluster = "mc-1"
	NewStrategy(registrytest.Scheme, nil, nil).PrepareForCreate(context.Background(), c)
	if c.Status.ProvisioningState != hcp.ProvisioningStateAccepted || c.Status.ManagementCluster != "" || c.Generation != 1 {
		t.Errorf("after create: status %+v generation %d, want only Accepted and a cluster ID, and generation 1", c.Status, c.Generation)
	}
	if _, err := uuid.Parse(c.Status.ClusterID); err != nil {
		t.Errorf("status.clusterID %q is not a UUID: %v", c.Status.ClusterID, err)
	}
	if !slices.Equal(c.Finalizers, []string{hcp.DeliveryFinalizer}) {
		t.Errorf("finalizers %v, want %s", c.Finalizers, hcp.DeliveryFinalizer)
	}
	// Stored unplaced, in the words placement would write, so that placement writes only when it places.
	if placed := meta.FindStatusCondition(c.Status.Conditions, hcp.ConditionPlaced); placed == nil || placed.Status != metav1.ConditionFalse ||
		placed.Reason != hcp.ReasonNoManagementCluster || placed.Message != clusterfacts.UnplacedMessage(c.Spec.Location) {
		t.Errorf("after create: Placed %+v, want False %s as placement words it", placed, hcp.ReasonNoManagementCluster)
	}
	other := validCluster(t)
	NewStrategy(registrytest.Scheme, nil, nil).PrepareForCreate(context.Background(), other)
	if other.Status.ClusterID == c.Status.ClusterID {
		t.Error("two clusters got the same cluster ID")
	}
}

// A service without Azure says so in a new cluster's Azure conditions, in the create's write; one with
// Azure keeps the cluster until its managed resource group is gone.
func TestCreateSaysWhatOfAzureIsDone(t *testing.T) {
	c := validCluster(t)
	NewStrategy(registrytest.Scheme, nil, &clusterfacts.Settings{}).PrepareForCreate(context.Background(), c)
	for _, condition := range []string{hcp.ConditionAzureIdentitiesValid, hcp.ConditionManagedResourceGroupReady, hcp.ConditionDNSReady} {
		if got := meta.FindStatusCondition(c.Status.Conditions, condition); got == nil || got.Status != metav1.ConditionTrue ||
			got.Reason != hcp.ReasonAzureDisabled || !strings.Contains(got.Message, "--azure-config") {
			t.Errorf("without Azure, %s is %+v; want True %s saying why", condition, got, hcp.ReasonAzureDisabled)
		}
	}
	if slices.Contains(c.Finalizers, hcp.ManagedResourceGroupFinalizer) || slices.Contains(c.Finalizers, hcp.DNSFinalizer) {
		t.Errorf("without Azure, finalizers %v hold one of the Azure side's", c.Finalizers)
	}

	c = validCluster(t)
	NewStrategy(registrytest.Scheme, nil, &clusterfacts.Settings{Azure: true}).PrepareForCreate(context.Background(), c)
	if meta.FindStatusCondition(c.Status.Conditions, hcp.ConditionAzureIdentitiesValid) != nil ||
		meta.FindStatusCondition(c.Status.Conditions, hcp.ConditionManagedResourceGroupReady) != nil {
		t.Errorf("with Azure, a new cluster's conditions %+v say something of Azure before its controllers looked", c.Status.Conditions)
	}
	if !slices.Contains(c.Finalizers, hcp.ManagedResourceGroupFinalizer) || !slices.Contains(c.Finalizers, hcp.DNSFinalizer) {
		t.Errorf("with Azure, finalizers %v lack %s or %s", c.Finalizers, hcp.ManagedResourceGroupFinalizer, hcp.DNSFinalizer)
	}
	// Its names resolve to nothing yet: nothing may read it as Succeeded before DNS says otherwise.
	if got := meta.FindStatusCondition(c.Status.Conditions, hcp.ConditionDNSReady); got == nil || got.Status != metav1.ConditionFalse ||
		got.Reason != hcp.ReasonAwaitingAddresses {
		t.Errorf("with Azure, a new cluster's DNSReady is %+v, want False %s", got, hcp.ReasonAwaitingAddresses)
	}
}

// With the service's settings, a new cluster is stored with its addresses: ARM answers a create with them.
func TestCreateWritesTheAddresses(t *testing.T) {
	c := validCluster(t)
	NewStrategy(registrytest.Scheme, nil, &clusterfacts.Settings{}).PrepareForCreate(context.Background(), c)
	prefix := c.Spec.DNS.BaseDomainPrefix
	if !strings.HasPrefix(c.Status.API.URL, "https://api."+prefix+".") || !strings.HasSuffix(c.Status.API.URL, "."+c.Spec.Location+".hcp.aro.example:443") {
		t.Errorf("status.api.url %q, want https://api.%s.<shard>.%s.hcp.aro.example:443", c.Status.API.URL, prefix, c.Spec.Location)
	}
	if want := "https://oidc.hcp.aro.example/" + c.Status.ClusterID; c.Status.IssuerURL != want {
		t.Errorf("status.issuerURL %q, want %q", c.Status.IssuerURL, want)
	}
	if !strings.HasPrefix(c.Status.Console.URL, "https://console-openshift-console.apps."+prefix+".") {
		t.Errorf("status.console.url %q", c.Status.Console.URL)
	}
}

func TestSpecChangeOfAProvisionedClusterIsAnUpdate(t *testing.T) {
	s := NewStrategy(registrytest.Scheme, nil, nil)
	for before, want := range map[hcp.ProvisioningState]hcp.ProvisioningState{
		hcp.ProvisioningStateSucceeded:    hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateFailed:       hcp.ProvisioningStateUpdating,
		hcp.ProvisioningStateAccepted:     hcp.ProvisioningStateAccepted,
		hcp.ProvisioningStateProvisioning: hcp.ProvisioningStateProvisioning,
		hcp.ProvisioningStateDeleting:     hcp.ProvisioningStateDeleting,
	} {
		old := validCluster(t)
		old.Status.ProvisioningState = before
		updated := old.DeepCopy()
		updated.Spec.Version.ID = "4.21"
		s.PrepareForUpdate(context.Background(), updated, old)
		if got := updated.Status.ProvisioningState; got != want {
			t.Errorf("a spec change of a %s cluster made it %s, want %s", before, got, want)
		}
	}
}

func TestDeleteMarksDeleting(t *testing.T) {
	c := validCluster(t)
	c.Status.ProvisioningState = hcp.ProvisioningStateSucceeded
	if graceful := NewStrategy(registrytest.Scheme, nil, nil).CheckGracefulDelete(context.Background(), c, &metav1.DeleteOptions{}); graceful {
		t.Error("a delete asked for a grace period")
	}
	if c.Status.ProvisioningState != hcp.ProvisioningStateDeleting {
		t.Errorf("provisioningState %s after delete, want Deleting", c.Status.ProvisioningState)
	}
}

func TestGenerationCountsSpecChangesOnly(t *testing.T) {
	s := NewStrategy(registrytest.Scheme, nil, nil)
	old := validCluster(t)
	old.Generation = 4
	old.Status.ProvisioningState = hcp.ProvisioningStateSucceeded

	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"team": "sre"}
	labelled.Status = hcp.HCPClusterStatus{}
	s.PrepareForUpdate(context.Background(), labelled, old)
	if labelled.Generation != 4 {
		t.Errorf("a label change moved generation to %d", labelled.Generation)
	}
	if labelled.Status.ProvisioningState != hcp.ProvisioningStateSucceeded {
		t.Errorf("an update of the main resource changed status to %+v", labelled.Status)
	}

	upgraded := old.DeepCopy()
	upgraded.Spec.Version.ID = "4.21"
	s.PrepareForUpdate(context.Background(), upgraded, old)
	if upgraded.Generation != 5 {
		t.Errorf("a spec change left generation at %d, want 5", upgraded.Generation)
	}
}

func TestStatusUpdateKeepsSpec(t *testing.T) {
	old := validCluster(t)
	updated := old.DeepCopy()
	updated.Spec.Version.ID = "4.21"
	updated.Status.ProvisioningState = hcp.ProvisioningStateProvisioning
	NewStatusStrategy(NewStrategy(registrytest.Scheme, nil, nil)).PrepareForUpdate(context.Background(), updated, old)
	if updated.Spec.Version.ID != "4.20" {
		t.Errorf("a status update changed spec.version.id to %q", updated.Spec.Version.ID)
	}
	if updated.Status.ProvisioningState != hcp.ProvisioningStateProvisioning {
		t.Errorf("a status update lost the new status: %+v", updated.Status)
	}
}

func TestSelectableFields(t *testing.T) {
	c := validCluster(t)
	c.Status.ManagementCluster = "mc-1"
	c.Status.ProvisioningState = hcp.ProvisioningStateAccepted
	got := SelectableFields(c)
	for field, want := range map[string]string{
		"metadata.name": "foo", "metadata.namespace": "test",
		"status.managementCluster": "mc-1", "status.provisioningState": "Accepted",
	} {
		if got[field] != want {
			t.Errorf("field %s = %q, want %q", field, got[field], want)
		}
	}
}

// A cluster is stored with its version resolved, and again when its spec.version changes: no second write
// has to follow the create.
func TestCreateAndVersionChangeResolveTheVersion(t *testing.T) {
	catalog := versioncatalog.Default()
	s := NewStrategy(registrytest.Scheme, catalog, nil)
	c := validCluster(t)
	s.PrepareForCreate(context.Background(), c)
	want := catalog.ResolveCluster(c.Spec.Version.ChannelGroup, c.Spec.Version.ID, "")
	resolved := meta.FindStatusCondition(c.Status.Conditions, hcp.ConditionVersionResolved)
	if !want.Resolved || c.Status.Version.Desired != want.Desired || resolved == nil || resolved.Status != metav1.ConditionTrue || resolved.ObservedGeneration != 1 {
		t.Fatalf("after create: version %q, VersionResolved %+v; want %q, True at generation 1", c.Status.Version.Desired, resolved, want.Desired)
	}

	updated := c.DeepCopy()
	updated.Spec.Version.ID = "9.99"
	s.PrepareForUpdate(context.Background(), updated, c)
	resolved = meta.FindStatusCondition(updated.Status.Conditions, hcp.ConditionVersionResolved)
	if resolved == nil || resolved.Status != metav1.ConditionFalse || resolved.Reason != "NotInCatalog" || updated.Status.Version.Desired != want.Desired {
		t.Errorf("after asking for 9.99: version %q, VersionResolved %+v; want %q kept and NotInCatalog", updated.Status.Version.Desired, resolved, want.Desired)
	}
}

// A cluster created without a DNS prefix gets one derived from its name, short enough for the control
// plane namespace HyperShift makes of it; a long name derives a prefix of its start and a hash.
func TestCreateDerivesTheDNSPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, env, want string
	}{
		{name: "short", env: "dev", want: "short"},
		{name: "exactly-fifteen", env: "dev", want: "exactly-fifteen"},
		{name: "a-cluster-name-longer-than-fifteen", env: "dev"},
		{name: "a-cluster-name-longer-than-fifteen", env: "production"},
		{name: "abcdefghi------x", env: "dev"},
	} {
		c := validCluster(t)
		c.Name, c.Spec.DNS.BaseDomainPrefix = tc.name, ""
		s := NewStrategy(registrytest.Scheme, nil, &clusterfacts.Settings{Environment: tc.env})
		s.PrepareForCreate(context.Background(), c)
		prefix := c.Spec.DNS.BaseDomainPrefix
		if tc.want != "" && prefix != tc.want {
			t.Errorf("%s in %s: prefix %q, want %q", tc.name, tc.env, prefix, tc.want)
		}
		if errs := s.Validate(context.Background(), c); len(errs) > 0 {
			t.Errorf("%s in %s: the derived prefix %q is refused: %v", tc.name, tc.env, prefix, errs)
		}
		if cp := clusterfacts.ControlPlaneNamespace(tc.env, c.Status.ClusterID, prefix); len(cp) > 63 {
			t.Errorf("%s in %s: control plane namespace %q is longer than a DNS label", tc.name, tc.env, cp)
		}
		again := validCluster(t)
		again.Name, again.Spec.DNS.BaseDomainPrefix = tc.name, ""
		s.PrepareForCreate(context.Background(), again)
		if again.Spec.DNS.BaseDomainPrefix != prefix {
			t.Errorf("%s: a second create derived %q, then %q", tc.name, prefix, again.Spec.DNS.BaseDomainPrefix)
		}
	}
	// A prefix the caller chose that does not fit the environment is refused at the create, not by HyperShift.
	c := validCluster(t)
	c.Spec.DNS.BaseDomainPrefix = "fifteen-letters"
	s := NewStrategy(registrytest.Scheme, nil, &clusterfacts.Settings{Environment: "production-east"})
	s.PrepareForCreate(context.Background(), c)
	errs := s.Validate(context.Background(), c)
	if len(errs) != 1 || errs[0].Field != "spec.dns.baseDomainPrefix" {
		t.Errorf("a 15-character prefix in environment production-east: %v, want one error at spec.dns.baseDomainPrefix", errs)
	}
}
