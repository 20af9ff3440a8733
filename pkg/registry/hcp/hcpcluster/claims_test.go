package hcpcluster

import (
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

// A create writes its object and its claims in one etcd transaction; a create whose value another cluster
// holds is refused at the field and leaves nothing behind; a second create of a name is AlreadyExists.
func TestCreateClaimsInItsOwnTransaction(t *testing.T) {
	opts, client := registrytest.NewRESTOptionsAndClient(t, "hcpclusters")
	store, _, err := newREST(NewStrategy(registrytest.Scheme, nil, nil), registrytest.OptionsGetter{RESTOptions: opts}, claims.New(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Store.DestroyFunc)
	ctx := genericapirequest.WithNamespace(context.Background(), "test")
	revision := func() int64 {
		resp, err := client.Get(context.Background(), "/", clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	claimsHeldBy := func(uid string) (n int, revisions map[int64]bool) {
		resp, err := client.Get(context.Background(), claims.Prefix+"claims/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		revisions = map[int64]bool{}
		for _, kv := range resp.Kvs {
			if strings.Contains(string(kv.Value), uid) {
				n++
				revisions[kv.ModRevision] = true
			}
		}
		return n, revisions
	}

	before := revision()
	created, err := store.Create(ctx, validCluster(t), nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cluster := created.(*hcp.HCPCluster)
	if after := revision(); after != before+1 {
		t.Errorf("a create moved etcd from revision %d to %d, want one transaction", before, after)
	}
	n, revisions := claimsHeldBy(string(cluster.UID))
	if n != 3 || len(revisions) != 1 || cluster.ResourceVersion != "" && !revisions[revision()] {
		t.Errorf("%d claims of the new cluster at revisions %v (its resourceVersion %s), want subnet, NSG and group with the object",
			n, revisions, cluster.ResourceVersion)
	}

	// Another cluster on the same subnet: refused naming it, with nothing of it left in etcd.
	other := validCluster(t)
	other.Name = "bar"
	other.Spec.Platform.NetworkSecurityGroupID += "-other"
	other.Spec.Platform.ManagedResourceGroup += "-other"
	_, err = store.Create(ctx, other, nil, &metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.platform.subnetID") || !strings.Contains(err.Error(), "test/foo") {
		t.Fatalf("a second cluster on the subnet: %v, want 422 on spec.platform.subnetID naming test/foo", err)
	}
	if n, _ := claimsHeldBy(string(other.UID)); n != 0 {
		t.Errorf("the refused cluster left %d claims", n)
	}
	if _, err := store.Get(ctx, "bar", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused cluster was stored (%v)", err)
	}

	// The same name again: AlreadyExists, and the first cluster keeps its claims.
	_, err = store.Create(ctx, validCluster(t), nil, &metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("a second create of test/foo: %v, want AlreadyExists", err)
	}
	if n, _ := claimsHeldBy(string(cluster.UID)); n != 3 {
		t.Errorf("the first cluster holds %d claims after a second create of its name, want its 3", n)
	}
}
