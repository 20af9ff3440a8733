package e2e

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKubectl walks through what an operator does with kubectl: apply the examples,
// list and inspect them, explain the schema, select, and get refused when wrong.
func TestKubectl(t *testing.T) {
	s := startServer(t, t.TempDir())

	out := s.mustKubectl(t, "apply", "-f", examplesDir)
	for _, want := range []string{
		"managementcluster.hcp.aro.azure.com/mc-eastus-1 created",
		"hcpcluster.hcp.aro.azure.com/dev-cluster created",
		"nodepool.hcp.aro.azure.com/dev-cluster.workers created",
		"nodepool.hcp.aro.azure.com/dev-cluster.gpu created",
		"externalauth.hcp.aro.azure.com/dev-cluster.entra created",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply -f %s did not say %q:\n%s", examplesDir, want, out)
		}
	}
	s.markSucceeded(t, "dev-cluster")
	if out := s.mustKubectl(t, "apply", "-f", runningClusterExamplesDir); !strings.Contains(out, "breakglasscredential.hcp.aro.azure.com/dev-cluster-oncall created") {
		t.Errorf("kubectl apply -f %s did not create the credential:\n%s", runningClusterExamplesDir, out)
	}
	if t.Failed() {
		t.FailNow()
	}

	t.Run("get shows the printer columns", func(t *testing.T) {
		out := s.mustKubectl(t, "get", "hcpclusters")
		wantColumns(t, out, "NAME", "VERSION", "STATE", "MGMT-CLUSTER", "AGE")
		if row := tableRow(t, out, "dev-cluster"); row[1] != "4.20" {
			t.Errorf("VERSION of dev-cluster = %q, want 4.20:\n%s", row[1], out)
		}

		out = s.mustKubectl(t, "get", "hcpclusters", "-o", "wide")
		wantColumns(t, out, "NAME", "VERSION", "STATE", "MGMT-CLUSTER", "AGE", "LOCATION", "CHANNEL", "CLUSTER-ID", "API-URL")
		if row := tableRow(t, out, "dev-cluster"); row[5] != "eastus" || row[6] != "stable" {
			t.Errorf("LOCATION, CHANNEL of dev-cluster = %q, %q, want eastus, stable:\n%s", row[5], row[6], out)
		}

		out = s.mustKubectl(t, "get", "externalauths")
		wantColumns(t, out, "NAME", "CLUSTER", "ISSUER", "STATE", "AGE")
		if row := tableRow(t, out, "dev-cluster.entra"); row[1] != "dev-cluster" ||
			row[2] != "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000001/v2.0" || row[3] != "Accepted" {
			t.Errorf("CLUSTER, ISSUER, STATE of dev-cluster.entra = %q, %q, %q, want dev-cluster, the Entra issuer, Accepted:\n%s",
				row[1], row[2], row[3], out)
		}

		out = s.mustKubectl(t, "get", "nodepools", "-o", "wide")
		wantColumns(t, out, "NAME", "CLUSTER", "VERSION", "REPLICAS", "STATE", "AGE", "VM-SIZE", "ZONE", "CURRENT", "UPGRADE-TYPE")
		if row := tableRow(t, out, "dev-cluster.workers"); row[1] != "dev-cluster" || row[3] != "3" || row[6] != "Standard_D8s_v3" {
			t.Errorf("CLUSTER, REPLICAS, VM-SIZE of dev-cluster.workers = %q, %q, %q, want dev-cluster, 3, Standard_D8s_v3:\n%s",
				row[1], row[3], row[6], out)
		}
	})

	t.Run("get -o yaml shows the defaults and generation 1", func(t *testing.T) {
		out := s.mustKubectl(t, "get", "hcpcluster", "dev-cluster", "-o", "yaml")
		for _, want := range []string{
			`(?m)^  generation: 1$`,
			`(?m)^    podCIDR: 10\.128\.0\.0/14$`,
			`(?m)^    serviceCIDR: 172\.30\.0\.0/16$`,
			`(?m)^    machineCIDR: 10\.0\.0\.0/16$`,
			`(?m)^    hostPrefix: 23$`,
			`(?m)^    networkType: OVNKubernetes$`,
			`(?m)^    channelGroup: stable$`,
		} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("kubectl get -o yaml has no line matching %s:\n%s", want, out)
			}
		}
	})

	t.Run("the hcp category lists every kind", func(t *testing.T) {
		out := s.mustKubectl(t, "get", "hcp")
		for _, want := range []string{
			"hcpcluster.hcp.aro.azure.com/dev-cluster",
			"nodepool.hcp.aro.azure.com/dev-cluster.workers",
			"nodepool.hcp.aro.azure.com/dev-cluster.gpu",
			"externalauth.hcp.aro.azure.com/dev-cluster.entra",
			"breakglasscredential.hcp.aro.azure.com/dev-cluster-oncall",
			"managementcluster.hcp.aro.azure.com/mc-eastus-1",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl get hcp does not list %s:\n%s", want, out)
			}
		}
	})

	t.Run("short names", func(t *testing.T) {
		for _, tc := range []struct {
			short, name string
			columns     []string
		}{
			{"hcpc", "dev-cluster", []string{"NAME", "VERSION", "STATE", "MGMT-CLUSTER", "AGE"}},
			{"np", "dev-cluster.workers", []string{"NAME", "CLUSTER", "VERSION", "REPLICAS", "STATE", "AGE"}},
			{"ea", "dev-cluster.entra", []string{"NAME", "CLUSTER", "ISSUER", "STATE", "AGE"}},
			{"bgc", "dev-cluster-oncall", []string{"NAME", "CLUSTER", "PHASE", "EXPIRES", "AGE"}},
			{"mc", "mc-eastus-1", []string{"NAME", "LOCATION", "HOSTED", "AVAILABLE", "NODEPOOLS", "SCHEDULABLE", "CONNECTED", "AGE"}},
		} {
			out := s.mustKubectl(t, "get", tc.short, tc.name)
			wantColumns(t, out, tc.columns...)
			tableRow(t, out, tc.name)
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := s.mustKubectl(t, "explain", "hcpcluster.spec.network")
		for _, f := range []string{"hostPrefix\t<integer>", "machineCIDR\t<string>", "networkType\t<string>", "podCIDR\t<string>", "serviceCIDR\t<string>"} {
			// Each field is followed by its description, indented below it.
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `\n    \S`).MatchString(out) {
				t.Errorf("kubectl explain hcpcluster.spec.network does not show %q with a description:\n%s", f, out)
			}
		}

		out = s.mustKubectl(t, "explain", "externalauth.spec.claim")
		for _, f := range []string{"mappings\t<TokenClaimMappings> -required-", "validationRules\t<[]TokenClaimValidationRule>"} {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `\n    \S`).MatchString(out) {
				t.Errorf("kubectl explain externalauth.spec.claim does not show %q with a description:\n%s", f, out)
			}
		}

		out = s.mustKubectl(t, "explain", "clusterinspection.spec")
		for _, f := range []string{"reason\t<string> -required-", "view\t<string> -required-", "ttlSeconds\t<integer>"} {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `\n    \S`).MatchString(out) {
				t.Errorf("kubectl explain clusterinspection.spec does not show %q with a description:\n%s", f, out)
			}
		}

		out = s.mustKubectl(t, "explain", "nodepool.spec.platform.osDisk.sizeGiB")
		if !strings.Contains(out, "KIND:       NodePool") || !strings.Contains(out, "FIELD: sizeGiB <integer>") ||
			!regexp.MustCompile(`(?m)^DESCRIPTION:\n    \S`).MatchString(out) {
			t.Errorf("kubectl explain nodepool.spec.platform.osDisk.sizeGiB does not describe the leaf field:\n%s", out)
		}
	})

	t.Run("field selectors", func(t *testing.T) {
		out := s.mustKubectl(t, "get", "np", "--field-selector", "spec.clusterName=dev-cluster")
		tableRow(t, out, "dev-cluster.workers")
		tableRow(t, out, "dev-cluster.gpu")

		out = s.mustKubectl(t, "get", "np", "--field-selector", "spec.clusterName=other")
		if !strings.Contains(out, "No resources found") {
			t.Errorf("kubectl get np --field-selector spec.clusterName=other listed something:\n%s", out)
		}

		out = s.mustKubectl(t, "get", "ea", "--field-selector", "spec.clusterName=dev-cluster")
		tableRow(t, out, "dev-cluster.entra")

		out = s.mustKubectl(t, "get", "bgc", "--field-selector", "spec.clusterName=dev-cluster")
		tableRow(t, out, "dev-cluster-oncall")

		// Not placed yet: the cluster has no management cluster.
		out = s.mustKubectl(t, "get", "hcpc", "--field-selector", "status.managementCluster=mc-eastus-1")
		if !strings.Contains(out, "No resources found") {
			t.Errorf("kubectl get hcpc --field-selector status.managementCluster=mc-eastus-1 listed something:\n%s", out)
		}

		out = s.failKubectl(t, "get", "np", "--field-selector", "spec.platform.vmSize=Standard_D8s_v3")
		if !strings.Contains(out, `field label "spec.platform.vmSize" is not supported`) || !strings.Contains(out, "spec.clusterName") {
			t.Errorf("an unsupported field selector does not say so and what is supported:\n%s", out)
		}
	})

	t.Run("label selectors", func(t *testing.T) {
		s.mustKubectl(t, "label", "np", "dev-cluster.gpu", "accelerator=nvidia")

		out := s.mustKubectl(t, "get", "np", "-l", "accelerator=nvidia")
		tableRow(t, out, "dev-cluster.gpu")
		if strings.Contains(out, "dev-cluster.workers") {
			t.Errorf("kubectl get np -l accelerator=nvidia lists the unlabelled pool:\n%s", out)
		}

		out = s.mustKubectl(t, "get", "np", "-l", "accelerator!=nvidia")
		tableRow(t, out, "dev-cluster.workers")
		if strings.Contains(out, "dev-cluster.gpu") {
			t.Errorf("kubectl get np -l accelerator!=nvidia lists the labelled pool:\n%s", out)
		}
	})

	t.Run("invalid objects are refused with the field at fault", func(t *testing.T) {
		for _, tc := range []struct {
			name, manifest string
			get            []string
			want           []string
		}{
			{
				name:     "hostPrefix out of range",
				manifest: badHostPrefixCluster,
				get:      []string{"hcpc", "bad-prefix"},
				want:     []string{`The HCPCluster "bad-prefix" is invalid: spec.network.hostPrefix: Invalid value: 30: must be less than or equal to 26`},
			},
			{
				name:     "replicas and autoScaling together",
				manifest: replicasAndAutoScalingPool,
				get:      []string{"np", "dev-cluster.both"},
				want:     []string{`The NodePool "dev-cluster.both" is invalid: `, "spec.replicas: Invalid value: 2: must be equal to 0"},
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out := s.failKubectl(t, "apply", "-f", writeFile(t, "invalid.yaml", tc.manifest))
				for _, want := range tc.want {
					if !strings.Contains(out, want) {
						t.Errorf("kubectl apply of an invalid object does not say %q:\n%s", want, out)
					}
				}
				if out := s.failKubectl(t, append([]string{"get"}, tc.get...)...); !strings.Contains(out, "NotFound") {
					t.Errorf("the invalid object was stored: kubectl get %s:\n%s", strings.Join(tc.get, " "), out)
				}
			})
		}
	})

	t.Run("server-side apply detects conflicts between managers", func(t *testing.T) {
		manifest := func(capacity string) string {
			return writeFile(t, "mc.yaml", strings.ReplaceAll(westManagementCluster, "CAPACITY", capacity))
		}
		out := s.mustKubectl(t, "apply", "--server-side", "-f", manifest("20"))
		if !strings.Contains(out, "managementcluster.hcp.aro.azure.com/mc-westus-1 serverside-applied") {
			t.Errorf("kubectl apply --server-side did not report the object:\n%s", out)
		}

		out = s.failKubectl(t, "apply", "--server-side", "--field-manager", "capacity-planner", "-f", manifest("30"))
		if !strings.Contains(out, `conflict with "kubectl": .spec.capacity`) {
			t.Errorf("a second manager changing spec.capacity got no conflict on it:\n%s", out)
		}
		if got := s.mustKubectl(t, "get", "mc", "mc-westus-1", "-o", "jsonpath={.spec.capacity}"); got != "20" {
			t.Errorf("after the conflict spec.capacity = %q, want 20 (unchanged)", got)
		}

		s.mustKubectl(t, "apply", "--server-side", "--field-manager", "capacity-planner", "--force-conflicts", "-f", manifest("30"))
		if got := s.mustKubectl(t, "get", "mc", "mc-westus-1", "-o", "jsonpath={.spec.capacity}"); got != "30" {
			t.Errorf("after --force-conflicts spec.capacity = %q, want 30", got)
		}
		managers := s.mustKubectl(t, "get", "mc", "mc-westus-1", "-o", "jsonpath={.metadata.managedFields[*].manager}")
		if !slices.Contains(strings.Fields(managers), "capacity-planner") {
			t.Errorf("managedFields name managers %q, want capacity-planner among them", managers)
		}
	})

	t.Run("delete", func(t *testing.T) {
		s.mustKubectl(t, "create", "-f", writeFile(t, "mc.yaml", strings.ReplaceAll(
			strings.ReplaceAll(westManagementCluster, "mc-westus-1", "mc-doomed"), "CAPACITY", "5")))
		out := s.mustKubectl(t, "delete", "mc", "mc-doomed")
		if !strings.Contains(out, `managementcluster.hcp.aro.azure.com "mc-doomed" deleted`) {
			t.Errorf("kubectl delete did not report the deletion:\n%s", out)
		}
		out = s.failKubectl(t, "get", "mc", "mc-doomed")
		if !strings.Contains(out, `managementclusters.hcp.aro.azure.com "mc-doomed" not found`) {
			t.Errorf("the deleted object is still there:\n%s", out)
		}
	})
}

