package hcpcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// RevokeREST serves hcpclusters/revokecredentials: a POST (RBAC verb create), as ARM's revokeCredentials
// action is, that turns the cluster's RevokingCredentials condition True and answers 202 Accepted with a
// Status. The credential revocation controller does the rest and reports it in the condition; admission
// refuses new credentials meanwhile. The request is a status write, so a second one racing the first sees
// it and is refused. It is a connecter because the generic create handler answers 201 whatever happened:
// here nothing is created, a long operation is accepted.
type RevokeREST struct {
	status  *hcpregistry.StatusREST
	decoder runtime.Decoder
}

var (
	_ rest.Connecter = &RevokeREST{}
	_ rest.Storage   = &RevokeREST{}
)

// maxRevocationBody bounds the body of a revocation request, which carries a name at most.
const maxRevocationBody = 64 << 10

// NewRevokeREST returns hcpclusters/revokecredentials, writing through the clusters' /status storage;
// decoder reads the request's CredentialRevocation.
func NewRevokeREST(status *hcpregistry.StatusREST, decoder runtime.Decoder) *RevokeREST {
	return &RevokeREST{status: status, decoder: decoder}
}

// ConnectMethods implements rest.Connecter.
func (r *RevokeREST) ConnectMethods() []string { return []string{http.MethodPost} }

// NewConnectOptions implements rest.Connecter: the request has no query options.
func (r *RevokeREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// Connect answers a revocation request of cluster name.
func (r *RevokeREST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, maxRevocationBody+1))
		if err != nil {
			responder.Error(apierrors.NewBadRequest(fmt.Sprintf("reading the request: %v", err)))
			return
		}
		if len(body) > maxRevocationBody {
			responder.Error(apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("a revocation request is at most %d bytes", maxRevocationBody)))
			return
		}
		revocation := &hcp.CredentialRevocation{}
		if len(bytes.TrimSpace(body)) > 0 {
			obj, _, err := r.decoder.Decode(body, nil, revocation)
			if err != nil {
				responder.Error(apierrors.NewBadRequest(fmt.Sprintf("the body must be a CredentialRevocation: %v", err)))
				return
			}
			var ok bool
			if revocation, ok = obj.(*hcp.CredentialRevocation); !ok {
				responder.Error(apierrors.NewBadRequest(fmt.Sprintf("the body must be a CredentialRevocation, not %T", obj)))
				return
			}
		}
		var dryRun []string
		if req.URL.Query().Has("dryRun") {
			dryRun = req.URL.Query()["dryRun"]
		}
		status, err := r.revoke(ctx, name, revocation, dryRun)
		if err != nil {
			responder.Error(err)
			return
		}
		responder.Object(http.StatusAccepted, status)
	}), nil
}

// New implements rest.Storage.
func (r *RevokeREST) New() runtime.Object { return &hcp.CredentialRevocation{} }

// Destroy implements rest.Storage; the store of hcpclusters owns the etcd client.
func (r *RevokeREST) Destroy() {}

// revoke asks for the revocation of every break-glass credential of cluster name issued so far.
func (r *RevokeREST) revoke(ctx context.Context, name string, revocation *hcp.CredentialRevocation, dryRun []string) (*metav1.Status, error) {
	if revocation.Name != "" && revocation.Name != name {
		return nil, apierrors.NewInvalid(hcp.Kind("CredentialRevocation"), revocation.Name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "name"), revocation.Name, "must be empty or the name of the cluster, "+name)})
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
