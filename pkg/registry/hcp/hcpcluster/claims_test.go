package hcpcluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// newClaimingStore is the cluster store with its claims, as the server makes it, and the client of its etcd.
func newClaimingStore(t *testing.T) (*hcpregistry.REST, *clientv3.Client) {
	t.Helper()
	opts, client := registrytest.NewRESTOptionsAndClient(t, "hcpclusters")
	store, _, err := newREST(NewStrategy(registrytest.Scheme, nil, nil), registrytest.OptionsGetter{RESTOptions: opts}, claims.New(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Store.DestroyFunc)
	return store, client
}

// A create writes its object and its claims in one etcd transaction; a create whose value another cluster
// holds is refused at the field and leaves nothing behind; a second create of a name is AlreadyExists.
func TestCreateClaimsInItsOwnTransaction(t *testing.T) {
	store, client := newClaimingStore(t)
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

// What a create answers is the stored object and stays so: the store encodes each create in memory the
// next create reuses, so an answer that kept any of it would change under concurrent creates.
func TestCreateAnswersAreTheStoredObjects(t *testing.T) {
	store, _ := newClaimingStore(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "test")

	const clients, each = 8, 5
	answers := make([]*hcp.HCPCluster, clients*each)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c * each; i < (c+1)*each; i++ {
				cluster := &hcp.HCPCluster{}
				registrytest.Internal(t, fixtures.HCPCluster("test", fmt.Sprintf("cluster-%d", i)), cluster)
				// Managed fields are bytes, the one kind of field a decoder could keep a view of.
				cluster.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "test", Operation: metav1.ManagedFieldsOperationUpdate,
					APIVersion: "hcp.aro.azure.com/v1alpha1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: fmt.Appendf(nil, `{"f:metadata":{"f:labels":{"f:n%d":{}}}}`, i)}}}
				created, err := store.Create(ctx, cluster, nil, &metav1.CreateOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				answers[i] = created.(*hcp.HCPCluster)
			}
		})
	}
	wg.Wait()
	for i, answer := range answers {
		if answer == nil {
			continue
		}
		stored, err := store.Get(ctx, answer.Name, &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(answer, stored) {
			t.Errorf("the answer to the create of %s is not the stored object: %s", answer.Name, diff.Diff(stored, answer))
		}
		if want := fmt.Sprintf(`"f:n%d"`, i); len(answer.ManagedFields) != 1 || !strings.Contains(string(answer.ManagedFields[0].FieldsV1.Raw), want) {
			t.Errorf("the answer to the create of %s has managed fields %v, want its own (%s)", answer.Name, answer.ManagedFields, want)
		}
	}
}
