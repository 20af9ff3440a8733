package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/pkg/breakglass"
	hcplisters "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/test/armschema"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// startServer runs hcp-apiserver in the test process for the tests that need the API's own
// validation, dry runs and subresources.
func startServer(t *testing.T) *framework.InProcessServer {
	t.Helper()
	if testing.Short() {
		t.Skip("starts hcp-apiserver on an embedded etcd; not in -short")
	}
	s, err := framework.StartInProcessServer(context.Background(), t.TempDir(), framework.InProcessOptions{})
	if err != nil {
		t.Fatalf("starting hcp-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	resources, err := s.Client.Discovery().ServerResourcesForGroupVersion(hcpv1alpha1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"armoperations", "armsubscriptions"} {
		if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == want }) {
			t.Skipf("hcp-apiserver does not serve %s yet: the shim keeps its operations and subscriptions there", want)
		}
	}
	return s
}

// clusterBody is a cluster hcp-apiserver accepts, with Azure resources of its own.
func clusterBody(name, podCIDR string) string {
	rg := "/subscriptions/" + testSub + "/resourceGroups/Dev-RG/providers/"
	return fmt.Sprintf(`{
  "location": "eastus",
  "tags": {"env": "dev"},
  "properties": {
    "version": {"id": "4.20", "channelGroup": "stable"},
    "dns": {"baseDomainPrefix": "dev"},
    "network": {"podCidr": %q},
    "platform": {
      "managedResourceGroup": "%s-managed",
      "subnetId": "%sMicrosoft.Network/virtualNetworks/vnet/subnets/%s",
      "networkSecurityGroupId": "%sMicrosoft.Network/networkSecurityGroups/%s",
      "operatorsAuthentication": {"userAssignedIdentities": {
        "controlPlaneOperators": {"control-plane": "%sMicrosoft.ManagedIdentity/userAssignedIdentities/%s-cp"},
        "dataPlaneOperators": {},
        "serviceManagedIdentity": "%sMicrosoft.ManagedIdentity/userAssignedIdentities/%s-service"
      }}
    }
  }
}`, podCIDR, name, rg, name, rg, name, rg, name, rg, name)
}

const serverNodePoolBody = `{"location": "eastus", "properties": {"version": {"id": "4.20.8", "channelGroup": "stable"},
  "platform": {"vmSize": "Standard_D8s_v3"}, "replicas": 3}}`

