package e2e

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// TestAggregatedModeDelegatesToKubeAPIServer runs hcp-apiserver as it runs behind kube-apiserver:
// kube-apiserver authenticates callers (TokenReview) and authorizes them with its RBAC
// (SubjectAccessReview), and the standard admission plugins read its namespaces.
func TestAggregatedModeDelegatesToKubeAPIServer(t *testing.T) {
	ctx := context.Background()
	mc := framework.StartManagementCluster(t)
	s := framework.StartHCPAPIServerProcess(t, t.TempDir(),
		"--authentication-kubeconfig", mc.Kubeconfig,
		"--authorization-kubeconfig", mc.Kubeconfig,
		"--kubeconfig", mc.Kubeconfig,
		// The test cluster runs no front proxy, so there is no request-header CA to read.
		"--authentication-skip-lookup")

	// The serving certificate is self-signed in aggregated mode (an APIService trusts it by
	// caBundle); callers here present kube-apiserver credentials to it directly.
	clientAs := func(token string) versioned.Interface {
		cfg := &rest.Config{Host: s.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
		c, err := versioned.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	adminConfig, err := clientcmd.BuildConfigFromFlags("", mc.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin := clientAs(adminConfig.BearerToken)

	// NamespaceLifecycle runs: a namespace kube-apiserver does not have is refused.
	_, err = admin.HcpV1alpha1().HCPClusters("nowhere").Create(ctx, fixtures.HCPCluster("nowhere", "dev"), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "nowhere" not found`) {
		t.Errorf("create in a namespace kube-apiserver lacks: %v, want NamespaceLifecycle's NotFound", err)
	}
	if _, err := admin.HcpV1alpha1().HCPClusters("default").Create(ctx, fixtures.HCPCluster("default", "dev"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("system:masters of kube-apiserver cannot create: %v", err)
	}
	// The service's own plugins run too.
	old := fixtures.HCPCluster("default", "old")
	old.Spec.Version.ID = "4.18"
	if _, err := admin.HcpV1alpha1().HCPClusters("default").Create(ctx, old, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "VersionPolicy") {
		t.Errorf("4.18 in aggregated mode: %v, want VersionPolicy's refusal", err)
	}

	// A service account that kube-apiserver's RBAC lets read HCPClusters, and nothing more.
	if _, err := mc.Kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Kube.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "hcp-viewer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"hcp.aro.azure.com"}, Resources: []string{"hcpclusters"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Kube.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "hcp-viewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "hcp-viewer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "viewer", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := mc.Kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, "viewer", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// hcp-apiserver would remember a refusal from before kube-apiserver's RBAC saw the binding.
	waitUntilAllowed(t, mc, "viewer", "list", "hcpclusters", "")
	viewer := clientAs(token.Status.Token)
	if list, err := viewer.HcpV1alpha1().HCPClusters("default").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Errorf("the viewer lists %v (err %v), want dev", list, err)
	}
	_, err = viewer.HcpV1alpha1().HCPClusters("default").Create(ctx, fixtures.HCPCluster("default", "mine"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:default:viewer") {
		t.Errorf("the viewer creates: %v, want Forbidden naming the service account", err)
	}

	t.Run("the deploy roles keep break-glass kubeconfigs to admins", func(t *testing.T) {
		testDeployRoles(t, mc, clientAs)
	})

	// A token kube-apiserver does not know is not a user.
	if _, err := clientAs("not-a-token").HcpV1alpha1().HCPClusters("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("an unknown token: %v, want Unauthorized", err)
	}
}

// testDeployRoles installs the ClusterRoles of artifacts/deploy in kube-apiserver and checks that a viewer
// lists credentials but reads no kubeconfig, while an admin does: kube-apiserver's RBAC says so, and
// hcp-apiserver, which asks it, acts on it.
func testDeployRoles(t *testing.T, mc *framework.ManagementCluster, clientAs func(string) versioned.Interface) {
	ctx := context.Background()
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "artifacts", "deploy", "base", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind != "ClusterRole" || !strings.HasPrefix(role.Name, "hcp-") || role.Name == "hcp-apiserver" {
			continue
		}
		if _, err := mc.Kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	for _, user := range []struct{ name, role string }{{"bgc-viewer", "hcp-viewer"}, {"bgc-admin", "hcp-admin"}, {"ea-editor", "hcp-editor"}, {"sre", "hcp-sre"}} {
		if _, err := mc.Kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: user.name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := mc.Kube.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user.role},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: user.name, Namespace: "default"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		token, err := mc.Kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, user.name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[user.name] = token.Status.Token
	}

	// kubectl auth can-i asks kube-apiserver a SubjectAccessReview; kubectl needs the group in discovery,
	// which takes an APIService this test does not register, so the test asks directly.
	var canDo func(user, verb, resource, subresource string) bool
	canI := func(user, verb, subresource string) bool {
		t.Helper()
		return canDo(user, verb, "breakglasscredentials", subresource)
	}
	canDo = func(user, verb, resource, subresource string) bool {
		t.Helper()
		review, err := accessReview(ctx, mc, user, verb, resource, subresource)
		if err != nil {
			t.Fatal(err)
		}
		return review.Allowed
	}
	// What each user may do, once kube-apiserver's RBAC has seen its binding; then what it may not.
	waitUntilAllowed(t, mc, "bgc-viewer", "list", "breakglasscredentials", "")
	waitUntilAllowed(t, mc, "bgc-admin", "get", "breakglasscredentials", "kubeconfig")
	waitUntilAllowed(t, mc, "ea-editor", "create", "externalauths", "")
	waitUntilAllowed(t, mc, "sre", "create", "clusterinspections", "")
	if !canI("bgc-viewer", "list", "") {
		t.Errorf("hcp-viewer may not list breakglasscredentials, want it may")
	}
	if canI("bgc-viewer", "get", "kubeconfig") {
		t.Errorf("hcp-viewer may get breakglasscredentials/kubeconfig, want it may not")
	}
	if !canI("bgc-admin", "get", "kubeconfig") {
		t.Errorf("hcp-admin may not get breakglasscredentials/kubeconfig, want it may")
	}
	if !canDo("bgc-viewer", "list", "externalauths", "") || canDo("bgc-viewer", "create", "externalauths", "") {
		t.Errorf("hcp-viewer may not list externalauths, or may create them; want it may read only")
	}
	if !canDo("ea-editor", "create", "externalauths", "") || !canDo("ea-editor", "delete", "externalauths", "") {
		t.Errorf("hcp-editor may not create or delete externalauths, want it may")
	}
	if !canDo("sre", "create", "clusterinspections", "") || canDo("ea-editor", "create", "clusterinspections", "") ||
		canDo("bgc-admin", "create", "clusterinspections", "") || canDo("bgc-viewer", "get", "clusterinspections", "") {
		t.Errorf("hcp-sre may not create clusterinspections, or hcp-editor, hcp-admin or hcp-viewer may use them; want hcp-sre only")
	}
	if !canDo("bgc-viewer", "list", "openshiftversions", "") || canDo("ea-editor", "create", "openshiftversions", "") {
		t.Errorf("hcp-viewer may not list openshiftversions, or hcp-editor may create them; want them read by users and written by hcp-apiserver only")
	}

	// The roles aggregate into the built-in ones, as kube-controller-manager's aggregation controller
	// makes them: view lists clusters but neither creates them nor reads a kubeconfig; admin reads one.
	mc.StartControllerManagerWith(t, "clusterrole-aggregation")
	for _, user := range []struct{ name, role string }{{"view-user", "view"}, {"admin-user", "admin"}} {
		if _, err := mc.Kube.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user.role},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: user.name, Namespace: "default"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return canDo("view-user", "list", "hcpclusters", "") && canDo("admin-user", "get", "breakglasscredentials", "kubeconfig"), nil
	}); err != nil {
		t.Fatalf("the built-in view and admin roles never took in the hcp roles: view lists hcpclusters %v, admin reads kubeconfigs %v",
			canDo("view-user", "list", "hcpclusters", ""), canDo("admin-user", "get", "breakglasscredentials", "kubeconfig"))
	}
	if canDo("view-user", "create", "hcpclusters", "") {
		t.Errorf("the built-in view role may create hcpclusters")
	}
	if canDo("view-user", "get", "breakglasscredentials", "kubeconfig") {
		t.Errorf("the built-in view role may read break-glass kubeconfigs")
	}
	if canDo("admin-user", "create", "clusterinspections", "") || canDo("admin-user", "list", "clusterinspections", "") {
		t.Errorf("the built-in admin role may use clusterinspections: hcp-sre must aggregate to no built-in role")
	}

	// hcp-apiserver asks kube-apiserver the same: the viewer is refused before the credential is looked
	// up, the admin gets as far as finding there is none.
	get := func(user string) error {
		return clientAs(tokens[user]).HcpV1alpha1().RESTClient().Get().Namespace("default").
			Resource("breakglasscredentials").Name("none").SubResource("kubeconfig").Do(ctx).Error()
	}
	if err := get("bgc-viewer"); !apierrors.IsForbidden(err) {
		t.Errorf("hcp-viewer reads a kubeconfig: %v, want Forbidden", err)
	}
	if err := get("bgc-admin"); !apierrors.IsNotFound(err) {
		t.Errorf("hcp-admin reads the kubeconfig of a credential that does not exist: %v, want NotFound", err)
	}

	// An inspection reads a management cluster: an admin of the namespace is refused, an SRE gets as far
	// as admission, which finds no such cluster.
	inspectAs := func(user string) error {
		_, err := clientAs(tokens[user]).HcpV1alpha1().ClusterInspections("default").Create(ctx, &hcpv1alpha1.ClusterInspection{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "none-"},
			Spec:       hcpv1alpha1.ClusterInspectionSpec{ClusterName: "none", View: hcpv1alpha1.InspectionViewHostedCluster, Reason: "on call"},
		}, metav1.CreateOptions{})
		return err
	}
	if err := inspectAs("bgc-admin"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "clusterinspections") {
		t.Errorf("hcp-admin creates an inspection: %v, want 403 Forbidden naming clusterinspections", err)
	}
	if err := inspectAs("sre"); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.clusterName") {
		t.Errorf("hcp-sre inspects a cluster that does not exist: %v, want 422 naming spec.clusterName", err)
	}
}

// waitUntilAllowed waits until kube-apiserver allows the service account user of the default namespace
// verb on an hcp.aro.azure.com resource: its RBAC authorizer decides from its informers' copies of Roles
// and bindings, which learn of a new one a moment after its create is answered.
func waitUntilAllowed(t *testing.T, mc *framework.ManagementCluster, user, verb, resource, subresource string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s allowed to %s %s", user, verb, path.Join(resource, subresource)), func() (bool, string) {
		review, err := accessReview(t.Context(), mc, user, verb, resource, subresource)
		if err != nil {
			return false, err.Error()
		}
		return review.Allowed, review.Reason
	})
}

// accessReview asks kube-apiserver whether the service account user of the default namespace may verb an
// hcp.aro.azure.com resource there.
func accessReview(ctx context.Context, mc *framework.ManagementCluster, user, verb, resource, subresource string) (authorizationv1.SubjectAccessReviewStatus, error) {
	review, err := mc.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:default:" + user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: verb,
			Group: "hcp.aro.azure.com", Resource: resource, Subresource: subresource},
	}}, metav1.CreateOptions{})
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	return review.Status, nil
}
