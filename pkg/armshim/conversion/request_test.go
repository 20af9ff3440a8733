package conversion

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// TestClusterUpdateMutability changes one field of a cluster's GET body and PUTs it back.
func TestClusterUpdateMutability(t *testing.T) {
	tests := []struct {
		name    string
		version APIVersion
		path    string
		value   any
		// wantErr is the ARM path of the refusal; "" when the change is allowed.
		wantErr string
		check   func(*hcpv1alpha1.HCPCluster) bool
	}{
		{name: "pod CIDR", version: V20260901Preview, path: "properties.network.podCidr", value: "10.132.0.0/14", wantErr: "properties.network.podCidr"},
		{name: "host prefix", version: V20260901Preview, path: "properties.network.hostPrefix", value: 24, wantErr: "properties.network.hostPrefix"},
		{name: "subnet", version: V20260901Preview, path: "properties.platform.subnetId", value: testVNet + "other", wantErr: "properties.platform.subnetId"},
		{name: "API visibility", version: V20260901Preview, path: "properties.api.visibility", value: "Private", wantErr: "properties.api.visibility"},
		{name: "ingress", version: V20260901Preview, path: "properties.ingress.type", value: "Public", wantErr: "properties.ingress.type"},
		{name: "FIPS", version: V20260901Preview, path: "properties.cryptoRestrictions", value: "None", wantErr: "properties.cryptoRestrictions"},
		{name: "location", version: V20260901Preview, path: "location", value: "westus", wantErr: "location"},
		{name: "KMS key name", version: V20260901Preview, path: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name", value: "other", wantErr: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name"},
		{
			name: "KMS key version, updatable since 2026-06-30-preview", version: V20260630Preview,
			path: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version", value: "v2",
			check: func(c *hcpv1alpha1.HCPCluster) bool {
				return c.Spec.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Version == "v2"
			},
		},
		{
			name: "KMS key version, create-only before", version: V20251223Preview,
			path: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version", value: "v2",
			wantErr: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.version",
		},
		{
			name: "2024 vault name, in activeKey", version: V20240610Preview,
			path: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.vaultName", value: "other-vault",
			wantErr: "properties.etcd.dataEncryption.customerManaged.kms.activeKey.vaultName",
		},
		{
			name: "version, updatable since 2025-12-23-preview", version: V20251223Preview, path: "properties.version.id", value: "4.21",
			check: func(c *hcpv1alpha1.HCPCluster) bool { return c.Spec.Version.ID == "4.21" },
		},
		{name: "version, create-only in 2024-06-10-preview", version: V20240610Preview, path: "properties.version.id", value: "4.21", wantErr: "properties.version.id"},
		{
			name: "subnet in another casing is the same subnet", version: V20260901Preview, path: "properties.platform.subnetId", value: strings.ToUpper(testVNet + "workers"),
			check: func(c *hcpv1alpha1.HCPCluster) bool { return c.Spec.Platform.SubnetID == testVNet+"workers" },
		},
		{
			name: "location as ARM also writes it", version: V20260901Preview, path: "location", value: "East US",
			check: func(c *hcpv1alpha1.HCPCluster) bool { return c.Spec.Location == "eastus" },
		},
		{
			name: "authorized CIDRs", version: V20260901Preview, path: "properties.api.authorizedCidrs", value: []string{"198.51.100.0/24"},
			check: func(c *hcpv1alpha1.HCPCluster) bool {
				return len(c.Spec.API.AuthorizedCIDRs) == 1 && c.Spec.API.AuthorizedCIDRs[0] == "198.51.100.0/24"
			},
		},
		{
			name: "operator identities", version: V20260901Preview,
			path: "properties.platform.operatorsAuthentication.userAssignedIdentities.serviceManagedIdentity", value: testUAI + "other",
			check: func(c *hcpv1alpha1.HCPCluster) bool {
				return c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ServiceManagedIdentity == testUAI+"other"
			},
		},
		{
			name: "read-only URL is ignored", version: V20260901Preview, path: "properties.api.url", value: "https://elsewhere.example.com",
			check: func(c *hcpv1alpha1.HCPCluster) bool {
				return c.Status.API.URL == "https://api.dev.abcd.eastus.aroapp.io:6443"
			},
		},
		{
			name: "read-only provisioning state is ignored", version: V20260901Preview, path: "properties.provisioningState", value: "Failed",
			check: func(c *hcpv1alpha1.HCPCluster) bool {
				return c.Status.ProvisioningState == hcpv1alpha1.ProvisioningStateSucceeded
			},
		},
	}
	existing := withClusterStatus(createCluster(t, V20260901Preview, fullClusterBody))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := jsonMap(t, clusterJSON(t, tt.version, existing))
			setPath(t, body, tt.path, tt.value)
			got, errs := ClusterFromARM(Request{APIVersion: tt.version, ResourceID: testClusterID, Body: mustJSON(t, body)}, existing)
			if tt.wantErr != "" {
				assertRefusedAt(t, errs, tt.wantErr)
				return
			}
			if len(errs) > 0 {
				t.Fatalf("refused: %v", errs)
			}
			if !tt.check(got) {
				t.Errorf("the update did not do what it should:\n%s", clusterJSON(t, tt.version, got))
			}
		})
	}
}