func TestAgainstHCPAPIServer(t *testing.T) {
	s := startServer(t)
	f, err := New(Config{Client: s.Client, Location: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	q := "?api-version=" + testAPI
	clusterPath := func(name string) string {
		return testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
	}
	ns := names.Namespace(testSub, "Dev-RG")

	if rec := call(f, "PUT", clusterPath("Alpha")+q, clusterBody("alpha", "10.128.0.0/14")); rec.Code != 400 ||
		cloudError(t, rec).Code != CodeInvalidSubscriptionState {
		t.Fatalf("PUT before the subscription is registered: %d %s", rec.Code, rec.Body)
	}
	if rec := call(f, "PUT", "/subscriptions/"+testSub+"?api-version=2.0",
		`{"state":"Registered","registrationDate":"2026-12-01T00:00:00Z","properties":{"tenantId":"`+testTenant+`"}}`); rec.Code != 200 {
		t.Fatalf("subscription PUT: %d %s", rec.Code, rec.Body)
	}

	t.Run("the API's validation names ARM's fields", func(t *testing.T) {
		rec := call(f, "PUT", clusterPath("Invalid")+q, clusterBody("invalid", "10.128.0.0/99"))
		if rec.Code != 400 {
			t.Fatalf("PUT with a bad pod CIDR: %d %s", rec.Code, rec.Body)
		}
		ce := cloudError(t, rec)
		targets := []string{ce.Target}
		for _, d := range ce.Details {
			targets = append(targets, d.Target)
		}
		if !slices.Contains(targets, "properties.network.podCidr") {
			t.Errorf("targets %v, want properties.network.podCidr among them: %s", targets, rec.Body)
		}
	})

	var createOp string
	t.Run("create", func(t *testing.T) {
		rec := call(f, "PUT", clusterPath("Alpha")+q, clusterBody("alpha", "10.128.0.0/14"))
		if rec.Code != 201 {
			t.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
		if !strings.Contains(rec.Body.String(), `"provisioningState":"Accepted"`) {
			t.Errorf("a new cluster is Accepted: %s", rec.Body)
		}
		createOp = rec.Header().Get(headerAzureAsyncOperation)
		u, _ := url.Parse(createOp)
		op, err := s.Client.HcpV1alpha1().ARMOperations().Get(ctx, u.Path[strings.LastIndex(u.Path, "/")+1:], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Client.HcpV1alpha1().HCPClusters(ns).Get(ctx, "alpha", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if op.Spec.Target.UID != c.UID || op.Spec.Target.Generation != c.Generation || op.Spec.Target.Resource != "hcpclusters" {
			t.Errorf("operation target %+v, cluster uid %s generation %d", op.Spec.Target, c.UID, c.Generation)
		}
		if c.Labels[names.LabelSubscription] != strings.ToLower(testSub) {
			t.Errorf("cluster labels %v", c.Labels)
		}
		if rec := call(f, "GET", strings.TrimPrefix(createOp, testReferer), ""); rec.Code != 200 {
			t.Errorf("operation status: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("a busy cluster refuses a PATCH", func(t *testing.T) {
		rec := call(f, "PATCH", clusterPath("ALPHA")+q, `{"tags":{"env":"prod"}}`)
		if rec.Code != 409 {
			t.Errorf("PATCH while Accepted: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("node pool", func(t *testing.T) {
		rec := call(f, "PUT", clusterPath("Alpha")+"/nodePools/Workers"+q, serverNodePoolBody)
		if rec.Code != 201 {
			t.Fatalf("node pool create: %d %s", rec.Code, rec.Body)
		}
		rec = call(f, "GET", clusterPath("alpha")+"/nodepools"+q, "")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"name":"Workers"`) {
			t.Errorf("node pool list: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("external auth", func(t *testing.T) {
		auth := clusterPath("Alpha") + "/externalAuths/Entra"
		rec := call(f, "PUT", auth+q, `{"properties": {"issuer": {"url": "http://issuer.example.com", "audiences": []},
			"claim": {"mappings": {"username": {"claim": "email", "prefix": "p:"}}}}}`)
		if ce := cloudError(t, rec); rec.Code != 400 || ce.Code != CodeMultipleErrorsOccurred || len(ce.Details) < 3 {
			t.Errorf("invalid external auth: %d %s", rec.Code, rec.Body)
		}
		rec = call(f, "PUT", auth+q, minimalExternalAuthBody)
		if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"provisioningState":"Accepted"`) {
			t.Fatalf("external auth create: %d %s", rec.Code, rec.Body)
		}
		// hcp-apiserver holds one external auth per cluster; its 409 reaches the caller in ARM's terms.
		rec = call(f, "PUT", clusterPath("Alpha")+"/externalAuths/Other"+q, minimalExternalAuthBody)
		if ce := cloudError(t, rec); rec.Code != 409 || ce.Code != CodeConflict ||
			!strings.Contains(ce.Message, "a cluster can have one external auth only") || !strings.Contains(ce.Message, "externalAuths/Entra") ||
			strings.Contains(ce.Message, "spec.") || strings.Contains(ce.Message, "hcp.aro.azure.com") {
			t.Errorf("second external auth: %d %s", rec.Code, rec.Body)
		}
		rec = call(f, "GET", clusterPath("alpha")+"/externalauths"+q, "")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"name":"Entra"`) || strings.Contains(rec.Body.String(), "Other") {
			t.Errorf("external auth list: %d %s", rec.Code, rec.Body)
		}
		// Preflight runs the API's validation: the deployed external auth again passes, an http issuer fails.
		preflight := testRGPath + "/providers/Microsoft.RedHatOpenShift/deployments/d-auth/preflight" + q
		resource := func(name, body string) string {
			var r map[string]any
			_ = json.Unmarshal([]byte(body), &r)
			r["type"], r["name"], r["apiVersion"] = names.ExternalAuthType, name, testAPI
			raw, _ := json.Marshal(r)
			return string(raw)
		}
		rec = call(f, "POST", preflight, `{"resources":[`+resource("Alpha/Entra", minimalExternalAuthBody)+`]}`)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"Succeeded"`) {
			t.Errorf("preflight of the deployed external auth: %d %s", rec.Code, rec.Body)
		}
		httpIssuer := strings.Replace(minimalExternalAuthBody, "https://login", "http://login", 1)
		rec = call(f, "POST", preflight, `{"resources":[`+resource("Alpha/Entra", httpIssuer)+`]}`)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"Failed"`) || !strings.Contains(rec.Body.String(), "properties.issuer.url") {
			t.Errorf("preflight of an http issuer: %d %s", rec.Code, rec.Body)
		}
		if ea, err := s.Client.HcpV1alpha1().ExternalAuths(ns).Get(ctx, "alpha.entra", metav1.GetOptions{}); err != nil || !strings.HasPrefix(ea.Spec.Issuer.URL, "https://") {
			t.Errorf("preflight changed the external auth: %v %v", ea, err)
		}
	})

	t.Run("responses match the OpenAPI documents", func(t *testing.T) {
		armschema.Dir(t)
		// The server writes the catalog's versions; the compiled-in catalog offers this one, which the
		// test writes too in case the server has not yet.
		eol := time.Date(2027, 4, 21, 0, 0, 0, 0, time.UTC)
		if _, err := s.Client.HcpV1alpha1().OpenShiftVersions().Create(ctx, testVersion("stable", "4.20.1", true, &eol), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		for _, v := range conversion.APIVersions {
			qv := "?api-version=" + string(v)
			for _, check := range []struct{ target, definition string }{
				{clusterPath("Alpha") + qv, "HcpOpenShiftCluster"},
				{"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + qv, "HcpOpenShiftClusterListResult"},
				{clusterPath("Alpha") + "/nodePools/Workers" + qv, "NodePool"},
				{clusterPath("Alpha") + "/nodePools" + qv, "NodePoolListResult"},
				{clusterPath("Alpha") + "/externalAuths/Entra" + qv, "ExternalAuth"},
				{clusterPath("Alpha") + "/externalAuths" + qv, "ExternalAuthListResult"},
				{"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions" + qv, "HcpOpenShiftVersionListResult"},
				{"/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOpenShiftVersions/stable-4.20.1" + qv, "HcpOpenShiftVersion"},
				{clusterPath("Missing") + qv, "common.ErrorResponse"},
			} {
				rec := call(f, "GET", check.target, "")
				if (rec.Code == 200) != (check.definition != "common.ErrorResponse") {
					t.Errorf("%s GET %s: %d %s", v, check.target, rec.Code, rec.Body)
				}
				if err := armschema.Validate(t, string(v), check.definition, rec.Body.Bytes()); err != nil {
					t.Errorf("%s GET %s is not a %s: %v\n%s", v, check.target, check.definition, err, rec.Body)
				}
			}
		}
	})

	t.Run("list by subscription pages with the API's continue token", func(t *testing.T) {
		// Twenty-two clusters: a first page of the default twenty, whatever $top says, then pages of the
		// size $top asks for beside the $skipToken.
		want := []string{"Alpha", "Beta"}
		for i := range 20 {
			want = append(want, fmt.Sprintf("Page%02d", i))
		}
		for _, name := range want[1:] {
			if rec := call(f, "PUT", clusterPath(name)+q, clusterBody(strings.ToLower(name), "10.128.0.0/14")); rec.Code != 201 {
				t.Fatalf("create %s: %d %s", name, rec.Code, rec.Body)
			}
		}
		target := "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters" + q + "&$top=1"
		var seen []string
		var pageSizes []int
		for range len(want) {
			rec := call(f, "GET", target, "")
			var p struct {
				Value []struct {
					Name string `json:"name"`
				} `json:"value"`
				NextLink string `json:"nextLink"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != 200 {
				t.Fatalf("list: %d %s", rec.Code, rec.Body)
			}
			pageSizes = append(pageSizes, len(p.Value))
			for _, v := range p.Value {
				seen = append(seen, v.Name)
			}
			if p.NextLink == "" {
				break
			}
			if !strings.HasPrefix(p.NextLink, testReferer+"/subscriptions/") || !strings.Contains(p.NextLink, "skipToken=") {
				t.Fatalf("nextLink %q", p.NextLink)
			}
			target = strings.TrimPrefix(p.NextLink, testReferer)
		}
		if !slices.Equal(pageSizes, []int{20, 1, 1}) {
			t.Errorf("pages of %v items, want [20 1 1]: $top=1 applies beside a $skipToken only", pageSizes)
		}
		slices.Sort(seen)
		if !slices.Equal(seen, want) {
			t.Errorf("pages held %v, want %v", seen, want)
		}
	})

	t.Run("preflight", func(t *testing.T) {
		preflight := testRGPath + "/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight" + q
		resource := func(name, podCIDR string) string {
			var r map[string]any
			_ = json.Unmarshal([]byte(clusterBody(name, podCIDR)), &r)
			r["type"], r["name"], r["apiVersion"] = names.ClusterType, name, testAPI
			raw, _ := json.Marshal(r)
			return string(raw)
		}
		rec := call(f, "POST", preflight, `{"resources":[`+resource("gamma", "10.128.0.0/14")+`,{"type":"Microsoft.Storage/storageAccounts","name":"x","apiVersion":"2023-01-01"}]}`)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"Succeeded"`) {
			t.Errorf("valid preflight: %d %s", rec.Code, rec.Body)
		}
		if _, err := s.Client.HcpV1alpha1().HCPClusters(ns).Get(ctx, "gamma", metav1.GetOptions{}); err == nil {
			t.Error("preflight created the cluster")
		}
		rec = call(f, "POST", preflight, `{"resources":[`+resource("delta", "10.128.0.0/99")+`]}`)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"Failed"`) || !strings.Contains(rec.Body.String(), "properties.network.podCidr") {
			t.Errorf("invalid preflight: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("succeeded cluster: PATCH, credential, delete", func(t *testing.T) {
		c, err := s.Client.HcpV1alpha1().HCPClusters(ns).Get(ctx, "alpha", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Status.ProvisioningState = hcpv1alpha1.ProvisioningStateSucceeded
		if _, err := s.Client.HcpV1alpha1().HCPClusters(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		rec := call(f, "PATCH", clusterPath("Alpha")+q, `{"tags":{"env":"prod"}}`)
		if rec.Code != 202 || !strings.Contains(rec.Body.String(), `"env":"prod"`) {
			t.Errorf("PATCH: %d %s", rec.Code, rec.Body)
		}
		// A PATCH of tags leaves the spec, and so the generation, as it was: the cluster stays Succeeded.
		rec = call(f, "POST", clusterPath("Alpha")+"/requestadmincredential?api-version=2026-06-30-preview", "")
		if rec.Code != 202 {
			t.Errorf("requestadmincredential: %d %s", rec.Code, rec.Body)
		}
		creds, err := s.Client.HcpV1alpha1().BreakglassCredentials(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(creds.Items) != 1 || creds.Items[0].Spec.ClusterName != "alpha" || creds.Items[0].Labels[names.LabelSubscription] == "" {
			t.Errorf("credentials %v %v", creds, err)
		}
		t.Run("credential result", func(t *testing.T) { credentialResult(t, f, s, clusterPath("Alpha"), ns) })
		t.Run("revoke", func(t *testing.T) {
			rec := call(f, "POST", clusterPath("Alpha")+"/revokeCredentials"+q, "")
			if rec.Code != 202 || rec.Header().Get("Location") == "" {
				t.Fatalf("revokecredentials: %d %s", rec.Code, rec.Body)
			}
			c, err := s.Client.HcpV1alpha1().HCPClusters(ns).Get(ctx, "alpha", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if meta.FindStatusCondition(c.Status.Conditions, hcpv1alpha1.ConditionRevokingCredentials) == nil {
				t.Errorf("the cluster reports no revocation: %+v", c.Status.Conditions)
			}
		})
		rec = call(f, "DELETE", clusterPath("Alpha")+q, "")
		if rec.Code != 202 {
			t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
		}
		if rec := call(f, "DELETE", clusterPath("Alpha")+q, ""); rec.Code != 409 && rec.Code != 204 {
			t.Errorf("second DELETE: %d %s", rec.Code, rec.Body)
		}
	})
}

// credentialResult requests a credential with a CSR, has it issued as the controllers would, and reads
// the result endpoint: the kubeconfig comes from the credential's kubeconfig subresource.
func credentialResult(t *testing.T, f *Frontend, s *framework.InProcessServer, clusterPath, ns string) {
	ctx := t.Context()
	_, csr, err := breakglass.NewKeyAndCSR("system-admin")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(adminCredentialRequest{CertificateSigningRequest: string(csr)})
	rec := call(f, "POST", clusterPath+"/requestAdminCredential?api-version="+testAPI, string(body))
	if rec.Code != 202 {
		t.Fatalf("requestadmincredential with a CSR: %d %s", rec.Code, rec.Body)
	}
	resultPath := strings.TrimPrefix(rec.Header().Get("Location"), testReferer)
	op := operationFromURL(t, s, rec.Header().Get("Location"))
	if rec := call(f, "GET", resultPath, ""); rec.Code != 202 {
		t.Errorf("result before the credential is issued: %d %s", rec.Code, rec.Body)
	}

	c, err := s.Client.HcpV1alpha1().HCPClusters(ns).Get(ctx, "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Status.API.URL = "https://api.alpha.example.com:6443"
	if _, err := s.Client.HcpV1alpha1().HCPClusters(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cred, err := s.Client.HcpV1alpha1().BreakglassCredentials(ns).Get(ctx, op.Spec.Target.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := cert.GenerateSelfSignedCertKey("system:customer-break-glass:system-admin", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	expires := metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))
	cred.Status.Phase = hcpv1alpha1.BreakglassCredentialPhaseIssued
	cred.Status.Certificate = string(certPEM)
	cred.Status.CertificateAuthority = string(certPEM)
	cred.Status.ExpirationTimestamp = &expires
	if _, err := s.Client.HcpV1alpha1().BreakglassCredentials(ns).UpdateStatus(ctx, cred, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("issuing the credential: %v", err)
	}
	// hcp-apiserver's operation controller, when it runs, marks the operation Succeeded itself.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		op, err := s.Client.HcpV1alpha1().ARMOperations().Get(ctx, op.Name, metav1.GetOptions{})
		if err != nil || op.Status.State == hcpv1alpha1.ARMOperationSucceeded {
			return err
		}
		op.Status.State = hcpv1alpha1.ARMOperationSucceeded
		op.Status.EndTime = &expires
		_, err = s.Client.HcpV1alpha1().ARMOperations().UpdateStatus(ctx, op, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rec = call(f, "GET", resultPath, "")
	var got adminCredential
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("result: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(got.Kubeconfig, "https://api.alpha.example.com:6443") || !strings.Contains(got.Kubeconfig, "client-certificate-data") ||
		strings.Contains(got.Kubeconfig, "client-key-data") {
		t.Errorf("kubeconfig of a CSR credential:\n%s", got.Kubeconfig)
	}
	if _, err := armschema.Find(); err == nil {
		if err := armschema.Validate(t, testAPI, "HcpOpenShiftClusterAdminCredential", rec.Body.Bytes()); err != nil {
			t.Errorf("the credential is not a HcpOpenShiftClusterAdminCredential: %v", err)
		}
	}
	if got.ExpirationTimestamp != expires.UTC().Format(time.RFC3339) {
		t.Errorf("expirationTimestamp %q, want %s", got.ExpirationTimestamp, expires.UTC().Format(time.RFC3339))
	}
}

func operationFromURL(t *testing.T, s *framework.InProcessServer, raw string) *hcpv1alpha1.ARMOperation {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.Client.HcpV1alpha1().ARMOperations().Get(t.Context(), u.Path[strings.LastIndex(u.Path, "/")+1:], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// A PUT that finds its subscription Registered in the informer's cache creates without reading it from the
// API, and the server writes that create only while the subscription is at the version the cache holds.
// So once ARM has changed the state through another replica, a PUT is refused as the new state says and
// writes nothing, however stale this replica's cache; and a state that allows the create again lets it
// through, though the cache's version is old.
func TestCreateRequiresTheSubscriptionAsCached(t *testing.T) {
	s := startServer(t)
	ctx := t.Context()
	subscriptions := s.Client.HcpV1alpha1().ARMSubscriptions()
	registered, err := subscriptions.Create(ctx, subscription(hcpv1alpha1.ARMSubscriptionRegistered), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(registered); err != nil {
		t.Fatal(err)
	}
	f, err := New(Config{Client: s.Client, Location: "eastus", Subscriptions: hcplisters.NewARMSubscriptionLister(indexer)})
	if err != nil {
		t.Fatal(err)
	}
	q := "?api-version=" + testAPI
	clusterPath := func(name string) string {
		return testRGPath + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
	}
	ns := names.Namespace(testSub, "Dev-RG")
	setState := func(state hcpv1alpha1.ARMSubscriptionState) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current, err := subscriptions.Get(ctx, registered.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			current.Spec.State = state
			_, err = subscriptions.Update(ctx, current, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// written tells whether the cluster name exists, and how many operations follow a cluster of that name.
	written := func(name string) (bool, int) {
		t.Helper()
		_, err := s.Client.HcpV1alpha1().HCPClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		ops, lerr := s.Client.HcpV1alpha1().ARMOperations().List(ctx, metav1.ListOptions{})
		if lerr != nil {
			t.Fatal(lerr)
		}
		following := 0
		for _, op := range ops.Items {
			if op.Spec.Target.Namespace == ns && op.Spec.Target.Name == name {
				following++
			}
		}
		return err == nil, following
	}

	if rec := call(f, "PUT", clusterPath("alpha")+q, clusterBody("alpha", "10.128.0.0/14")); rec.Code != 201 {
		t.Fatalf("PUT with the subscription Registered in the cache and the API: %d %s", rec.Code, rec.Body)
	}

	setState(hcpv1alpha1.ARMSubscriptionSuspended)
	if rec := call(f, "PUT", clusterPath("beta")+q, clusterBody("beta", "10.128.0.0/14")); rec.Code != 409 ||
		cloudError(t, rec).Code != CodeInvalidSubscriptionState || !strings.Contains(rec.Body.String(), "'Suspended'") {
		t.Errorf("PUT of a new cluster once the subscription was Suspended, the cache still Registered: %d %s, want 409 %s for Suspended",
			rec.Code, rec.Body, CodeInvalidSubscriptionState)
	}
	if exists, ops := written("beta"); exists || ops != 0 {
		t.Errorf("the refused PUT wrote the cluster (%v) or %d operations", exists, ops)
	}
	// A replace is no create: it reads the subscription from the API before it writes.
	if rec := call(f, "PUT", clusterPath("alpha")+q, clusterBody("alpha", "10.128.0.0/14")); rec.Code != 409 ||
		cloudError(t, rec).Code != CodeInvalidSubscriptionState {
		t.Errorf("PUT replacing a cluster once the subscription was Suspended, the cache still Registered: %d %s, want 409 %s",
			rec.Code, rec.Body, CodeInvalidSubscriptionState)
	}
	if _, ops := written("alpha"); ops != 1 {
		t.Errorf("%d operations follow alpha, want its create's only", ops)
	}

	setState(hcpv1alpha1.ARMSubscriptionRegistered)
	if rec := call(f, "PUT", clusterPath("gamma")+q, clusterBody("gamma", "10.128.0.0/14")); rec.Code != 201 {
		t.Errorf("PUT once the subscription is Registered again, the cache at an older version: %d %s, want 201", rec.Code, rec.Body)
	}
	if exists, ops := written("gamma"); !exists || ops != 1 {
		t.Errorf("the PUT wrote the cluster (%v) and %d operations, want both and one", exists, ops)
	}
}