// wantColumns checks the header line of a kubectl table.
func wantColumns(t *testing.T, table string, columns ...string) {
	t.Helper()
	header, _, _ := strings.Cut(table, "\n")
	if got := strings.Fields(header); !slices.Equal(got, columns) {
		t.Errorf("columns = %q, want %q:\n%s", got, columns, table)
	}
}

// tableRow returns the cells of the row named name in a kubectl table, failing the
// test if there is no such row. No cell of the tables checked here holds a space.
func tableRow(t *testing.T, table, name string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n")[1:] {
		if cells := strings.Fields(line); len(cells) > 0 && cells[0] == name {
			return cells
		}
	}
	t.Fatalf("no row %s in:\n%s", name, table)
	return nil
}

// badHostPrefixCluster is a valid cluster but for its hostPrefix.
const badHostPrefixCluster = `apiVersion: hcp.aro.azure.com/v1alpha1
kind: HCPCluster
metadata:
  name: bad-prefix
  namespace: default
spec:
  location: eastus
  azure:
    subscriptionID: 00000000-0000-0000-0000-000000000001
    resourceGroup: dev-rg
    tenantID: 00000000-0000-0000-0000-00000000000a
  version:
    id: "4.20"
  dns:
    baseDomainPrefix: bad
  network:
    hostPrefix: 30
  platform:
    managedResourceGroup: bad-rg-managed
    subnetID: /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/dev-rg/providers/Microsoft.Network/virtualNetworks/dev-vnet/subnets/workers
    networkSecurityGroupID: /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/dev-rg/providers/Microsoft.Network/networkSecurityGroups/dev-nsg
`

// replicasAndAutoScalingPool asks for a fixed size and autoscaling at once.
const replicasAndAutoScalingPool = `apiVersion: hcp.aro.azure.com/v1alpha1
kind: NodePool
metadata:
  name: dev-cluster.both
  namespace: default
spec:
  clusterName: dev-cluster
  version:
    id: 4.20.8
  platform:
    vmSize: Standard_D8s_v3
  replicas: 2
  autoScaling:
    min: 1
    max: 3
`

// westManagementCluster has CAPACITY to be replaced.
const westManagementCluster = `apiVersion: hcp.aro.azure.com/v1alpha1
kind: ManagementCluster
metadata:
  name: mc-westus-1
spec:
  consumerName: mc-westus-1
  location: westus
  capacity: CAPACITY
`