func TestNodePoolUpdateMutability(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		value   any
		wantErr string
		check   func(*hcpv1alpha1.NodePool) bool
	}{
		{name: "VM size", path: "properties.platform.vmSize", value: "Standard_D4s_v3", wantErr: "properties.platform.vmSize"},
		{name: "disk size", path: "properties.platform.osDisk.sizeGiB", value: 256, wantErr: "properties.platform.osDisk.sizeGiB"},
		{name: "auto repair", path: "properties.autoRepair", value: false, wantErr: "properties.autoRepair"},
		{
			name: "version", path: "properties.version.id", value: "4.20.9",
			check: func(np *hcpv1alpha1.NodePool) bool { return np.Spec.Version.ID == "4.20.9" },
		},
		{
			name: "labels", path: "properties.labels", value: []map[string]string{{"key": "tier", "value": "db"}},
			check: func(np *hcpv1alpha1.NodePool) bool { return len(np.Spec.Labels) == 1 && np.Spec.Labels["tier"] == "db" },
		},
		{
			name: "duplicate labels", path: "properties.labels", value: []map[string]string{{"key": "a"}, {"key": "a"}},
			wantErr: "properties.labels[1].key",
		},
	}
	existing := withNodePoolStatus(createNodePool(t, V20260901Preview, fullNodePoolBody))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := jsonMap(t, nodePoolJSON(t, V20260901Preview, existing))
			setPath(t, body, tt.path, tt.value)
			got, errs := NodePoolFromARM(Request{APIVersion: V20260901Preview, ResourceID: testPoolID, Body: mustJSON(t, body)}, existing)
			if tt.wantErr != "" {
				assertRefusedAt(t, errs, tt.wantErr)
				return
			}
			if len(errs) > 0 {
				t.Fatalf("refused: %v", errs)
			}
			if !tt.check(got) {
				t.Errorf("the update did not do what it should:\n%s", nodePoolJSON(t, V20260901Preview, got))
			}
		})
	}
}

// TestReadOnlyFieldsAreIgnored creates a cluster from a full GET body, read-only fields and all:
// the result is the same as from the body without them.
func TestReadOnlyFieldsAreIgnored(t *testing.T) {
	plain := createCluster(t, V20260901Preview, fullClusterBody)
	full := withClusterStatus(plain.DeepCopy())
	body := jsonMap(t, clusterJSON(t, V20260901Preview, full))
	setPath(t, body, "properties.dns.baseDomain", "abcd.eastus.aroapp.io")
	setPath(t, body, "identity.principalId", "99999999-9999-4999-8999-999999999999")
	fromGet := createCluster(t, V20260901Preview, string(mustJSON(t, body)))
	assertSameJSON(t, "cluster", plain, fromGet)
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name    string
		req     Request
		wantErr string
	}{
		{name: "wrong JSON type", req: Request{Body: []byte(`{"location":"eastus","properties":{"network":{"hostPrefix":"23"}}}`)}, wantErr: "properties.network.hostPrefix"},
		{name: "not JSON", req: Request{Body: []byte(`{"location":`)}, wantErr: "body"},
		{name: "no body", req: Request{Body: nil}, wantErr: "body"},
		{name: "no location", req: Request{Body: []byte(`{"properties":{}}`)}, wantErr: "location"},
		{name: "no properties", req: Request{Body: []byte(`{"location":"eastus"}`)}, wantErr: "properties"},
		{name: "unknown identity type", req: Request{Body: []byte(`{"location":"eastus","identity":{"type":"Magic"},"properties":{}}`)}, wantErr: "identity.type"},
		{name: "a node pool's ID", req: Request{ResourceID: testPoolID, Body: []byte(fullClusterBody)}, wantErr: "id"},
		{name: "unknown api-version", req: Request{APIVersion: "2020-01-01", Body: []byte(fullClusterBody)}, wantErr: "api-version"},
		{name: "bad system data", req: Request{SystemData: `{"createdByType":"Robot"}`, Body: []byte(fullClusterBody)}, wantErr: "systemData"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			if req.APIVersion == "" {
				req.APIVersion = V20260901Preview
			}
			if req.ResourceID == "" {
				req.ResourceID = testClusterID
			}
			_, errs := ClusterFromARM(req, nil)
			assertOneFieldError(t, errs, tt.wantErr)
		})
	}
}

