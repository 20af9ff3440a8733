// Package integration runs hcp-apiserver in the test process on an embedded etcd
// and talks to it through the generated typed clientset, as controllers do.
package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/rand"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// server is shared by the tests of this package; each test works in its own namespace.
var server *framework.InProcessServer

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "hcp-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	server, err = framework.StartInProcessServer(context.Background(), dir, framework.InProcessOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer server.Stop()
	return m.Run()
}

// namespace returns a namespace name of the test's own; the standalone server has no
// Namespace objects, so any name works.
func namespace(t *testing.T) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	return strings.Trim(name, "-") + "-" + rand.String(5)
}

func client() versioned.Interface { return server.Client }

// createCluster creates a valid HCPCluster, which node pools and credentials need first.
func createCluster(t *testing.T, ns, name string) *v1alpha1.HCPCluster {
	t.Helper()
	c, err := client().HcpV1alpha1().HCPClusters(ns).Create(context.Background(), fixtures.HCPCluster(ns, name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating HCPCluster %s/%s: %v", ns, name, err)
	}
	return c
}
