package credentialrevocation

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

// revoked is an agent's report that the CertificateRevocationRequest called name revoked the old signer.
func revoked(name string) source.BundleStatus {
	return source.BundleStatus{Generation: 1, Status: &protocol.ManifestBundleStatus{
		Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		ResourceStatus: []protocol.ManifestCondition{{
			ResourceMeta: protocol.ManifestResourceMeta{Kind: "CertificateRevocationRequest", Name: name},
			StatusFeedback: protocol.StatusFeedbackResult{Values: []protocol.FeedbackValue{{Name: render.FeedbackPreviousCertificatesRevoked,
				Value: protocol.FieldValue{Type: protocol.ValueString, String: ptr.To("True")}}}},
			Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		}},
	}}
}

// A second revocation is done when its own request revoked the signer, not when the agent still reports
// the first one's, which it held until the second replaced it.
func TestRevocationIsDoneByItsOwnRequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		report     source.BundleStatus
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{name: "the first request's report", report: revoked("break-glass-100"), wantStatus: metav1.ConditionTrue, wantReason: v1alpha1.RevocationRequested},
		{name: "its own request's report", report: revoked("break-glass-200"), wantStatus: metav1.ConditionFalse, wantReason: v1alpha1.CredentialsRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fixtures.HCPCluster("ns", "dev")
			c.Generation = 1
			setRevoking(c, metav1.ConditionTrue, v1alpha1.RevocationRequested, "asked")
			progress(c, tc.report, true, "consumer-1", "break-glass-200")
			r := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionRevokingCredentials)
			if r == nil || r.Status != tc.wantStatus || r.Reason != tc.wantReason {
				t.Errorf("RevokingCredentials %+v, want %s %s", r, tc.wantStatus, tc.wantReason)
			}
		})
	}
}