func TestSystemDataKeepsTheCreator(t *testing.T) {
	c := createCluster(t, V20260901Preview, fullClusterBody)
	bob := `{"createdBy":"bob@example.com","createdByType":"User","createdAt":"2026-12-02T10:00:00Z",` +
		`"lastModifiedBy":"bob@example.com","lastModifiedByType":"Application","lastModifiedAt":"2026-12-02T10:00:00Z"}`
	updated, errs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID, Body: []byte(fullClusterBody), SystemData: bob}, c)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	sd := systemDataFrom(updated.Annotations)
	if deref(sd.CreatedBy) != "alice@example.com" || deref(sd.CreatedAt) != "2026-12-01T10:00:00Z" {
		t.Errorf("the creator changed: %+v", sd)
	}
	if deref(sd.LastModifiedBy) != "bob@example.com" || deref(sd.LastModifiedByType) != "Application" || deref(sd.LastModifiedAt) != "2026-12-02T10:00:00Z" {
		t.Errorf("the last change is not bob's: %+v", sd)
	}
}

// TestDefaultsTheAPILacks creates the smallest cluster: ARM's autoscaling and managed resource
// group defaults come from the conversion; a PUT without tags keeps none.
func TestDefaultsTheAPILacks(t *testing.T) {
	body := `{"location":"eastus","properties":{"version":{"id":"4.20"},"platform":{"subnetId":"` + testVNet + `workers",` +
		`"networkSecurityGroupId":"` + testRGID + `/providers/Microsoft.Network/networkSecurityGroups/nsg"}}}`
	c, errs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID, Body: []byte(body)}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	as := c.Spec.Autoscaling
	if deref(as.MaxPodGracePeriodSeconds) != 600 || deref(as.MaxNodeProvisionTimeSeconds) != 900 || deref(as.PodPriorityThreshold) != -10 || as.MaxNodesTotal != nil {
		t.Errorf("autoscaling = %+v, want ARM's defaults", as)
	}
	if mrg := c.Spec.Platform.ManagedResourceGroup; !strings.HasPrefix(mrg, "arohcp-Dev-Cluster-") || len(mrg) != len("arohcp-Dev-Cluster-")+36 {
		t.Errorf("managed resource group = %q, want arohcp-Dev-Cluster-<uuid>", mrg)
	}
	if _, ok := c.Annotations[AnnotationTags]; ok {
		t.Errorf("tags annotation on a cluster without tags: %v", c.Annotations)
	}
	if c.Namespace != names.Namespace(testSub, "dev-rg") || c.Name != "dev-cluster" || c.Annotations[names.AnnotationResourceID] != testClusterID {
		t.Errorf("object %s/%s with annotations %v", c.Namespace, c.Name, c.Annotations)
	}
	if c.Spec.Azure.SubscriptionID != testSub || c.Spec.Azure.ResourceGroup != "Dev-RG" {
		t.Errorf("spec.azure = %+v", c.Spec.Azure)
	}
}

// TestPlatformManagedEtcd: before 2026-06-30-preview, PlatformManaged is a cluster without a
// customer managed key, and that choice is create-only like the rest of etcd.
func TestPlatformManagedEtcd(t *testing.T) {
	body := jsonMap(t, []byte(fullClusterBody))
	setPath(t, body, "properties.etcd", map[string]any{"dataEncryption": map[string]any{"keyManagementMode": "PlatformManaged"}})
	c := createCluster(t, V20251223Preview, string(mustJSON(t, body)))
	if c.Spec.Etcd.DataEncryption != nil {
		t.Fatalf("PlatformManaged gave a data encryption profile: %+v", c.Spec.Etcd.DataEncryption)
	}
	_, errs := ClusterFromARM(Request{APIVersion: V20251223Preview, ResourceID: testClusterID, Body: []byte(fullClusterBody)}, c)
	assertOneFieldError(t, errs, "properties.etcd.dataEncryption.keyManagementMode")
}

func assertOneFieldError(t *testing.T, errs field.ErrorList, path string) {
	t.Helper()
	if len(errs) != 1 || errs[0].Field != path {
		t.Fatalf("errors = %v, want one at %s", errs, path)
	}
	if errs[0].Detail == "" && errs[0].Type != field.ErrorTypeRequired && errs[0].Type != field.ErrorTypeDuplicate {
		t.Errorf("error at %s says nothing: %v", path, errs[0])
	}
}

