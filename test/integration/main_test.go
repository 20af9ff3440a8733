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

	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
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
