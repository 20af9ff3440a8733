package armoperation

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

const operationValue = `{"metadata":{"name":"0f8fad5b-d9cb-469f-a165-70867728950e"},"spec":{"request":"Create",` +
	`"resourceID":"/subscriptions/5d7c2d5e-2b4f-4e36-9c5b-0f6c8a1d9e21/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/dev",` +
	`"subscriptionID":"5d7c2d5e-2b4f-4e36-9c5b-0f6c8a1d9e21","location":"eastus"}}`

// TestRecorderAuthorizesAndWritesAsTheStore: the caller of a create that asks for an operation must be
// allowed to create it, and the operation is written as the armoperations store writes one.
func TestRecorderAuthorizesAndWritesAsTheStore(t *testing.T) {
	opts := registrytest.NewRESTOptions(t, "armoperations")
	var asked authorizer.Attributes
	allowed := authorizer.DecisionDeny
	authz := authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = a
		return allowed, "no RBAC rule allows it", nil
	})
	r, err := NewRecorder(registrytest.Scheme, registrytest.OptionsGetter{RESTOptions: opts}, authz)
	if err != nil {
		t.Fatal(err)
	}
	ctx := genericapirequest.WithUser(genericapirequest.WithNamespace(context.Background(), "ns"), &user.DefaultInfo{Name: "alice"})

	_, _, err = r.Detach(ctx, "hcpclusters", operationValue, "")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no RBAC rule allows it") || !strings.Contains(err.Error(), hcp.ARMOperationAnnotation) {
		t.Errorf("a caller who may not create operations: %v, want Forbidden naming the annotation and the reason", err)
	}
	// As a create of an ARMOperation is authorized: by resource, not name.
	if asked == nil || asked.GetUser().GetName() != "alice" || asked.GetVerb() != "create" || asked.GetResource() != "armoperations" ||
		asked.GetAPIGroup() != hcp.GroupName || asked.GetName() != "" || !asked.IsResourceRequest() {
		t.Errorf("asked the authorizer %+v, want alice creating armoperations", asked)
	}

	allowed = authorizer.DecisionAllow
	name, complete, err := r.Detach(ctx, "hcpclusters", operationValue, "")
	if err != nil || name != "0f8fad5b-d9cb-469f-a165-70867728950e" {
		t.Fatalf("an allowed caller: %q, %v", name, err)
	}
	target := &metav1.ObjectMeta{Namespace: "ns", Name: "dev", UID: "cluster-uid", Generation: 1}
	companion, err := complete(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if want := "/" + opts.ResourcePrefix + "/" + name; !strings.HasSuffix(companion.Key, want) {
		t.Errorf("written at %s, want the armoperations store's key %s", companion.Key, want)
	}
	var stored v1alpha1.ARMOperation
	codec := serializer.NewCodecFactory(registrytest.Scheme).UniversalDecoder(v1alpha1.SchemeGroupVersion)
	if _, _, err := codec.Decode(companion.Value, nil, &stored); err != nil {
		t.Fatalf("the stored operation does not decode: %v", err)
	}
	wantTarget := v1alpha1.ARMOperationTarget{Resource: "hcpclusters", Namespace: "ns", Name: "dev", UID: "cluster-uid", Generation: 1}
	if stored.Spec.Target != wantTarget || stored.Status.State != v1alpha1.ARMOperationAccepted || stored.UID == "" || stored.CreationTimestamp.IsZero() {
		t.Errorf("stored %+v with state %s, UID %q, created %v; want the target, Accepted and system fields", stored.Spec.Target, stored.Status.State, stored.UID, stored.CreationTimestamp)
	}
}