// assertImmutable requires the frontend's errors of one changed create-only field: "Forbidden: field is
// immutable" at path, after the same error at each object between properties and path whose whole the
// frontend compares (network, platform, etcd, clusterImageRegistry), outermost first.
func assertImmutable(t *testing.T, errs field.ErrorList, path string) {
	t.Helper()
	var want []string
	parts := strings.Split(path, ".")
	if len(parts) > 2 && slices.Contains([]string{"network", "platform", "etcd", "clusterImageRegistry"}, parts[1]) {
		for depth := 2; depth < len(parts); depth++ {
			want = append(want, strings.Join(parts[:depth], "."))
		}
	}
	want = append(want, path)
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
		if e.ErrorBody() != "Forbidden: field is immutable" {
			t.Errorf("error at %s: %q, want %q", e.Field, e.ErrorBody(), "Forbidden: field is immutable")
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("errors at %v, want at %v: %v", got, want, errs)
	}
}

// assertRefusedAt requires the errors of a change refused at path: an immutable field's, with its
// parents, or one error of another kind.
func assertRefusedAt(t *testing.T, errs field.ErrorList, path string) {
	t.Helper()
	if len(errs) > 0 && errs[len(errs)-1].Detail == "field is immutable" {
		assertImmutable(t, errs, path)
		return
	}
	assertOneFieldError(t, errs, path)
}

// The cluster keeps the identities' data plane URL ARM sent with the create; a PUT or PATCH later, with
// or without the header, keeps it, and the ARM body never shows it.
func TestClusterKeepsTheIdentityURLOfItsCreate(t *testing.T) {
	const identityURL = "https://identity.example.com/subscriptions/x"
	c, errs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID, Body: []byte(fullClusterBody),
		SystemData: testSystemData, IdentityURL: identityURL}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := c.Spec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL; got != identityURL {
		t.Fatalf("created with X-Ms-Identity-Url %s, stored %q", identityURL, got)
	}
	existing := withClusterStatus(c)
	for _, header := range []string{"", "https://identity.example.com/other"} {
		updated, errs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID,
			Body: clusterJSON(t, V20260901Preview, existing), IdentityURL: header}, existing)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := updated.Spec.Platform.OperatorsAuthentication.ManagedIdentitiesDataPlaneIdentityURL; got != identityURL {
			t.Errorf("a PUT with X-Ms-Identity-Url %q changed the stored URL to %q", header, got)
		}
	}
	if strings.Contains(string(clusterJSON(t, V20260901Preview, existing)), identityURL) {
		t.Error("the ARM body shows the identities' data plane URL, which ARM keeps to itself")
	}
}

// TestReplaceKeepsTagsItDoesNotSend: as the public service does, a PUT that replaces a cluster or node
// pool without tags leaves theirs as they were, tags sent replace them, and {} clears them.
func TestReplaceKeepsTagsItDoesNotSend(t *testing.T) {
	cluster := withClusterStatus(createCluster(t, V20260901Preview, fullClusterBody))
	pool := withNodePoolStatus(createNodePool(t, V20260901Preview, fullNodePoolBody))
	for _, tt := range []struct {
		name     string
		tags     any // nil: left out
		wantPool string
		want     string // the cluster's tags annotation, "" for none
	}{
		{name: "left out", want: `{"Team":"ARO","env":"dev"}`, wantPool: `{"pool":"workers"}`},
		{name: "sent", tags: map[string]string{"env": "prod"}, want: `{"env":"prod"}`, wantPool: `{"env":"prod"}`},
		{name: "emptied", tags: map[string]string{}, want: "", wantPool: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The resource as read, its tags as the case says.
			withTags := func(read []byte) []byte {
				body := jsonMap(t, read)
				delete(body, "tags")
				if tt.tags != nil {
					body["tags"] = tt.tags
				}
				return mustJSON(t, body)
			}
			got, errs := ClusterFromARM(Request{APIVersion: V20260901Preview, ResourceID: testClusterID, Body: withTags(clusterJSON(t, V20260901Preview, cluster))}, cluster)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if tags := got.Annotations[AnnotationTags]; tags != tt.want {
				t.Errorf("the cluster's tags are %q, want %q", tags, tt.want)
			}
			gotPool, errs := NodePoolFromARM(Request{APIVersion: V20260901Preview, ResourceID: testPoolID, Body: withTags(nodePoolJSON(t, V20260901Preview, pool))}, pool)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if tags := gotPool.Annotations[AnnotationTags]; tags != tt.wantPool {
				t.Errorf("the node pool's tags are %q, want %q", tags, tt.wantPool)
			}
		})
	}
}
