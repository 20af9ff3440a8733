package render_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const clusterID = "0b9b6c2e-5d0e-4d6b-9d0c-8b7f3f1a2c4d"

func TestClusterBundle(t *testing.T) {
	const namespace = "ocm-dev-" + clusterID
	for _, tc := range []struct {
		name    string
		cluster *v1alpha1.HCPCluster
		options render.Options
		check   func(t *testing.T, hc *hyperv1.HostedCluster)
	}{
		{
			name:    "the defaults",
			cluster: minimalCluster("customer", "minimal", clusterID),
			check: func(t *testing.T, hc *hyperv1.HostedCluster) {
				spec := &hc.Spec
				if hc.Name != "dev" {
					t.Errorf("name %q, want the DNS prefix dev", hc.Name)
				}
				if spec.Channel != "stable-4.20" {
					t.Errorf("channel %q, want stable-4.20", spec.Channel)
				}
				wantNetworking := `{"machineNetwork":[{"cidr":"10.0.0.0/16"}],"clusterNetwork":[{"cidr":"10.128.0.0/14","hostPrefix":23}],` +
					`"serviceNetwork":[{"cidr":"172.30.0.0/16"}],"networkType":"OVNKubernetes"}`
				if got := toJSON(t, spec.Networking); got != wantNetworking {
					t.Errorf("networking\n%s\nwant\n%s", got, wantNetworking)
				}
				azure := spec.Platform.Azure
				if azure.Topology != hyperv1.AzureTopologyPublic || azure.Private.Type != "" {
					t.Errorf("topology %q, private %+v; want a public API", azure.Topology, azure.Private)
				}
				if azure.ResourceGroupName != "customer-minimal-managed" {
					t.Errorf("resource group %q, want the managed resource group", azure.ResourceGroupName)
				}
				mi := azure.AzureAuthenticationConfig.ManagedIdentities
				if mi.ControlPlane.ManagedIdentitiesKeyVault.Name != render.DefaultManagedIdentitiesKeyVault {
					t.Errorf("Key Vault %+v, want the default", mi.ControlPlane.ManagedIdentitiesKeyVault)
				}
				// The fixture names the identity of control-plane, but spec.identity does not say its client ID.
				if cpo := mi.ControlPlane.ControlPlaneOperator; cpo.ClientID != "" || cpo.CredentialsSecretName != clusterID+"-control-plane" {
					t.Errorf("control plane operator identity %+v", cpo)
				}
				if spec.SecretEncryption != nil || spec.FIPS || spec.Capabilities != nil || spec.OperatorConfiguration != nil ||
					spec.Networking.APIServer != nil || spec.ImageContentSources != nil {
					t.Errorf("options the cluster does not ask for are set: %s", toJSON(t, spec))
				}
			},
		},
		{
			name:    "every field set",
			cluster: fullCluster("customer", "full", clusterID),
			options: render.Options{
				Environment:               "dev",
				DNSZone:                   "hcp.example.com",
				ManagedIdentitiesKeyVault: "mi-kv",
				ManagedIdentitiesTenantID: "00000000-0000-0000-0000-0000000000bb",
			},
			check: func(t *testing.T, hc *hyperv1.HostedCluster) {
				spec := &hc.Spec
				if hc.Name != "full" || spec.Channel != "fast-4.20" {
					t.Errorf("name %q, channel %q; want full, fast-4.20", hc.Name, spec.Channel)
				}
				if !strings.HasSuffix(spec.DNS.BaseDomain, ".eastus.hcp.example.com") {
					t.Errorf("base domain %q, want one in the region's subdomain of the zone", spec.DNS.BaseDomain)
				}
				wantNetworking := `{"machineNetwork":[{"cidr":"10.1.0.0/16"}],"clusterNetwork":[{"cidr":"10.132.0.0/14","hostPrefix":24}],` +
					`"serviceNetwork":[{"cidr":"172.31.0.0/16"}],"networkType":"Other","apiServer":{"allowedCIDRBlocks":["192.0.2.7/32","198.51.100.0/24"]}}`
				if got := toJSON(t, spec.Networking); got != wantNetworking {
					t.Errorf("networking\n%s\nwant\n%s", got, wantNetworking)
				}
				azure := spec.Platform.Azure
				if azure.Topology != hyperv1.AzureTopologyPrivate || azure.Private.Type != hyperv1.AzurePrivateTypePrivateLink {
					t.Errorf("topology %q, private %+v; want a private API through Private Link", azure.Topology, azure.Private)
				}
				if azure.TenantID != tenantID {
					t.Errorf("tenant %q, want the cluster's %q", azure.TenantID, tenantID)
				}
				mi := azure.AzureAuthenticationConfig.ManagedIdentities
				wantVault := hyperv1.ManagedAzureKeyVault{Name: "mi-kv", TenantID: "00000000-0000-0000-0000-0000000000bb"}
				if mi.ControlPlane.ManagedIdentitiesKeyVault != wantVault {
					t.Errorf("Key Vault %+v, want %+v", mi.ControlPlane.ManagedIdentitiesKeyVault, wantVault)
				}
				var controlPlane map[string]hyperv1.ManagedIdentity
				fromJSON(t, toJSON(t, mi.ControlPlane), &controlPlane)
				for operator, field := range controlPlaneOperators {
					if field == "" {
						continue
					}
					want := hyperv1.ManagedIdentity{
						ClientID:              hyperv1.AzureClientID(clientID("cp", operator)),
						ObjectEncoding:        "utf-8",
						CredentialsSecretName: clusterID + "-" + operator,
					}
					if controlPlane[field] != want {
						t.Errorf("%s: %+v, want the identity of %s, %+v", field, controlPlane[field], operator, want)
					}
				}
				wantDataPlane := hyperv1.DataPlaneManagedIdentities{
					ImageRegistryMSIClientID: clientID("dp", "image-registry"),
					DiskMSIClientID:          clientID("dp", "disk-csi-driver"),
					FileMSIClientID:          clientID("dp", "file-csi-driver"),
				}
				if mi.DataPlane != wantDataPlane {
					t.Errorf("data plane identities %+v, want %+v", mi.DataPlane, wantDataPlane)
				}

				wantKMS := &hyperv1.AzureKMSSpec{
					ActiveKey:      hyperv1.AzureKMSKey{KeyVaultName: "customer-kv", KeyName: "etcd", KeyVersion: "0123456789abcdef"},
					KMS:            hyperv1.ManagedIdentity{ClientID: hyperv1.AzureClientID(clientID("cp", "kms")), ObjectEncoding: "utf-8", CredentialsSecretName: clusterID + "-kms"},
					KeyVaultAccess: hyperv1.AzureKeyVaultPrivate,
				}
				if e := spec.SecretEncryption; e == nil || e.Type != hyperv1.KMS || e.KMS.Provider != hyperv1.AZURE || !apiequality.Semantic.DeepEqual(e.KMS.Azure, wantKMS) {
					t.Errorf("secret encryption %s, want Azure KMS %s", toJSON(t, e), toJSON(t, wantKMS))
				}
				if !spec.FIPS {
					t.Error("FIPS is off, want it on for cryptoRestrictions FIPS")
				}
				if got := toJSON(t, spec.Capabilities); got != `{"disabled":["ImageRegistry"]}` {
					t.Errorf("capabilities %s, want the image registry disabled", got)
				}
				wantIngress := &operatorv1.EndpointPublishingStrategy{
					Type:         operatorv1.LoadBalancerServiceStrategyType,
					LoadBalancer: &operatorv1.LoadBalancerStrategy{Scope: operatorv1.InternalLoadBalancer},
				}
				if c := spec.OperatorConfiguration; c == nil || !apiequality.Semantic.DeepEqual(c.IngressOperator.EndpointPublishingStrategy, wantIngress) {
					t.Errorf("operator configuration %s, want an internal load balancer for ingress", toJSON(t, c))
				}
				wantSources := `[{"source":"quay.io/openshift-release-dev/ocp-release","mirrors":["mirror.example.com/ocp-release"]},` +
					`{"source":"registry.redhat.io","mirrors":["mirror.example.com/redhat","backup.example.com/redhat"]}]`
				if got := toJSON(t, spec.ImageContentSources); got != wantSources {
					t.Errorf("image content sources %s, want %s", got, wantSources)
				}
				wantAutoscaling := `{"maxNodesTotal":100,"maxPodGracePeriod":300,"maxNodeProvisionTime":"600s","podPriorityThreshold":-5}`
				if got := toJSON(t, spec.Autoscaling); got != wantAutoscaling {
					t.Errorf("autoscaling %s, want %s", got, wantAutoscaling)
				}
			},
		},
		{
			name: "ingress disabled, authorized addresses, no DNS prefix",
			cluster: func() *v1alpha1.HCPCluster {
				c := minimalCluster("customer", "noprefix", clusterID)
				c.Spec.DNS.BaseDomainPrefix = ""
				c.Spec.Ingress.Type = "Disabled"
				c.Spec.API.AuthorizedCIDRs = []string{"203.0.113.9"}
				return c
			}(),
			check: func(t *testing.T, hc *hyperv1.HostedCluster) {
				if hc.Name != "noprefix" {
					t.Errorf("name %q, want the cluster's name", hc.Name)
				}
				if got := toJSON(t, hc.Spec.Capabilities); got != `{"disabled":["Console","Ingress"]}` {
					t.Errorf("capabilities %s, want ingress and the console, which needs it, disabled", got)
				}
				if got := toJSON(t, hc.Spec.Networking.APIServer); got != `{"allowedCIDRBlocks":["203.0.113.9/32"]}` {
					t.Errorf("API server networking %s, want the address as a /32", got)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := render.ClusterBundle(render.ClusterInput{Cluster: tc.cluster, ReleaseImage: releaseImage}, tc.options)
			if err != nil {
				t.Fatal(err)
			}
			checkBundleShape(t, b, []string{"Namespace", "Secret", "Service", "Service", "HostedCluster"})
			labels := map[string]string{
				"api.openshift.com/environment": "dev",
				"api.openshift.com/id":          clusterID,
				"api.openshift.com/name":        tc.cluster.Name,
			}

			var ns corev1.Namespace
			fromJSON(t, string(b.Manifests[0]), &ns)
			if ns.Name != namespace || !apiequality.Semantic.DeepEqual(ns.Labels, labels) {
				t.Errorf("namespace %s with labels %v, want %s with %v", ns.Name, ns.Labels, namespace, labels)
			}

			var secret corev1.Secret
			fromJSON(t, string(b.Manifests[1]), &secret)
			if secret.Namespace != namespace || secret.Name != render.PullSecretName || secret.Type != corev1.SecretTypeDockerConfigJson ||
				string(secret.Data[corev1.DockerConfigJsonKey]) != `{"auths":{}}` {
				t.Errorf("pull secret %s", b.Manifests[1])
			}

			var hc hyperv1.HostedCluster
			fromJSON(t, string(b.Manifests[len(b.Manifests)-1]), &hc)
			if hc.Namespace != namespace || !apiequality.Semantic.DeepEqual(hc.Labels, labels) {
				t.Errorf("HostedCluster in %s with labels %v, want %s with %v", hc.Namespace, hc.Labels, namespace, labels)
			}
			wantID := "/subscriptions/" + fixtures.SubscriptionID + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + tc.cluster.Name
			if got := hc.Annotations[render.ClusterResourceIDAnnotation]; got != wantID {
				t.Errorf("resource ID annotation %q, want %q", got, wantID)
			}
			checkHostedClusterBasics(t, &hc, tc.cluster)
			tc.check(t, &hc)

			wantFeedback := []string{
				render.FeedbackAvailable, render.FeedbackAvailableMessage, render.FeedbackProgressing, render.FeedbackProgressingMessage,
				render.FeedbackDegraded, render.FeedbackDegradedMessage, render.FeedbackVersionHistory, render.FeedbackControlPlaneVersionHistory,
				render.FeedbackAPIHost, render.FeedbackAPIPort, render.FeedbackExternalAuth, render.FeedbackOIDCClients,
				render.FeedbackGeneration, render.FeedbackObservedGeneration,
			}
			checkFeedbackNames(t, b, map[int][]string{2: {render.FeedbackAPIAddress}, 3: {render.FeedbackAppsAddress}, 4: wantFeedback})
		})
	}
}

// checkHostedClusterBasics checks what every HostedCluster has, whatever the cluster asks for.
func checkHostedClusterBasics(t *testing.T, hc *hyperv1.HostedCluster, c *v1alpha1.HCPCluster) {
	t.Helper()
	spec := &hc.Spec
	if spec.Release.Image != releaseImage || spec.ClusterID != clusterID || spec.PullSecret.Name != render.PullSecretName {
		t.Errorf("release %q, cluster ID %q, pull secret %q", spec.Release.Image, spec.ClusterID, spec.PullSecret.Name)
	}
	if got := toJSON(t, spec.Etcd); got != `{"managementType":"Managed","managed":{"storage":{"type":"PersistentVolume","persistentVolume":{"size":"8Gi"}}}}` {
		t.Errorf("etcd %s, want managed on a persistent volume", got)
	}

	azure := spec.Platform.Azure
	const network = "/subscriptions/" + fixtures.SubscriptionID + "/resourceGroups/rg/providers/Microsoft.Network/"
	unique := c.Namespace + "-" + c.Name
	if spec.Platform.Type != hyperv1.AzurePlatform || azure.Location != "eastus" || azure.SubscriptionID != fixtures.SubscriptionID ||
		azure.VnetID != network+"virtualNetworks/vnet" || azure.SubnetID != network+"virtualNetworks/vnet/subnets/"+unique ||
		azure.SecurityGroupID != network+"networkSecurityGroups/"+unique {
		t.Errorf("Azure platform %s", toJSON(t, azure))
	}
	if azure.AzureAuthenticationConfig.AzureAuthenticationConfigType != hyperv1.AzureAuthenticationTypeManagedIdentities {
		t.Errorf("authentication %q, want ManagedIdentities", azure.AzureAuthenticationConfig.AzureAuthenticationConfigType)
	}

	domain := hc.Name + "." + spec.DNS.BaseDomain
	var services []string
	for _, s := range spec.Services {
		if s.Type != hyperv1.Route {
			t.Errorf("%s is published by %s, want Route", s.Service, s.Type)
		}
		services = append(services, string(s.Service)+" "+s.Route.Hostname)
	}
	want := []string{"APIServer api." + domain, "OAuthServer oauth." + domain, "Konnectivity konnectivity." + domain, "Ignition ignition." + domain}
	if !slices.Equal(services, want) {
		t.Errorf("services %q, want %q", services, want)
	}
	console, err := render.ConsoleURL(c, render.Options{DNSZone: strings.SplitN(spec.DNS.BaseDomain, ".", 3)[2]})
	if err != nil || console != "https://console-openshift-console.apps."+domain {
		t.Errorf("console URL %q (%v), want it in the apps domain of %s", console, err, domain)
	}
}

// checkBundleShape checks what every bundle has: the kinds in order, a manifest config naming
// each manifest that applies it server-side with force, a foreground delete, and no status,
// creation timestamp or null in the manifests.
func checkBundleShape(t *testing.T, b *protocol.ManifestBundle, kinds []string) {
	t.Helper()
	if b.DeleteOption == nil || b.DeleteOption.PropagationPolicy != protocol.DeletePropagationForeground {
		t.Errorf("delete option %+v, want Foreground", b.DeleteOption)
	}
	if len(b.Manifests) != len(kinds) || len(b.ManifestConfigs) != len(kinds) {
		t.Fatalf("%d manifests and %d manifest configs, want %d: %v", len(b.Manifests), len(b.ManifestConfigs), len(kinds), kinds)
	}
	for i, raw := range b.Manifests {
		var obj struct {
			APIVersion, Kind string
			Metadata         map[string]any
			Status           *json.RawMessage
		}
		fromJSON(t, string(raw), &obj)
		if obj.Kind != kinds[i] || obj.APIVersion == "" {
			t.Errorf("manifest %d is %s %s, want %s", i, obj.APIVersion, obj.Kind, kinds[i])
		}
		if obj.Status != nil || obj.Metadata["creationTimestamp"] != nil || bytes.Contains(raw, []byte(`"status":`)) {
			t.Errorf("manifest %d has a status or a creation timestamp: %s", i, raw)
		}
		if bytes.Contains(raw, []byte(`:null`)) {
			t.Errorf("manifest %d has a null, which server-side apply refuses where the schema wants a value: %s", i, raw)
		}
		cfg := b.ManifestConfigs[i]
		if cfg.ResourceIdentifier.Name != obj.Metadata["name"] || cfg.ResourceIdentifier.Namespace != stringOf(obj.Metadata["namespace"]) {
			t.Errorf("manifest config %d names %+v, not the manifest's %v", i, cfg.ResourceIdentifier, obj.Metadata)
		}
		want := &protocol.UpdateStrategy{Type: protocol.UpdateStrategyServerSideApply, ServerSideApply: &protocol.ServerSideApplyConfig{Force: true}}
		if obj.Kind == "Service" {
			// HyperShift's load balancers, whose addresses the agent only reads.
			want = &protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly}
		}
		if !apiequality.Semantic.DeepEqual(cfg.UpdateStrategy, want) {
			t.Errorf("manifest %d (%s): update strategy %+v, want %+v", i, obj.Kind, cfg.UpdateStrategy, want)
		}
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
}

// checkFeedbackNames checks which manifests report status back, and which fields.
func checkFeedbackNames(t *testing.T, b *protocol.ManifestBundle, want map[int][]string) {
	t.Helper()
	for i, cfg := range b.ManifestConfigs {
		var names []string
		for _, rule := range cfg.FeedbackRules {
			if rule.Type != protocol.FeedbackJSONPaths {
				t.Errorf("manifest %d: feedback rule %q, want JSONPaths", i, rule.Type)
			}
			for _, p := range rule.JSONPaths {
				names = append(names, p.Name)
			}
		}
		if !slices.Equal(names, want[i]) {
			t.Errorf("manifest %d reports %q, want %q", i, names, want[i])
		}
	}
}

func TestClusterBundleIsDeterministic(t *testing.T) {
	for _, c := range []*v1alpha1.HCPCluster{minimalCluster("customer", "minimal", clusterID), fullCluster("customer", "full", clusterID)} {
		first := renderCluster(t, c, render.Options{})
		// Maps are walked in a new order each time; the bytes must not follow it.
		for range 20 {
			if again := renderCluster(t, c, render.Options{}); again != first {
				t.Fatalf("rendering %s again gave other bytes:\n%s\n%s", c.Name, first, again)
			}
		}
		defaulted := c.DeepCopy()
		v1alpha1.SetObjectDefaults_HCPCluster(defaulted)
		if got := renderCluster(t, defaulted, render.Options{}); got != first {
			t.Errorf("%s renders differently once defaulted:\n%s\n%s", c.Name, first, got)
		}
	}
}

func TestClusterBundleIgnoresTheCaseOfARMIDs(t *testing.T) {
	c := minimalCluster("customer", "case", clusterID)
	// ARM takes any case; HyperShift's CEL rules match Microsoft.Network/virtualNetworks exactly.
	c.Spec.Platform.SubnetID = strings.ToLower(c.Spec.Platform.SubnetID)
	c.Spec.Platform.NetworkSecurityGroupID = strings.ToUpper(c.Spec.Platform.NetworkSecurityGroupID)
	// spec.identity may spell an identity's ID in another case than the operators' map does.
	operatorID := c.Spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators["control-plane"]
	c.Spec.Identity = &v1alpha1.ManagedServiceIdentity{Type: "UserAssigned", UserAssignedIdentities: map[string]v1alpha1.UserAssignedIdentity{
		strings.ToUpper(operatorID): {ClientID: clientID("cp", "control-plane")},
	}}
	b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hc hyperv1.HostedCluster
	fromJSON(t, string(b.Manifests[len(b.Manifests)-1]), &hc)
	azure := hc.Spec.Platform.Azure
	want := "/subscriptions/" + fixtures.SubscriptionID + "/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/customer-case"
	if azure.SubnetID != want || azure.VnetID != strings.TrimSuffix(want, "/subnets/customer-case") {
		t.Errorf("subnet %q, vnet %q; want %q and its network", azure.SubnetID, azure.VnetID, want)
	}
	if !strings.Contains(azure.SecurityGroupID, "/resourceGroups/RG/providers/Microsoft.Network/networkSecurityGroups/CUSTOMER-CASE") {
		t.Errorf("security group %q, want ARM's casing of the type and the given names", azure.SecurityGroupID)
	}
	if got := azure.AzureAuthenticationConfig.ManagedIdentities.ControlPlane.ControlPlaneOperator.ClientID; got != hyperv1.AzureClientID(clientID("cp", "control-plane")) {
		t.Errorf("control plane operator client ID %q, want the one spec.identity reports under another case", got)
	}
}

func TestClusterBundleErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(in *render.ClusterInput, o *render.Options)
		wantErr []string
	}{
		{
			name:    "no cluster ID",
			mutate:  func(in *render.ClusterInput, _ *render.Options) { in.Cluster.Status.ClusterID = "" },
			wantErr: []string{"status.clusterID: Required value"},
		},
		{
			name:    "a cluster ID that cannot name a namespace",
			mutate:  func(in *render.ClusterInput, _ *render.Options) { in.Cluster.Status.ClusterID = "Not_A_Label" },
			wantErr: []string{`status.clusterID: Invalid value: "Not_A_Label": must make a valid namespace name ocm-dev-Not_A_Label`},
		},
		{
			name:    "no release image",
			mutate:  func(in *render.ClusterInput, _ *render.Options) { in.ReleaseImage = "" },
			wantErr: []string{"releaseImage: Required value"},
		},
		{
			name:    "a subnet ID that is no ARM ID",
			mutate:  func(in *render.ClusterInput, _ *render.Options) { in.Cluster.Spec.Platform.SubnetID = "subnet-1" },
			wantErr: []string{`spec.platform.subnetID: Invalid value: "subnet-1": not the ARM ID of a Microsoft.Network/virtualNetworks/subnets`},
		},
		{
			name: "a virtual network where the subnet belongs",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				in.Cluster.Spec.Platform.SubnetID = fixtures.ARMID("Microsoft.Network/virtualNetworks", "vnet")
			},
			wantErr: []string{"spec.platform.subnetID: Invalid value", "not the ARM ID of a Microsoft.Network/virtualNetworks/subnets"},
		},
		{
			name: "a network security group in a subscription that is not a UUID",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				in.Cluster.Spec.Platform.NetworkSecurityGroupID = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/networkSecurityGroups/nsg"
			},
			wantErr: []string{"spec.platform.networkSecurityGroupID: Invalid value", "the subscription must be a UUID"},
		},
		{
			name: "an ARM ID with an empty segment",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				p := &in.Cluster.Spec.Platform
				p.NetworkSecurityGroupID = strings.Replace(p.NetworkSecurityGroupID, "/providers/", "//providers/", 1)
			},
			wantErr: []string{"spec.platform.networkSecurityGroupID: Invalid value", "empty segments"},
		},
		{
			name:    "a pod CIDR that is no CIDR",
			mutate:  func(in *render.ClusterInput, _ *render.Options) { in.Cluster.Spec.Network.PodCIDR = "10.128.0.0" },
			wantErr: []string{`spec.network.podCIDR: Invalid value: "10.128.0.0"`},
		},
		{
			name: "an authorized address that is none",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				in.Cluster.Spec.API.AuthorizedCIDRs = []string{"192.0.2.1", "example.com"}
			},
			wantErr: []string{`spec.api.authorizedCIDRs[1]: Invalid value: "example.com"`},
		},
		{
			name: "an identity's client ID that is not a UUID",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				spec := &in.Cluster.Spec
				id := spec.Platform.OperatorsAuthentication.UserAssignedIdentities.ControlPlaneOperators["control-plane"]
				spec.Identity.UserAssignedIdentities[id] = v1alpha1.UserAssignedIdentity{ClientID: "{11111111-2222-3333-4444-555555555555}"}
			},
			wantErr: []string{"spec.identity.userAssignedIdentities[/subscriptions/", "].clientID: Invalid value", "must be a UUID"},
		},
		{
			name: "customer managed etcd encryption without a key",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				in.Cluster.Spec.Etcd.DataEncryption = &v1alpha1.EtcdDataEncryptionProfile{KeyManagementMode: "CustomerManaged"}
			},
			wantErr: []string{"spec.etcd.dataEncryption.customerManaged.kms: Required value"},
		},
		{
			name: "a name too long for the control plane namespace",
			mutate: func(in *render.ClusterInput, _ *render.Options) {
				in.Cluster.Spec.DNS.BaseDomainPrefix = ""
				in.Cluster.Name = "a-cluster-name-of-thirty-chars"
			},
			wantErr: []string{`spec.dns.baseDomainPrefix: Invalid value: ""`, "ocm-dev-" + clusterID + "-a-cluster-name-of-thirty-chars", "at most 18 characters"},
		},
		{
			name:    "an environment that cannot name a namespace",
			mutate:  func(_ *render.ClusterInput, o *render.Options) { o.Environment = "Dev_1" },
			wantErr: []string{`options.environment: Invalid value: "Dev_1"`},
		},
		{
			name:    "a pull secret that is no .dockerconfigjson",
			mutate:  func(_ *render.ClusterInput, o *render.Options) { o.PullSecret = []byte(`{"quay.io":{}}`) },
			wantErr: []string{"options.pullSecret: Invalid value"},
		},
		{
			name:    "no cluster",
			mutate:  func(in *render.ClusterInput, _ *render.Options) { in.Cluster = nil },
			wantErr: []string{"no cluster"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := render.ClusterInput{Cluster: fullCluster("customer", "bad", clusterID), ReleaseImage: releaseImage}
			var o render.Options
			tc.mutate(&in, &o)
			b, err := render.ClusterBundle(in, o)
			if err == nil {
				t.Fatalf("no error, and a bundle of %d manifests", len(b.Manifests))
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestPullSecret(t *testing.T) {
	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("user:token")) + `"}}}`)
	b, err := render.ClusterBundle(render.ClusterInput{Cluster: minimalCluster("customer", "c", clusterID), ReleaseImage: releaseImage},
		render.Options{PullSecret: pullSecret, Environment: "int"})
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	fromJSON(t, string(b.Manifests[1]), &secret)
	if secret.Namespace != "ocm-int-"+clusterID || !bytes.Equal(secret.Data[corev1.DockerConfigJsonKey], pullSecret) {
		t.Errorf("pull secret %s, want the given .dockerconfigjson in ocm-int-%s", b.Manifests[1], clusterID)
	}
}

func renderCluster(t *testing.T, c *v1alpha1.HCPCluster, o render.Options) string {
	t.Helper()
	b, err := render.ClusterBundle(render.ClusterInput{Cluster: c, ReleaseImage: releaseImage}, o)
	if err != nil {
		t.Fatal(err)
	}
	return toJSON(t, b)
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func fromJSON(t *testing.T, raw string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}
