package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// TestDeployManifestsAreAcceptedByKubeAPIServer applies every kustomization under artifacts/ to a real
// kube-apiserver with --dry-run=server, as an operator would apply it for real: the server's defaulting and
// validation (APIService, StatefulSet, NetworkPolicy, PodDisruptionBudget, RBAC) accept every object.
func TestDeployManifestsAreAcceptedByKubeAPIServer(t *testing.T) {
	skipWithoutKubectl(t)
	mc := framework.StartKubeAPIServer(t)
	root := repoRoot(t)

	for _, k := range []struct{ name, dir string }{
		{"deploy", deployKustomization(t)},
		{"agent", filepath.Join(root, "artifacts", "agent")},
	} {
		t.Run(k.name, func(t *testing.T) {
			objects := kustomize(t, k.dir)
			if len(objects) == 0 {
				t.Fatalf("kubectl kustomize %s renders nothing", k.dir)
			}
			// A dry run creates no namespace, so the namespaced objects of the same apply would find none.
			createNamespaces(t, mc, objects)
			out := mustRun(t, "kubectl", "--kubeconfig", mc.Kubeconfig, "apply", "--dry-run=server", "-k", k.dir)
			for _, o := range objects {
				// "deployment.apps/hcp-apiserver created (server dry run)", "namespace/hcp-system unchanged"
				if !regexp.MustCompile(`(?m)^` + strings.ToLower(o.GetKind()) + `(\.[a-z0-9.-]+)?/` + regexp.QuoteMeta(o.GetName()) + ` `).MatchString(out) {
					t.Errorf("kubectl apply --dry-run=server -k %s says nothing of %s %s:\n%s", k.dir, o.GetKind(), o.GetName(), out)
				}
			}
		})
	}

	t.Run("cert-manager", func(t *testing.T) {
		// cert-manager's own kinds need its CRDs, which this cluster lacks; everything else is dry-run applied.
		objects := kustomize(t, filepath.Join(root, "artifacts", "deploy", "cert-manager"))
		var rest []unstructured.Unstructured
		certificates := 0
		for _, o := range objects {
			if o.GroupVersionKind().Group == "cert-manager.io" {
				certificates++
				continue
			}
			rest = append(rest, o)
			if o.GetKind() == "APIService" && o.GetAnnotations()["cert-manager.io/inject-ca-from"] != "hcp-system/hcp-apiserver-serving" {
				t.Errorf("the cert-manager overlay's APIService has annotations %v, want cert-manager.io/inject-ca-from: hcp-system/hcp-apiserver-serving", o.GetAnnotations())
			}
		}
		if certificates == 0 {
			t.Fatal("the cert-manager overlay renders no cert-manager objects")
		}
		createNamespaces(t, mc, rest)
		var manifest bytes.Buffer
		for _, o := range rest {
			raw, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			manifest.WriteString("---\n")
			manifest.Write(raw)
		}
		mustRun(t, "kubectl", "--kubeconfig", mc.Kubeconfig, "apply", "--dry-run=server", "-f", writeFile(t, "cert-manager.yaml", manifest.String()))
	})
}

// TestDeployManifestsNameOnlyFlagsTheBinariesHave checks every container of artifacts/ against the binary it
// runs: each --flag in its command and args is one that binary's --help lists. A flag renamed or removed in
// the code fails here, not in a rollout.
func TestDeployManifestsNameOnlyFlagsTheBinariesHave(t *testing.T) {
	skipWithoutKubectl(t)
	root := repoRoot(t)
	binaries := map[string]string{
		"hcp-apiserver": framework.Command(t, "hcp-apiserver"),
		"maestro-agent": framework.Command(t, "maestro-agent"),
		"arm-shim":      framework.Command(t, "arm-shim"),
		"etcd":          framework.Tool(t, "etcd"),
	}
	flags := map[string][]string{}
	for name, binary := range binaries {
		flags[name] = helpFlags(t, binary)
	}
	// The parser must find flags each binary surely has, or every check below would pass on nothing.
	for name, known := range map[string]string{"hcp-apiserver": "etcd-servers", "maestro-agent": "kubeconfig", "arm-shim": "client-ca-file", "etcd": "peer-client-cert-auth"} {
		if !slices.Contains(flags[name], known) {
			t.Fatalf("%s --help lists %d flags, not --%s: the help format changed", name, len(flags[name]), known)
		}
	}

	checked := map[string]int{}
	for _, dir := range []string{deployKustomization(t), filepath.Join(root, "artifacts", "agent")} {
		for _, o := range kustomize(t, dir) {
			for _, c := range podContainers(t, o) {
				binary := imageBinary(c.Image)
				known, ok := flags[binary]
				if !ok {
					continue
				}
				for _, arg := range append(slices.Clone(c.Command), c.Args...) {
					if !strings.HasPrefix(arg, "--") {
						continue
					}
					flag, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
					checked[binary]++
					if !slices.Contains(known, flag) {
						t.Errorf("%s %s, container %s: %s has no flag --%s", o.GetKind(), o.GetName(), c.Name, binary, flag)
					}
				}
			}
		}
	}
	for binary := range binaries {
		if checked[binary] == 0 {
			t.Errorf("no manifest under artifacts/ runs %s with flags", binary)
		}
	}
	t.Logf("flags checked per binary: %v", checked)
}

