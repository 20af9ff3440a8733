// Package integration runs hcp-apiserver in the test process on an embedded etcd
// and talks to it through the generated typed clientset, as controllers do.
package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

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

// updateCluster changes an HCPCluster as a client should while controllers write it too: on a fresh
// copy, again on a conflict. It returns what the server answered last.
func updateCluster(ctx context.Context, ns, name string, change func(*v1alpha1.HCPCluster)) (*v1alpha1.HCPCluster, error) {
	return writeCluster(ctx, ns, name, change, client().HcpV1alpha1().HCPClusters(ns).Update)
}

// updateClusterStatus is updateCluster for /status.
func updateClusterStatus(ctx context.Context, ns, name string, change func(*v1alpha1.HCPCluster)) (*v1alpha1.HCPCluster, error) {
	return writeCluster(ctx, ns, name, change, client().HcpV1alpha1().HCPClusters(ns).UpdateStatus)
}

func writeCluster(ctx context.Context, ns, name string, change func(*v1alpha1.HCPCluster),
	write func(context.Context, *v1alpha1.HCPCluster, metav1.UpdateOptions) (*v1alpha1.HCPCluster, error)) (*v1alpha1.HCPCluster, error) {
	var written *v1alpha1.HCPCluster
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := client().HcpV1alpha1().HCPClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(current)
		written, err = write(ctx, current, metav1.UpdateOptions{})
		return err
	})
	return written, err
}

// waitClusterGone waits until a deleted HCPCluster is gone: the delivery controller lets it go once
// nothing of it is left on a management cluster, at once for a cluster never placed.
func waitClusterGone(t *testing.T, ns, name string) {
	t.Helper()
	var last *v1alpha1.HCPCluster
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client().HcpV1alpha1().HCPClusters(ns).Get(ctx, name, metav1.GetOptions{})
		last, lastErr = got, err
		return apierrors.IsNotFound(err), nil
	})
	if err != nil && lastErr != nil {
		t.Fatalf("the deleted HCPCluster %s/%s could not be read for 30s: %v", ns, name, lastErr)
	}
	if err != nil {
		t.Fatalf("the deleted HCPCluster %s/%s is still there after 30s: finalizers %v, status %+v", ns, name, last.Finalizers, last.Status)
	}
}
