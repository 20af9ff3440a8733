package hcpcluster

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp"
)

// RevokeREST serves hcpclusters/revokecredentials: a create, as ARM's POST revokeCredentials action is,
// that turns the cluster's RevokingCredentials condition True and answers 202. The credential revocation
// controller does the rest and reports it in the condition; admission refuses new credentials meanwhile.
// The request is a status write, so a second one racing the first sees it and is refused.
type RevokeREST struct {
	status *hcpregistry.StatusREST
}

var (
	_ rest.NamedCreater = &RevokeREST{}
	_ rest.Storage      = &RevokeREST{}
)

// NewRevokeREST returns hcpclusters/revokecredentials, writing through the clusters' /status storage.
func NewRevokeREST(status *hcpregistry.StatusREST) *RevokeREST { return &RevokeREST{status: status} }

// New implements rest.Storage.
func (r *RevokeREST) New() runtime.Object { return &hcp.CredentialRevocation{} }

// Destroy implements rest.Storage; the store of hcpclusters owns the etcd client.
func (r *RevokeREST) Destroy() {}

// Create asks for the revocation of every break-glass credential of cluster name issued so far.
func (r *RevokeREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	revocation, ok := obj.(*hcp.CredentialRevocation)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a CredentialRevocation, got %T", obj))
	}
	if revocation.Name != "" && revocation.Name != name {
		return nil, apierrors.NewInvalid(hcp.Kind("CredentialRevocation"), revocation.Name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "name"), revocation.Name, "must be empty or the name of the cluster, "+name)})
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj); err != nil {
			return nil, err
		}
	}
	request := func(ctx context.Context, _, old runtime.Object) (runtime.Object, error) {
		cluster := old.(*hcp.HCPCluster).DeepCopy()
		if state := cluster.Status.ProvisioningState; state != hcp.ProvisioningStateSucceeded {
			return nil, apierrors.NewConflict(hcp.Resource("hcpclusters"), name, fmt.Errorf(
				"the cluster is %s; credentials can be revoked only while it is Succeeded", orNotAccepted(state)))
		}
		if meta.IsStatusConditionTrue(cluster.Status.Conditions, hcp.ConditionRevokingCredentials) {
			return nil, apierrors.NewConflict(hcp.Resource("hcpclusters"), name, fmt.Errorf(
				"a revocation of the cluster's credentials is in progress; try again when RevokingCredentials is False"))
		}
		meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
			Type: hcp.ConditionRevokingCredentials, Status: metav1.ConditionTrue, Reason: hcp.RevocationRequested,
			Message: "the revocation of every break-glass credential issued so far was requested", ObservedGeneration: cluster.Generation,
		})
		return cluster, nil
	}
	var dryRun []string
	if options != nil {
		dryRun = options.DryRun
	}
	if _, _, err := r.status.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, request), nil, rest.ValidateAllObjectUpdateFunc,
		false, &metav1.UpdateOptions{DryRun: dryRun, FieldManager: "revokecredentials"}); err != nil {
		return nil, err
	}
	return &metav1.Status{
		Status: metav1.StatusSuccess, Code: http.StatusAccepted, Reason: "Accepted",
		Message: fmt.Sprintf("revoking the break-glass credentials of HCPCluster %s; its RevokingCredentials condition turns False when they are revoked", name),
	}, nil
}

func orNotAccepted(state hcp.ProvisioningState) string {
	if state == "" {
		return "not yet Accepted"
	}
	return string(state)
}