// imageBinary is the binary an image runs, by the image's name: registry and tag dropped.
func imageBinary(image string) string {
	name := image[strings.LastIndex(image, "/")+1:]
	name, _, _ = strings.Cut(name, "@")
	name, _, _ = strings.Cut(name, ":")
	return name
}

// helpFlagPattern matches the flag names of a --help: pflag's "  -v, --name type" and etcd's "  --name 'x'".
var helpFlagPattern = regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9][a-z0-9-]*)`)

// helpFlags lists the long flags a binary's --help names.
func helpFlags(t *testing.T, binary string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	// etcd prints its help to stderr; some binaries exit non-zero after printing it.
	out, _ := exec.CommandContext(ctx, binary, "--help").CombinedOutput()
	var names []string
	for _, m := range helpFlagPattern.FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	return names
}

// deployKustomization copies artifacts/deploy into a temporary folder and makes its certificates there with
// hack/deploy-certs.sh, as the README tells an operator to, and returns the folder.
func deployKustomization(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "deploy")
	// The base includes ../../arm-shim, which comes along to the same place beside it.
	for _, name := range []string{"deploy", "arm-shim"} {
		if err := os.CopyFS(filepath.Join(tmp, name), os.DirFS(filepath.Join(root, "artifacts", name))); err != nil {
			t.Fatal(err)
		}
	}
	// A checkout may hold an operator's own certificates; the test makes its own.
	if err := os.RemoveAll(filepath.Join(dir, "certs")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "bash", filepath.Join(root, "hack", "deploy-certs.sh"), filepath.Join(dir, "certs"))
	return dir
}

// kustomize renders a kustomization with kubectl's kustomize, as kubectl apply -k does.
func kustomize(t *testing.T, dir string) []unstructured.Unstructured {
	t.Helper()
	out := mustRun(t, "kubectl", "kustomize", dir)
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	var objects []unstructured.Unstructured
	for {
		var o unstructured.Unstructured
		if err := decoder.Decode(&o.Object); err != nil {
			break
		}
		if len(o.Object) > 0 {
			objects = append(objects, o)
		}
	}
	return objects
}

// podContainers are the containers of a workload's pod template; none for other kinds.
func podContainers(t *testing.T, o unstructured.Unstructured) []corev1.Container {
	t.Helper()
	var template *corev1.PodTemplateSpec
	switch o.GetKind() {
	case "Deployment":
		var d appsv1.Deployment
		fromUnstructured(t, o, &d)
		template = &d.Spec.Template
	case "StatefulSet":
		var s appsv1.StatefulSet
		fromUnstructured(t, o, &s)
		template = &s.Spec.Template
	case "DaemonSet":
		var d appsv1.DaemonSet
		fromUnstructured(t, o, &d)
		template = &d.Spec.Template
	default:
		return nil
	}
	return append(slices.Clone(template.Spec.InitContainers), template.Spec.Containers...)
}

func fromUnstructured(t *testing.T, o unstructured.Unstructured, into any) {
	t.Helper()
	raw, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// createNamespaces creates, for real, each namespace the objects are in or declare.
func createNamespaces(t *testing.T, mc *framework.ManagementCluster, objects []unstructured.Unstructured) {
	t.Helper()
	seen := map[string]bool{}
	for _, o := range objects {
		ns := o.GetNamespace()
		if o.GetKind() == "Namespace" {
			ns = o.GetName()
		}
		if ns == "" || seen[ns] {
			continue
		}
		seen[ns] = true
		if out, err := run(t, "kubectl", "--kubeconfig", mc.Kubeconfig, "create", "namespace", ns); err != nil && !strings.Contains(out, "AlreadyExists") {
			t.Fatalf("kubectl create namespace %s: %v\n%s", ns, err, out)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func skipWithoutKubectl(t *testing.T) {
	t.Helper()
	if kubectlMissing != nil {
		t.Skip("kubectl not found on PATH: install kubectl (https://kubernetes.io/docs/tasks/tools/) to run the end-to-end tests")
	}
}

// run runs a command with no input and returns what it printed (stdout and stderr).
func run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := run(t, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}
