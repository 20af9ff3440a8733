package clusterinspection

import (
	"context"
	"testing"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/hcp/registrytest"
)

// TestCreateRecordsWhoAskedAndWhy: the server, not the client, names who asked, and the request's audit
// event carries the cluster, the view and the reason.
func TestCreateRecordsWhoAskedAndWhy(t *testing.T) {
	ctx := request.WithUser(context.Background(), &user.DefaultInfo{Name: "sre@example.com"})
	ctx = audit.WithAuditContext(ctx)
	audit.AuditContextFrom(ctx).Init(audit.RequestAuditConfig{Level: auditinternal.LevelMetadata}, nil)
	ci := &hcp.ClusterInspection{Spec: hcp.ClusterInspectionSpec{ClusterName: "dev", View: hcp.InspectionViewEvents,
		Reason: "ICM-1", TTLSeconds: ptr.To[int64](60), Username: "someone-else"}}
	ci.Namespace = "team-a"
	NewStrategy(registrytest.Scheme).PrepareForCreate(ctx, ci)

	if ci.Spec.Username != "sre@example.com" {
		t.Errorf("spec.username is %q, want the requesting user, whatever the client sent", ci.Spec.Username)
	}
	if ci.Status.Phase != hcp.ClusterInspectionPhasePending || ci.Status.ExpirationTimestamp == nil || len(ci.Finalizers) != 1 {
		t.Errorf("a new inspection is %s, expiring %v, finalizers %v; want Pending, with its expiry and the delivery finalizer",
			ci.Status.Phase, ci.Status.ExpirationTimestamp, ci.Finalizers)
	}
	got := audit.AuditContextFrom(ctx).GetEventAnnotations()
	for key, want := range map[string]string{AuditAnnotationCluster: "team-a/dev", AuditAnnotationView: "events", AuditAnnotationReason: "ICM-1"} {
		if got[key] != want {
			t.Errorf("audit annotation %s is %q, want %q (all: %v)", key, got[key], want, got)
		}
	}
}
