package breakglasscredential

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// limitPerCluster makes store refuse a credential when its cluster already has max that are, or may
// become, valid certificates. A break-glass credential is cluster-admin that bypasses the cluster's
// identity provider, so few are kept at a time. Creates for one cluster count and write one at a
// time, under a lock in etcd, so that racing creates cannot all count one short of the limit.
func limitPerCluster(store *genericregistry.Store, c *claims.Store, max int) hcpregistry.BeginCreate {
	return func(ctx context.Context, o runtime.Object, _ []string) (genericregistry.FinishFunc, error) {
		credential := o.(*hcp.BreakglassCredential)
		unlock, err := c.Lock(ctx, "breakglasscredentials/"+credential.Namespace+"/"+credential.Spec.ClusterName)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		n, err := countUnexpired(ctx, store, credential.Spec.ClusterName, time.Now())
		if err == nil && n >= max {
			err = apierrors.NewForbidden(hcp.Resource("breakglasscredentials"), credential.Name, fmt.Errorf(
				"HCPCluster %s already has %d unexpired break-glass credentials and at most %d are allowed; delete one or wait for one to expire",
				credential.Spec.ClusterName, n, max))
		}
		if err != nil {
			unlock()
			return nil, err
		}
		// Held until the credential is written or its write fails.
		return func(context.Context, bool) { unlock() }, nil
	}
}

// countUnexpired counts the credentials of the cluster in the request's namespace that are Pending or
// Issued and not past their expiry, as stored now (not as a cache saw them).
func countUnexpired(ctx context.Context, store *genericregistry.Store, clusterName string, now time.Time) (int, error) {
	list, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.clusterName", clusterName)})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, credential := range list.(*hcp.BreakglassCredentialList).Items {
		if Unexpired(&credential, now) {
			n++
		}
	}
	return n, nil
}

// Unexpired tells whether a credential is, or may become, a valid certificate.
func Unexpired(credential *hcp.BreakglassCredential, now time.Time) bool {
	switch credential.Status.Phase {
	case hcp.BreakglassCredentialPhaseExpired, hcp.BreakglassCredentialPhaseRevoked, hcp.BreakglassCredentialPhaseFailed:
		return false
	}
	return credential.Status.ExpirationTimestamp == nil || now.Before(credential.Status.ExpirationTimestamp.Time)
}
